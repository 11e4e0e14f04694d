"""Differential cases: command_list_begin / command_list_ok_begin / command_list_end."""

from mpdtest import case, differential_table

BEGIN = "command_list_begin\n"
OK_BEGIN = "command_list_ok_begin\n"
END = "command_list_end\n"

test_command_list = differential_table({
    # Both forms, all commands succeed.
    "begin, three pings": case(BEGIN + "ping\nping\nping\n" + END, replies=1),
    "ok_begin, three pings": case(OK_BEGIN + "ping\nping\nping\n" + END, replies=1),
    "ok_begin with output": case(OK_BEGIN + "ping\nstatus\nping\n" + END, replies=1),
    # The third command fails: earlier results stay, the rest is skipped, no final OK.
    "begin, third unknown": case(BEGIN + "ping\nping\nfoo\nping\n" + END, replies=1),
    "ok_begin, third unknown": case(OK_BEGIN + "ping\nping\nfoo\nping\n" + END, replies=1),
    "ok_begin, third wrong arg count": case(OK_BEGIN + "ping\nstatus\nping x\nping\n" + END,
                                            replies=1),
    "ok_begin, third bad quoting": case(OK_BEGIN + 'ping\nping\nping "x\nping\n' + END,
                                        replies=1),
    "ok_begin, third has 64 arguments": case(OK_BEGIN + "ping\nping\nping" + " a" * 64
                                             + "\nping\n" + END, replies=1),
    "begin, third command fails, fourth not run": case(
        OK_BEGIN + "subscribe a\nping\nfoo\nsubscribe b\n" + END + "channels\n", replies=2),
    "ok_begin, third invalid word character (closes)": OK_BEGIN + "ping\nping\npi-ng\nping\n"
    + END + "ping\n",
    # Empty lists.
    "empty begin": case(BEGIN + END, replies=1),
    "empty ok_begin": case(OK_BEGIN + END, replies=1),
    # Nesting and stray ends.
    "nested begin": case(BEGIN + BEGIN + END, replies=1),
    "nested ok_begin after a command": case(OK_BEGIN + "ping\n" + OK_BEGIN + "ping\n" + END,
                                            replies=1),
    "end outside a list": case(END, replies=1),
    "end with an argument inside a list": case(BEGIN + "ping\ncommand_list_end x\nping\n"
                                               "command_list_end \n", replies=1),
    "begin with an argument": case("command_list_begin x\nping\n" + END, replies=3),
    "end with trailing whitespace": case(OK_BEGIN + "ping\ncommand_list_end \t\r\n", replies=1),
    "list then more commands": case(OK_BEGIN + "ping\n" + END + "ping\n", replies=2),
    "two lists back to back": case(OK_BEGIN + "ping\n" + END + BEGIN + "foo\n" + END, replies=2),
    # Special lines inside a list.
    "noidle inside a list is ignored": case(OK_BEGIN + "noidle\nping\n" + END, replies=1),
    "empty line inside a list (closes)": BEGIN + "\nping\n" + END,
    "uppercase line inside a list (closes)": OK_BEGIN + "ping\nPing\nping\n" + END,
    "close inside a list": OK_BEGIN + "ping\nclose\nping\n" + END,
    "list left open": OK_BEGIN + "ping\n",
    "list split across writes": case([OK_BEGIN + "pi", "ng\nping\n", END], replies=1),
    # mpc's pattern (tags.c): narrow the tag set, then the real command.
    "mpc tagtypes pattern": case(OK_BEGIN + "tagtypes clear\ntagtypes enable artist\n"
                                 "tagtypes enable title\ntagtypes\n" + END, replies=1),
    # mpc 0.34, byte for byte (`mpc playlist`, `mpc ls Broken`).
    "mpc playlist": case(BEGIN + 'tagtypes "clear"\ntagtypes enable Artist AlbumArtist Title '
                         "Name Composer Performer\nplaylistinfo\n" + END, replies=1),
    "mpc ls": case(BEGIN + 'tagtypes "clear"\n' + END + 'lsinfo "Broken"\n', replies=2),
    "mpc status": case(OK_BEGIN + "status\ncurrentsong\n" + END, replies=1),
    "tagtypes error inside a list": case(OK_BEGIN + "tagtypes clear\ntagtypes enable bogus\n"
                                         "tagtypes\n" + END + "tagtypes\n", replies=2),
})
