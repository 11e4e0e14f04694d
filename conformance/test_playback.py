"""Differential cases: playback control, and what happens at the end of a song.

Both servers play to a null output in real time, and the fixture songs last 0.3 to
1.5 s, so a case that must not reach the end of a song sends its commands in one
write and pauses or stops straight after ``play``; a case about the end of a song
waits for it with ``idle player`` on a fresh connection (a ``"wait"`` step).
How far playback got is not compared: ``elapsed``/``time`` are masked and
``bitrate``/``audio`` dropped.  Every case starts with ``clear`` and ends with
the modes back at their defaults.
"""

import time

import mpdtest
from mpdtest import case, differential_table

ND = '"Numbers & Dates"'          # ten songs, a.mp3 … j.mp3
EA = '"Embedded Art"'             # two songs
ROOT = '"root song.mp3"'
V1 = '"Old Tags/v1 only.mp3"'     # 1.044 s at 44100 Hz
RESET = "clear\nrepeat 0\nrandom 0\nsingle 0\nconsume 0\n"


def drop_progress(line: bytes):
    """Lines that depend on how far playback got."""
    key = line.split(b": ")[0]
    return None if key in (b"bitrate", b"audio") else line


def drop_random(line: bytes):
    """Also the next song, where random mode picks it."""
    key = line.split(b": ")[0]
    return None if key in (b"bitrate", b"audio", b"nextsong", b"nextsongid") else line


def p(body: str, normalize=drop_progress, **options):
    """One write: clear, the body, the modes back."""
    # A server busy playing may take longer than the usual quiet period to answer: wait for every reply.
    return case([("a", "clear\n" + body + RESET, "wait")], queue=True, normalize=normalize, **options)


def until_player_event(setup: str, after: str = "status\n", normalize=drop_progress):
    """``setup`` on connection a, then wait on a fresh connection for the next player
    event (a song ending), then ``after``."""
    return case([("a", "clear\n" + setup), ("b", "idle player\n", "wait"), ("a", after + RESET, "wait")],
                queue=True, normalize=normalize)


test_play_pause_stop = differential_table({
    "play then pause": p(f"add {ND}\nplay 3\npause 1\nstatus\ncurrentsong\nstop\nstatus\n"),
    "pause toggles": p(f"add {ND}\nplay 0\npause\nstatus\npause\npause 1\nstatus\npause 1\npause 0\n"
                       f"pause 1\nstatus\nstop\n"),
    "pause when stopped does nothing": p(f"add {ND}\npause\npause 1\npause 0\nstatus\n"),
    "pause errors": p("pause 2\npause x\npause 1 2\n"),
    "play without argument resumes": p(f"add {ND}\nplay 2\npause 1\nplay\nstatus\npause 1\nplay -1\n"
                                       f"pause 1\nstatus\nstop\n"),
    "play on an empty queue": p("play\nplay -1\nstatus\n"),
    "stop keeps the current song": p(f"add {ND}\nplay 4\nstop\nstatus\ncurrentsong\nplay\npause 1\nstatus\n"
                                     f"stop\nstop\n"),
    "play errors": p(f"add {ND}\nplay 10\nplay -2\nplay x\nplay 99999999999\nplayid 0\nplayid -5\n"
                     f"playid x\nplayid {{id11}}\nstatus\n"),
    "playid": p(f"add {ND}\nplayid {{id3}}\npause 1\nstatus\nplayid\nstatus\nstop\n"),
    "play clears the current song's priority": p(f"add {ND}\nprio 9 3\nplay 3\nstop\nplaylistinfo 3\n"
                                                 f"status\n"),
    "clear while playing stops": p(f"add {ND}\nplay 0\nclear\nstatus\n"),
})

test_next_previous = differential_table({
    "next and previous while paused": p(f"add {ND}\nplay 1\npause 1\nnext\nstatus\npause 1\nprevious\n"
                                        f"previous\npause 1\nstatus\nstop\n"),
    "next and previous when stopped": p(f"add {ND}\nnext\nprevious\nplay 1\nstop\nnext\nprevious\n"),
    "previous from the first restarts it": p(f"add {ND}\nplay 0\nprevious\npause 1\nstatus\nstop\n"),
    "previous with repeat goes to the last": p(f"add {ND}\nrepeat 1\nplay 0\nprevious\npause 1\nstatus\n"
                                               f"stop\n"),
    "next at the end stops and forgets the song": p(f"add {ND}\nplay 9\nnext\nstatus\nplay\npause 1\n"
                                                    f"status\nstop\n"),
    "next with repeat wraps": p(f"add {ND}\nrepeat 1\nplay 9\nnext\npause 1\nstatus\nstop\n"),
    "next ignores single": p(f"add {ND}\nsingle 1\nplay 0\nnext\npause 1\nstatus\nstop\n"),
    "next with single and repeat moves on": p(f"add {ND}\nsingle 1\nrepeat 1\nplay 0\nnext\npause 1\n"
                                              f"status\nstop\n"),
    "next in consume mode removes the song left": p(f"add {ND}\nconsume 1\nplay 0\nnext\npause 1\nstatus\n"
                                                    f"playlist\nstop\n"),
    "next in random mode": p(f"add {ND}\nrandom 1\nplay 4\npause 1\nstatus\nnext\nnext\nstop\n",
                             normalize=drop_random),
    "nextsong with modes while paused": p(f"add {ND}\nplay 9\npause 1\nstatus\nrepeat 1\nstatus\nsingle 1\n"
                                          f"status\nconsume 1\nstatus\nstop\n"),
})

test_seek = differential_table({
    "seek starts a stopped song": p(f"add {ND}\nseek 2 0.1\npause 1\nstatus\nstop\n"),
    "seekid starts another song": p(f"add {ND}\nplay 0\nseekid {{id5}} 0.2\npause 1\nstatus\nstop\n"),
    "seek in a paused song": p(f"add {ND}\nplay 3\npause 1\nseek 3 0.2\nstatus\nseekcur 0.1\nstatus\n"
                               f"seekcur +0.1\nseekcur -5\nstatus\nstop\n"),
    "seek errors": p(f"add {ND}\nseek 10 1\nseek 0 -1\nseek 0 x\nseek x 1\nseekid {{id11}} 1\nseekid 0 1\n"
                     f"seekcur x\nseekcur 1\nseekcur +1\nseek 0\nstatus\n"),
    "seek in random mode": p(f"add {ND}\nrandom 1\nseek 6 0.1\npause 1\nstatus\nstop\n",
                             normalize=drop_random),
})

test_edit_while_playing = differential_table({
    "delete the current song while paused": p(f"add {ND}\nplay 3\npause 1\ndelete 3\nstatus\n"),
    "delete the current song while playing": p(f"add {ND}\nplay 3\ndelete 3\npause 1\nstatus\nstop\n"),
    "delete the last current song while playing": p(f"add {ND}\nplay 9\ndeleteid {{id10}}\nstatus\n"),
    "delete a range with the current song": p(f"add {ND}\nplay 3\ndelete 2:5\npause 1\nstatus\nstop\n"),
    "delete before the current song while playing": p(f"add {ND}\nplay 5\npause 1\ndelete 0:2\nstatus\n"
                                                      f"stop\n"),
    "move around the current song": p(f"add {ND}\nplay 4\npause 1\nmove 0 +0\nplaylist\nstatus\n"
                                      f"move 9 -0\nplaylist\nstatus\nmove 4 0\nstatus\nstop\n"),
    "add relative to the playing song": p(f"add {ND}\nplay 4\npause 1\nadd {ROOT} +0\nadd {ROOT} -0\n"
                                          f"playlist\nstatus\nstop\n"),
    "shuffle keeps the playing song first": p(f"add {ND}\nplay 5\npause 1\nshuffle\nstatus\nstop\n",
                                              normalize=drop_random),
    "swap the playing song": p(f"add {ND}\nplay 5\npause 1\nswap 5 0\nstatus\nstop\n"),
    "rangeid of the playing song": p(f"add {ND}\nplay 2\npause 1\nrangeid {{id3}} 0.1:0.2\n"
                                     f"rangeid {{id4}} 0.1:0.2\nstatus\nstop\n"),
    "random on while playing keeps the song": p(f"add {ND}\nplay 5\npause 1\nrandom 1\nstatus\nrandom 0\n"
                                                f"status\nstop\n", normalize=drop_random),
    "prio while playing in random mode": p(f"add {ND}\nrandom 1\nplay 5\npause 1\nprio 50 8\nstatus\n"
                                           f"prio 60 2\nstatus\nstop\n"),
})

test_end_of_song = differential_table({
    "songs play on": until_player_event(f"add {EA}\nplay 0\n", "status\nstop\n"),
    "end of the queue forgets the current song": until_player_event(f"add {ROOT}\nplay\n", "status\n"),
    "single pauses at the start of the next song": until_player_event(f"add {EA}\nsingle 1\nplay 0\n",
                                                                      "status\nstop\n"),
    "single oneshot turns itself off": until_player_event(f"add {EA}\nsingle oneshot\nplay 0\n",
                                                          "status\nstop\n"),
    "single at the last song stops": until_player_event(f"add {ROOT}\nsingle 1\nplay 0\n", "status\n"),
    "single with repeat repeats the song": until_player_event(f"add {EA}\nsingle 1\nrepeat 1\nplay 0\n",
                                                              "status\nstop\n"),
    "repeat wraps to the first song": until_player_event(f"add {EA}\nrepeat 1\nplay 1\n", "status\nstop\n"),
    "consume removes the song that ended": until_player_event(f"add {EA}\nconsume 1\nplay 0\n",
                                                              "status\nplaylist\nstop\n"),
    "consume at the end of the queue": until_player_event(f"add {ROOT}\nconsume 1\nplay 0\n",
                                                          "status\nplaylist\n"),
    "a song started by seek plays on": until_player_event(f"add {EA}\nseek 0 0.2\n", "status\nstop\n"),
})

test_player_idle = differential_table({
    "stop and pause raise player": case([
        ("a", f"clear\nadd {ND}\nplay 0\npause 1\n"), ("b", "idle player\n"), ("a", "pause 0\npause 1\n"),
        ("b", "idle player\n"), ("a", "stop\n"), ("b", "idle player\n"), ("a", "stop\npause 1\n"),
        ("b", "noidle\n"), ("a", RESET)], queue=True),
    "consume at a song end raises playlist": case([
        ("a", f"clear\nadd {EA}\nconsume 1\nplay 0\n"), ("b", "idle playlist\n", "wait"),
        ("a", "stop\n" + RESET, "wait")], queue=True),
    "single oneshot at a song end raises options": case([
        ("a", f"clear\nadd {EA}\nsingle oneshot\nplay 0\n"), ("b", "idle options\n", "wait"),
        ("a", "status\nstop\n" + RESET, "wait")], queue=True, normalize=drop_progress),
})


def _status_lines(server, script: str) -> list[bytes]:
    """The replies to ``script`` (one write), without the lines that depend on how far playback got or on the
    server's song ids and queue versions."""
    with server.connect() as c:
        c.send(script)
        replies = [c.read_reply() for _ in range(mpdtest.count_replies(script.encode()))]
    return [line for reply in replies for line in reply.splitlines()
            if not line.startswith((b"bitrate:", b"time:", b"playlist:", b"songid:", b"nextsongid:"))]


def _audio_line(server) -> bytes | None:
    """`status`'s `audio:` line, waited for up to 1 s."""
    found = []

    def check() -> bool:
        found[:] = [line for line in server.query("status").splitlines() if line.startswith(b"audio: ")]
        return bool(found)
    mpdtest.wait_until(check, 1.0)
    return found[0] if found else None


def test_paused_seek_times_are_mpd_milliseconds(servers):
    """`elapsed` after seeks while paused: mpd keeps a time argument in whole milliseconds computed in `float`
    (0.7 is 700 ms, not 699) and adds a relative one to the elapsed milliseconds; `audio:` shows from the
    decoder's start-up, before any output played the song."""
    sut = servers.require_sut()
    for s in (servers.ref, sut):
        _status_lines(s, f"clear\nadd {V1}\nplay 0\npause 1\n")
        assert _audio_line(s) is not None, f"{s.label}: no audio: in status after play, pause"
    script = "seekcur 0.7\nstatus\nseekcur 0.001\nseekcur +1.001\nstatus\nseek 0 0.3\nstatus\nstop\nclear\n"
    got = {s.label: _status_lines(s, script) for s in (servers.ref, sut)}
    assert got[servers.ref.label] == got[sut.label], got
    assert b"elapsed: 0.700" in got[servers.ref.label], got


def test_audio_format_shows_while_paused(servers):
    """Right after `play` then `pause`, once the decoder started (mpd: within milliseconds), and after a seek
    while paused, `status` has `audio:` though no output played the song yet."""
    sut = servers.require_sut()
    for setup in (f"clear\nadd {V1}\nplay 0\npause 1\n", f"clear\nadd {V1}\nseek 0 0.4\npause 1\n"):
        audio = {}
        for s in (servers.ref, sut):
            _status_lines(s, setup)
            audio[s.label] = _audio_line(s)
        assert audio[servers.ref.label] is not None and audio[servers.ref.label] == audio[sut.label], (setup, audio)
        got = {s.label: _status_lines(s, "seekcur 0.5\nstatus\nstop\nclear\n") for s in (servers.ref, sut)}
        assert got[servers.ref.label] == got[sut.label], (setup, got)


def test_seek_into_the_last_milliseconds_of_the_last_song_stops(servers):
    """A seek into the last few milliseconds of the last song in the queue (dragging the progress bar to the
    end) plays that little and stops, as mpd does: the player must not stay in `state: play` with `elapsed`
    frozen. Playing, paused then resumed, and from stop; the song lasts 1.044 s."""
    sut = servers.require_sut()
    for setup in (f"clear\nadd {V1}\nplay 0\nseekcur 1.03\n", f"clear\nadd {V1}\nplay 0\nseekcur 1.044\n",
                  f"clear\nadd {V1}\nplay 0\npause 1\nseekcur 1.04\npause 0\n", f"clear\nadd {V1}\nseek 0 1.035\n"):
        got = {}
        for s in (servers.ref, sut):
            _status_lines(s, setup)
            stopped = mpdtest.wait_until(lambda s=s: b"\nstate: stop\n" in s.query("status"), 3.0)
            got[s.label] = (stopped, _status_lines(s, "status\nclear\n"))
        assert got[servers.ref.label][0], (setup, got)
        assert got[servers.ref.label] == got[sut.label], (setup, got)


def _player_wakes(server, setup: str, command: str) -> int:
    """How often a client idling on `player` wakes within 0.3 s of ``command`` (from stop), going back to
    idle at once each time."""
    _status_lines(server, setup)
    wakes = 0
    with server.connect() as idler, server.connect() as c:
        idler.send("idle player\n")
        time.sleep(0.05)
        c.command(command)
        idler.sock.settimeout(0.3)
        try:
            while True:
                assert idler.read_reply() == b"changed: player\nOK\n"
                wakes += 1
                idler.send("idle player\n")
        except (TimeoutError, OSError):
            pass
    _status_lines(server, "stop\nclear\n")
    return wakes


def test_play_from_stop_wakes_an_idle_client_twice(servers):
    """`play` from stop (also `play` then `pause`) raises `player` with the command and again at the decoder's
    start-up: a client back in idle at once is woken twice. In mpd the second event (its decoder's start-up and
    its output opening) races with the main loop's dispatch of the first: in a fresh session it usually comes
    apart (two wakes), after other playback or under load it often merges (one). So mpd must wake once or twice
    and never more. Fermata's events come in separate loop turns: after `play 0`, two on every try; the `pause 1`
    after it answers once the outputs stopped, and no idle event goes out meanwhile (as none does while mpd's main
    thread waits for its player), so there the decoder's start-up may come within that wait: once or twice."""
    sut = servers.require_sut()
    setup = f"clear\nadd {V1}\n"
    for command, wakes in (("play 0", [{2}, {2}]), ("command_list_begin\nplay 0\npause 1\ncommand_list_end",
                                                    [{1, 2}, {1, 2}])):
        assert set(_player_wakes(servers.ref, setup, command) for _ in range(2)) <= {1, 2}, command
        seen = [_player_wakes(sut, setup, command) for _ in range(2)]
        assert all(count in allowed for count, allowed in zip(seen, wakes)), (command, seen)
