"""Differential cases: the queue with the player stopped.

The queue is shared by every connection of a server, so each case starts with
``clear`` and ends by restoring the modes.  Cases are ``queue=True``: ids and the
queue version compare relative to where the case started (``Id: id1`` is the
case's first song, ``playlist: v+2`` two changes later), and ``{id1}``, ``{v+1}``
in what a case sends stand for those numbers on each server.
"""

import mpdtest
from mpdtest import case, differential_table

ND = '"Numbers & Dates"'          # ten songs, a.mp3 … j.mp3
TF = '"Tag Formats"'              # eight songs
EA = '"Embedded Art"'             # two songs
ROOT = '"root song.mp3"'
RESET = "clear\nrepeat 0\nrandom 0\nsingle 0\nconsume 0\n"


def drop_playing_lines(line: bytes):
    """Status lines that depend on how far playback got: dropped."""
    return None if line.split(b":")[0] in (b"bitrate", b"audio", b"duration") and b": " in line else line


def q(body: str, **options):
    """A queue case: clear, the body, then the modes back to their defaults."""
    # Wait for every reply: a server that was playing may take longer than the usual quiet period.
    return case([("a", "clear\n" + body + RESET, "wait")], queue=True, **options)


test_add = differential_table({
    "add a directory: one version bump": q(f"add {ND}\nstatus\nplaylistinfo\n"),
    "add a file": q(f"add {ROOT}\nplaylistinfo\nstatus\n"),
    "add a file twice: two ids": q(f"add {ROOT}\nadd {ROOT}\nplaylistid\n"),
    "add everything (root)": q('add ""\nstatus\nplaylistinfo 1999:\n'),
    "add / means everything": q("add /\nstatus\n"),
    "add missing": q('add "nope"\nadd "Numbers & Dates/zz.mp3"\nstatus\n'),
    "add with a trailing slash": q(f'add "Numbers & Dates/"\nstatus\n'),
    "add an absolute path outside the music directory (TCP)": q('add "/etc/passwd"\nadd "file:///etc/passwd"\n'),
    "add a bad file:// URI": q('add "file://etc"\n'),
    "add an unsupported scheme": q('add "foo://bar"\n'),
    "add with absolute position": q(f"add {ND}\nadd {EA} 3\nplaylist\nstatus\n"),
    "add with position at the end": q(f"add {ND}\nadd {EA} 10\nplaylist\n"),
    "add with position past the end": q(f"add {ND}\nadd {EA} 11\nplaylist\n"),
    "add with bad position": q(f"add {ND}\nadd {EA} x\nadd {EA} -x\nadd {EA} 1x\n"),
    "add relative without current song": q(f"add {ND}\nadd {EA} +0\nadd {EA} -0\n"),
    "add relative to the current song": q(f"add {ND}\nplay 4\nstop\nadd {EA} +0\nadd {EA} -0\n"
                                          f"add {ROOT} +2\nplaylist\nstatus\nadd {ROOT} +9\nadd {ROOT} -6\n"),
    "add with position bumps twice": q(f"add {ND}\nadd {EA} 0\nstatus\nplchangesposid {{v+1}}\n"),
    "addid": q(f"addid {ROOT}\naddid {ROOT}\nplaylistinfo\nstatus\n"),
    "addid with position": q(f"add {ND}\naddid {ROOT} 2\naddid {ROOT} 12\naddid {ROOT} 13\nplaylist\nstatus\n"),
    "addid of a directory or missing song": q(f"addid {ND}\naddid nope.mp3\naddid \"\"\nstatus\n"),
    "addid relative without current song": q(f"addid {ROOT} +0\nstatus\n"),
    "add argument counts": q("add\naddid\nadd a b c\n"),
    "findadd and searchadd bump the version per song": q("findadd album Numbers\nstatus\n"
                                                         "searchadd album numbers position 0\nstatus\n"
                                                         "plchangesposid {v+12}\n"),
})

test_delete = differential_table({
    "delete a position": q(f"add {ND}\ndelete 3\nplaylist\nstatus\n"),
    "delete a range": q(f"add {ND}\ndelete 2:5\nplaylist\nstatus\n"),
    "delete an open range": q(f"add {ND}\ndelete 7:\nplaylist\nstatus\n"),
    "delete -1 deletes everything": q(f"add {ND}\ndelete -1\nstatus\n"),
    "delete at the length is a no-op": q(f"add {ND}\ndelete 10\ndelete 10:12\nstatus\n"),
    "delete past the end": q(f"add {ND}\ndelete 11\ndelete 11:12\nstatus\n"),
    "delete a range clipped": q(f"add {ND}\ndelete 8:20\nplaylist\n"),
    "delete bad ranges": q(f"add {ND}\ndelete x\ndelete 3:1\ndelete -2\ndelete :3\ndelete 1:x\n"),
    "deleteid": q(f"add {ND}\ndeleteid {{id3}}\nplaylistid\nstatus\n"),
    "deleteid unknown and bad": q(f"add {ND}\ndeleteid {{id11}}\ndeleteid x\ndeleteid -1\n"),
    "id 0 is position 0 (mpd quirk)": q(f"deleteid 0\nplayid 0\nplaylistid 0\nprioid 1 0\nswapid 0 0\n"
                                        f"add {ND}\nplaylistid 0\nprioid 5 0\nswapid 0 {{id3}}\nplaylist\n"
                                        f"deleteid 0\nplaylist\nstatus\n"),
    "delete the current song while stopped": q(f"add {ND}\nplay 3\nstop\ndelete 3\nstatus\n"),
    "delete before the current song": q(f"add {ND}\nplay 5\nstop\ndelete 1:3\nstatus\n"),
    "clear keeps counting ids": q(f"add {EA}\nclear\nadd {EA}\nplaylistinfo\nstatus\n"),
    "clear of an empty queue bumps": q("clear\nclear\nstatus\n"),
})

test_move = differential_table({
    "move one": q(f"add {ND}\nmove 1 5\nplaylist\nstatus\n"),
    "move back": q(f"add {ND}\nmove 7 0\nplaylist\n"),
    "move a range forward": q(f"add {ND}\nmove 1:4 6\nplaylist\nplchangesposid {{v+1}}\n"),
    "move a range back": q(f"add {ND}\nmove 6:9 2\nplaylist\n"),
    "move onto itself": q(f"add {ND}\nmove 3 3\nstatus\n"),
    "move to the last slot": q(f"add {ND}\nmove 2:4 8\nmove 2:4 9\nplaylist\n"),
    "move errors": q(f"add {ND}\nmove 10 0\nmove 0 10\nmove 3: 0\nmove -1 0\nmove 9:11 0\n"
                     f"move x 0\nmove 0 x\nmove 2:1 0\n"),
    "move relative without current song": q(f"add {ND}\nmove 0 +1\nmove 0 -0\n"),
    "move relative to the current song": q(f"add {ND}\nplay 4\nstop\nmove 0 +0\nplaylist\nmove 9 -1\n"
                                           f"playlist\nmove 1:3 +2\nplaylist\nstatus\nmove 3 +0\nmove 0 -5\n"
                                           f"move 0 +9\n"),
    "move keeps the current song": q(f"add {ND}\nplay 2\nstop\nmove 2 7\nstatus\nmove 0:2 5\nstatus\n"
                                     f"move 6:8 0\nstatus\n"),
    "moveid": q(f"add {ND}\nmoveid {{id1}} 9\nmoveid {{id2}} 0\nplaylist\nmoveid 0 1\nmoveid x 1\n"
                f"moveid {{id3}} 10\n"),
    "swap": q(f"add {ND}\nswap 0 9\nswap 3 3\nplaylist\nstatus\nplchangesposid {{v+1}}\n"),
    "swap errors": q(f"add {ND}\nswap 0 10\nswap 10 0\nswap x 0\nswap 0 -1\n"),
    "swap keeps the current song": q(f"add {ND}\nplay 2\nstop\nswap 2 8\nstatus\nswap 0 8\nstatus\n"),
    "swapid": q(f"add {ND}\nswapid {{id1}} {{id10}}\nplaylist\nswapid {{id1}} 0\nswapid x 1\n"),
})

test_priorities_and_shuffle = differential_table({
    "prio": q(f"add {ND}\nprio 10 2\nprio 20 4:6\nplaylistinfo\nstatus\nplchangesposid {{v+1}}\n"),
    "prio open range and -1": q(f"add {ND}\nprio 3 8:\nprio 1 -1\nplaylist\nplaylistinfo 8:\n"),
    "prio several ranges": q(f"add {ND}\nprio 5 0 2 4:6\nplaylistinfo\n"),
    "prio same value still bumps": q(f"add {ND}\nprio 0 0\nstatus\n"),
    "prio errors": q(f"add {ND}\nprio 256 0\nprio -1 0\nprio x 0\nprio 1 11\nprio 1 10\nprio 1 x\n"
                     f"prio 1\nstatus\n"),
    "prio error after a range applied": q(f"add {ND}\nprio 9 1 20\nplaylistinfo 1\n"),
    "prioid": q(f"add {ND}\nprioid 7 {{id2}} {{id4}}\nplaylistinfo 1:4\nprioid 7 0\nprioid 256 {{id1}}\n"),
    "random with distinct priorities is deterministic": q(
        f"add {ND}\nprio 40 7\nprio 30 2\nprio 20 5\nprio 10 0\nrandom 1\nstatus\nplay\npause 1\nstatus\n"
        f"next\npause 1\nstatus\nnext\npause 1\nstatus\nstop\nplaylistinfo\n", normalize=drop_playing_lines),
    "shuffle of one song or an empty range": q(f"add {ROOT}\nshuffle\nshuffle 0:0\nstatus\n"),
    "shuffle errors": q(f"add {ND}\nshuffle 11:12\nshuffle x\nshuffle 3:1\nstatus\n"),
    "shuffle forgets the current song when stopped": q(f"add {ND}\nplay 4\nstop\nshuffle 9:10\nstatus\n"
                                                       f"shuffle 0:2\nstatus\n"),
})

test_listing = differential_table({
    "playlistinfo forms": q(f"add {ND}\nplaylistinfo\nplaylistinfo 3\nplaylistinfo 2:4\n"
                            f"playlistinfo 8:\nplaylistinfo -1\n"),
    "playlistinfo bounds": q(f"add {ND}\nplaylistinfo 10\nplaylistinfo 11\nplaylistinfo 10:\n"
                             f"playlistinfo 9:20\nplaylistinfo 11:\nplaylistinfo x\nplaylistinfo 2:1\n"),
    "playlistinfo on an empty queue": q("playlistinfo\nplaylistinfo 0\nplaylistinfo 1\nplaylist\n"),
    "playlistid": q(f"add {EA}\nplaylistid {{id2}}\nplaylistid\nplaylistid 0\nplaylistid x\n"),
    "playlist": q(f"add {TF}\nplaylist\n"),
    "tags of every format in the queue": q(f"add {TF}\nplaylistinfo\n"),
    "tagtypes hide queue tags": q(f"add {EA}\ntagtypes clear\nplaylistinfo\ntagtypes all\n"),
    "currentsong with no current song": q(f"add {ND}\ncurrentsong\n"),
    "currentsong stopped keeps the song": q(f"add {ND}\nplay 6\nstop\ncurrentsong\n"),
    "playlistfind": q(f"add {ND}\nadd {TF}\nplaylistfind title \"Track x\"\nplaylistfind artist numbers\n"),
    "playlistsearch folds case": q(f"add {ND}\nplaylistsearch artist numbers\n"),
    "playlistfind expression": q(f"add {ND}\nadd {EA}\nplaylistfind \"(file =~ 'Art')\"\n"
                                 f"playlistsearch \"(!(artist contains 'NUMB'))\"\n"),
    "playlistfind base": q(f"add {ND}\nadd {EA}\nplaylistfind base {EA}\n"),
    "playlistfind AudioFormat never matches queue songs": q(
        f"add {ND}\nplaylistfind \"(AudioFormat == '8000:24:1')\"\nplaylistfind \"(AudioFormat =~ '*:*:*')\"\n"),
    "playlistfind errors": q(f"add {ND}\nplaylistfind\nplaylistfind title\nplaylistfind \"(foo == 'x')\"\n"
                             f"playlistfind title x sort Title\nplaylistsearch any x window 0:1\n"),
})

test_plchanges = differential_table({
    "plchanges after adds": q(f"add {EA}\nadd {ROOT}\nplchanges {{v+1}}\nplchanges {{v+2}}\n"
                              f"plchanges {{v+3}}\n"),
    "plchanges version 0 lists everything": q(f"add {EA}\nplchangesposid 0\n"),
    "plchanges of a future version lists everything": q(f"add {EA}\nplchangesposid {{v+9}}\n"),
    "plchanges after a delete": q(f"add {ND}\ndelete 7\nplchangesposid {{v+2}}\n"),
    "plchanges after a delete at the end": q(f"add {ND}\ndelete 9\nplchangesposid {{v+2}}\nstatus\n"),
    "plchanges after swap and move": q(f"add {ND}\nswap 1 8\nplchangesposid {{v+2}}\nmove 3 6\n"
                                       f"plchangesposid {{v+3}}\n"),
    "plchanges after prio": q(f"add {ND}\nprio 4 3:5\nplchangesposid {{v+2}}\n"),
    "plchanges after rangeid": q(f"add {ND}\nrangeid {{id4}} 0.1:0.3\nplchangesposid {{v+2}}\n"),
    "plchanges with a range": q(f"add {ND}\nplchangesposid {{v+1}} 2:4\nplchanges {{v+1}} 8:\n"
                                f"plchangesposid {{v+1}} 9\nplchangesposid {{v+1}} 20:30\n"
                                f"plchangesposid {{v+1}} -1\n"),
    "plchanges errors": q("plchanges\nplchanges x\nplchanges 1 x\nplchanges -1\nplchanges 1 3:1\n"
                          "plchangesposid 1x\n"),
    "plchanges after shuffle": q(f"add {ROOT}\nadd {ROOT}\nshuffle\nplchangesposid {{v+3}}\n",
                                 normalize=lambda line: None if line.startswith(b"Id: ") else line),
})

test_range_and_tags = differential_table({
    "rangeid": q(f"add {ND}\nrangeid {{id1}} 0.1:0.3\nrangeid {{id2}} 0.25:\nrangeid {{id3}} :0.2\n"
                 f"playlistinfo 0:4\nstatus\n"),
    "rangeid clears with a colon": q(f"add {ND}\nrangeid {{id1}} 0.1:0.3\nrangeid {{id1}} :\nplaylistinfo 0\n"),
    "rangeid end at or past the duration is open": q(f"add {ND}\nrangeid {{id1}} 0.1:9\nplaylistinfo 0\n"),
    "rangeid bad ranges": q(f"add {ND}\nrangeid {{id1}} 1\nrangeid {{id1}} 2:1\nrangeid {{id1}} 1:1\n"
                            f"rangeid {{id1}} -1:2\nrangeid {{id1}} a:b\nrangeid {{id1}} 1:2x\n"
                            f"rangeid {{id1}} 0.1:-2\nrangeid x 1:2\nrangeid 0 1:2\n"),
    "rangeid start past the duration": q(f"add {ND}\nrangeid {{id1}} 99:\nrangeid {{id1}} 0.504:\n"
                                         f"playlistinfo 0\n"),
    "addtagid and cleartagid on local files": q(f"add {ND}\naddtagid {{id1}} artist x\ncleartagid {{id1}}\n"
                                                f"cleartagid {{id1}} artist\naddtagid {{id1}} foo x\n"
                                                f"cleartagid {{id1}} foo\naddtagid 0 artist x\n"
                                                f"cleartagid x\n"),
})

test_options = differential_table({
    "repeat random single consume": q("repeat 1\nrandom 1\nsingle 1\nconsume 1\nstatus\nsingle oneshot\n"
                                      "status\n"),
    "option errors": q("repeat 2\nrepeat x\nrandom -1\nsingle 2\nsingle ONESHOT\nconsume oneshot\nrepeat\n"
                       "status\n"),
    "booleans as strtol reads them": q('repeat " 1"\nstatus\nrepeat +0\nrandom 01\nstatus\nrandom -0\n'),
    "options do not bump the version": q(f"add {ND}\nrepeat 1\nsingle 1\nconsume 1\nstatus\n"),
    "random on with nothing playing forgets the current song": q(f"add {ND}\nplay 3\nstop\nrandom 1\nstatus\n"),
    "nextsong while stopped": q(f"add {ND}\nplay 9\nstop\nstatus\nrepeat 1\nstatus\nsingle 1\nstatus\n"),
    "crossfade": case("crossfade 3\nstatus\ncrossfade 0\nstatus\ncrossfade 2.5\ncrossfade -1\ncrossfade x\n",
                      replies="auto", queue=True),
    "mixrampdb and mixrampdelay": case("mixrampdb -17.5\nmixrampdelay 2.25\nstatus\nmixrampdelay nan\n"
                                       "status\nmixrampdb 0.1\nstatus\nmixrampdb x\nmixrampdelay 1x\n"
                                       "mixrampdb 0\nmixrampdelay -1\nstatus\n", replies="auto", queue=True),
    "replay gain mode": case("replay_gain_status\nreplay_gain_mode album\nreplay_gain_status\n"
                             "replay_gain_mode auto\nreplay_gain_status\nreplay_gain_mode Track\n"
                             "replay_gain_mode off\nreplay_gain_status\n", replies="auto"),
})

test_queue_idle = differential_table({
    "add raises playlist": case([("b", "idle\n"), ("a", f"clear\n"), ("b", "idle playlist\n"),
                                 ("a", f"add {ND}\n"), ("b", "idle\n"), ("a", RESET), ("b", "noidle\n")]),
    "options raise options": case([("b", "idle options\n"), ("a", "repeat 1\n"), ("b", "idle options\n"),
                                   ("a", "repeat 1\n"), ("b", "noidle\n"), ("a", "repeat 0\n")]),
    "crossfade raises options": case([("b", "idle options\n"), ("a", "crossfade 0\n"), ("b", "noidle\n")]),
    "replay_gain_mode raises options": case([("b", "idle options\n"), ("a", "replay_gain_mode off\n"),
                                             ("b", "noidle\n")]),
    "failed commands raise nothing": case([("a", "clear\n"), ("b", "idle\n"), ("a", "delete 0\nmove 0 1\n"),
                                           ("b", "noidle\n")]),
})

test_outputs_and_volume = differential_table({
    "outputs": "outputs\n",
    "enable disable toggle": case("disableoutput 0\noutputs\ndisableoutput 0\ntoggleoutput 0\noutputs\n"
                                  "enableoutput 0\ntoggleoutput 0\ntoggleoutput 0\noutputs\n", replies="auto"),
    "output errors": case("enableoutput 1\ndisableoutput 9\ntoggleoutput x\nenableoutput -1\n"
                          "outputset 1 a b\noutputset 0 a-b c\noutputset 0 \"\" c\noutputset 0 foo 1\n"
                          "outputset x a b\n", replies="auto"),
    "output idle": case([("b", "idle output\n"), ("a", "disableoutput 0\n"), ("b", "idle output mixer\n"),
                         ("a", "enableoutput 0\n"), ("b", "idle output\n"), ("a", "enableoutput 0\n"),
                         ("b", "noidle\n")]),
    "volume without a mixer": case("setvol 50\nvolume 5\ngetvol\nsetvol 101\nsetvol -1\nsetvol x\n"
                                   "volume 101\nvolume -101\nvolume x\n", replies="auto"),
})


def local_client_replies(server_factory, tmp_path, music, requests: list[str], prepare=None) -> dict[str, list[bytes]]:
    """Sends `requests` over the Unix socket (a local client) to `mpd` and to Fermata on `music`, each prepared by
    `prepare(server)` first when given, and demands the same replies; then checks that FFmpeg's libraries are not in
    Fermata (what only FFmpeg reads was read by a scan worker). The replies by kind ("ref", "sut")."""
    got = {}
    for kind in ("ref", "sut"):
        sock = tmp_path / f"{kind}.socket"
        server = server_factory(kind, music=music, bind_to_address=[mpdtest.HOST, str(sock)])
        if prepare:
            prepare(server)
        got[kind] = mpdtest.unix_replies(sock, requests)
        if kind == "sut" and not mpdtest.is_mpd(server.binary):
            from test_lazy_libraries import _mapped
            mapped = _mapped(server.proc.pid)
            assert not [name for name in mapped if name.startswith(("libavformat", "libavcodec"))], mapped
    for request, ref, sut in zip(requests, got["ref"], got["sut"]):
        assert sut == ref, f"{request!r}\nmpd: {ref!r}\nsut: {sut!r}"
    return got


def test_a_local_client_adds_files_outside_the_music_directory(server_factory, tmp_path):
    """Over the Unix socket (a local client), `add` and `addid` take files outside the music directory by path and
    `file://` URI: an MP3, an M4A (read by FFmpeg, in a scan worker), with and without a position, inside a command list; a missing
    file fails as mpd's (`Failed to access PATH: No such file or directory`, 52), a file that is no song with
    `No such song`. The file is read off the loop; the replies and the
    queue (`playlistinfo`) are mpd's."""
    import audiofiles
    outside, music = audiofiles.outside_and_inside(tmp_path)
    requests = [
        f'add "{outside}/one.mp3"',
        f'addid "file://{outside}/two.m4a" 0',
        f'add "{outside}/two.m4a" 1',
        f'command_list_ok_begin\naddid "{outside}/one.mp3"\nadd "inside.mp3"\nadd "{outside}/two.m4a" +0\n'
        'command_list_end',
        f'add "{outside}/missing.mp3"',
        f'addid "{outside}/notes.txt"',
        f'add "{outside}"',
        f'command_list_begin\nadd "{outside}/one.mp3"\nadd "{outside}/missing.mp3"\nadd "inside.mp3"\n'
        'command_list_end',
        "playlistinfo",
    ]

    got = local_client_replies(server_factory, tmp_path, music, requests)
    # Six songs: `+0` with nothing playing ends the first command list, the missing file the second.
    assert got["ref"][-1].count(b"file: ") == 6, got["ref"][-1]
