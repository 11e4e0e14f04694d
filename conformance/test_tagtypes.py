"""Differential cases: tagtypes (list, clear/all/enable/disable, errors) and binarylimit."""

from mpdtest import case, differential_table

OK_BEGIN = "command_list_ok_begin\n"
END = "command_list_end\n"

test_tagtypes = differential_table({
    "list": case("tagtypes\n", replies=1),
    "clear then list": case("tagtypes clear\ntagtypes\n", replies=2),
    "clear, all, list": case("tagtypes clear\ntagtypes all\ntagtypes\n", replies=3),
    "disable two": case("tagtypes disable artist album\ntagtypes\n", replies=2),
    "disable mixed case": case("tagtypes disable ArTiSt MUSICBRAINZ_trackid\ntagtypes\n",
                               replies=2),
    "enable keeps enum order": case("tagtypes clear\ntagtypes enable title artist date\n"
                                    "tagtypes\n", replies=3),
    "enable twice": case("tagtypes clear\ntagtypes enable artist artist\ntagtypes\n",
                         replies=3),
    "enable comment (not in metadata_to_use)": case(
        "tagtypes clear\ntagtypes enable comment\ntagtypes\n", replies=3),
    "disable comment": case("tagtypes disable comment\ntagtypes\n", replies=2),
    "state is per connection": case([("a", "tagtypes clear\n"), ("b", "tagtypes\n"),
                                     ("a", "tagtypes\n")], replies=4),
    # mpc (src/tags.c) and ncmpc send these inside command lists.
    "mpc: clear + enable in a list": case(
        OK_BEGIN + "tagtypes clear\ntagtypes enable artist\ntagtypes enable albumartist\n"
        "tagtypes enable title\n" + END + "tagtypes\n", replies=2),
    "ncmpc: all + list, then clear + enable": case(
        OK_BEGIN + "tagtypes all\ntagtypes\n" + END
        + OK_BEGIN + "tagtypes clear\ntagtypes enable Artist Album Title Track Name Genre "
        "Date Composer Performer Disc\n" + END + "tagtypes\n", replies=3),
    "plain begin form": case("command_list_begin\ntagtypes clear\ntagtypes enable artist\n"
                             "tagtypes\n" + END, replies=1),
    # Errors.
    "clear with an argument": case("tagtypes clear x\n", replies=1),
    "all with an argument": case("tagtypes all x\n", replies=1),
    "enable without names": case("tagtypes enable\n", replies=1),
    "disable without names": case("tagtypes disable\n", replies=1),
    "enable bogus": case("tagtypes enable bogus\n", replies=1),
    "enable file (not a tag)": case("tagtypes enable file\n", replies=1),
    "enable empty name": case('tagtypes enable ""\n', replies=1),
    "unknown sub command": case("tagtypes foo\n", replies=1),
    "sub command is case-sensitive": case("tagtypes CLEAR\n", replies=1),
    "enable good then bogus is all-or-nothing": case(
        "tagtypes clear\ntagtypes enable artist bogus title\ntagtypes\n", replies=3),
    "disable good then bogus is all-or-nothing": case(
        "tagtypes disable artist bogus\ntagtypes\n", replies=2),
    "error in a list after clear": case(
        OK_BEGIN + "tagtypes clear\ntagtypes enable bogus\ntagtypes\n" + END + "tagtypes\n",
        replies=2),
})

test_tagtypes_affect_song_output = differential_table({
    # Needs lsinfo; skipped automatically until the system under test lists it.
    "lsinfo with all tags": case('lsinfo "Old Tags"\n', replies=1),
    "lsinfo after clear": case('tagtypes clear\nlsinfo "Old Tags"\n', replies=2),
    "lsinfo with artist only": case('tagtypes clear\ntagtypes enable artist\n'
                                    'lsinfo "Old Tags"\n', replies=3),
})

test_binarylimit = differential_table({
    "63 is too small": "binarylimit 63\n",
    "64 is the minimum": "binarylimit 64\n",
    "0": "binarylimit 0\n",
    "default 8192": "binarylimit 8192\n",
    # 0.23.12 accepts up to max_output_buffer_size + 12288 bytes (8 MiB + 12 KiB by
    # default), not "- 4096" as its documentation suggests.
    "8 MiB": "binarylimit 8388608\n",
    "8 MiB + 12288 is the maximum": "binarylimit 8400896\n",
    "one more is too large": "binarylimit 8400897\n",
    "2^31": "binarylimit 2147483648\n",
    "2^64": "binarylimit 18446744073709551616\n",
    "minus zero": "binarylimit -0\n",
    "leading zero": "binarylimit 064\n",
    "huge": "binarylimit 99999999999999999999\n",
    "negative": "binarylimit -1\n",
    "not a number": "binarylimit x\n",
    "fraction": "binarylimit 1.5\n",
    "trailing garbage": "binarylimit 100x\n",
    "leading plus": "binarylimit +100\n",
    "leading spaces in quotes": 'binarylimit " 100"\n',
    "hex": "binarylimit 0x100\n",
    "empty": 'binarylimit ""\n',
}, replies=1)
