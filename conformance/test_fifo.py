"""The fifo output (`type "fifo"`) at a pause: it has no pause mode, as mpd's, so a pause empties the pipe of what
nobody read yet and closes the output, and the resume opens it again. A reader of the FIFO (non-blocking, as a
visualiser reads) is compared on both servers: the audio waiting in the pipe just before the pause, none just after
it is answered nor while paused, the audio flowing again after the resume. About 10 s.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import time

import mpdtest
from test_recorder import long_music  # noqa: F401  (the 10 s song, a fixture)

KINDS = ("ref", "sut")


def _pending(fd: int) -> int:
    """Bytes waiting in the pipe."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _drain(fd: int) -> int:
    count = 0
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return count
        if not data:
            return count
        count += len(data)


def test_a_pause_empties_the_pipe_and_closes_the_output_as_mpd(server_factory, tmp_path, long_music):
    seen = {}
    for kind in KINDS:
        path = tmp_path / f"{kind}.fifo"
        server = server_factory(kind, music=long_music, outputs=[{"type": "fifo", "name": "Pipe", "path": str(path)}])
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            assert server.query('command_list_begin\nclear\nadd "long.wav"\nplay\ncommand_list_end\n') == b"OK\n"
            assert mpdtest.wait_until(lambda: b"\nelapsed: 0.0" not in server.query("status") and
                                      b"\nelapsed: " in server.query("status"), mpdtest.scaled(5))
            flowing = _drain(fd)
            time.sleep(0.5)                       # nobody reads: the audio waits in the pipe
            waiting = _pending(fd)
            assert server.query("pause 1") == b"OK\n"
            after_pause = _pending(fd)
            time.sleep(0.5)
            while_paused = _drain(fd)
            assert server.query("pause 0") == b"OK\n"
            time.sleep(0.5)
            resumed = _drain(fd)
            server.query("stop")
        finally:
            os.close(fd)
        seen[kind] = (flowing > 0, waiting > 0, after_pause, while_paused, resumed > 0)
    assert seen["ref"] == (True, True, 0, 0, True), seen
    assert seen["sut"] == seen["ref"]
