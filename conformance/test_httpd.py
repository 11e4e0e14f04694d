"""The httpd output against mpd's: one mpd and one Fermata, each with an httpd output per encoder (lame, vorbis,
opus, opus with `opustags`, flac, Ogg FLAC, wave) on its own loopback port, playing the same short tagged tones on
repeat. Listeners are raw sockets: the response headers are compared byte for byte, the streams are decoded with
ffmpeg (the tone that is playing, growing in real time), and late, parallel, non-reading and surplus listeners,
pause, stop and song changes (ICY `StreamTitle`, or a chained Ogg stream whose comments opusinfo reads) behave as
with mpd."""

from __future__ import annotations

import math
import socket
import struct
import sys
import subprocess
import threading
import time
from pathlib import Path

import pytest

import audiofiles
import conftest
import mpdtest

HOST = mpdtest.HOST
#: The tones (Hz) of the library's songs, in queue order, with their tags.
TONES = [(440, "First Tone"), (660, "Second Tone"), (880, "Third Tone")]
SONG_SECONDS = 5
ENCODERS = {
    "lame": {"encoder": "lame", "bitrate": "128", "max_clients": "2"},
    "vorbis": {"encoder": "vorbis", "quality": "4"},
    "opus": {"encoder": "opus", "bitrate": "96000"},
    "opustags": {"encoder": "opus", "bitrate": "64000", "opustags": "yes"},
    "flac": {"encoder": "flac", "compression": "1"},
    "oggflac": {"encoder": "flac", "oggflac": "yes"},
    "wave": {"encoder": "wave"},
}


@pytest.fixture(scope="module")
def httpd_music(tmp_path_factory) -> Path:
    audiofiles.require_tools("sox", "lame", "ffmpeg")
    root = tmp_path_factory.mktemp("httpd-music")
    for index, (frequency, title) in enumerate(TONES):
        wav = root / f"{index}.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wav), "synth", str(SONG_SECONDS),
                        "sine", str(frequency), "vol", "0.5"], check=True, capture_output=True)
        subprocess.run(["lame", "--quiet", "-b", "192", "--tt", title, "--ta", "Tone Maker", "--tl", "Tones",
                        str(wav), str(root / f"{index}-tone.mp3")], check=True)
        if index == 0:
            # Untagged, for the radio stream: its titles are the stream's alone.
            subprocess.run(["lame", "--quiet", "-b", "192", str(wav), str(root / "radio.mp3")], check=True)
        wav.unlink()
    return root


class Side:
    """One server and the port of each of its httpd outputs."""

    def __init__(self, server: mpdtest.Server, ports: dict[str, int]):
        self.server = server
        self.ports = ports


@pytest.fixture(scope="module")
def sides(httpd_music):
    sut_binary = mpdtest.sut_binary()
    if not sut_binary.exists():
        pytest.skip(f"system under test not found: {sut_binary}")
    made = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", sut_binary)):
        server = mpdtest.Server(f"{kind}-httpd", binary, httpd_music, conftest._workdir(kind))
        ports = {name: mpdtest.free_port() for name in ENCODERS}
        server.outputs = [{"type": "httpd", "name": f"Stream {name}", "bind_to_address": HOST,
                           "port": str(ports[name]), "genre": "Tones", **settings}
                          for name, settings in ENCODERS.items()]
        made[kind] = Side(server, ports)
    conftest._start([made["ref"].server, made["sut"].server], songs_hint_from=made["ref"].server)
    for side in made.values():
        side.server.query("repeat 1")
        for index in range(len(TONES)):
            side.server.query(f'add "{index}-tone.mp3"')
        side.server.query("play 0")
    for side in made.values():
        # Listeners are served once the stream is open (the first song decoding).
        assert mpdtest.wait_until(lambda: elapsed(side.server) > 0.3, timeout=10), side.server.log_tail()
    yield made
    for side in made.values():
        conftest._stop(side.server)


def both(body):
    """Runs `body(kind)` for "ref" and "sut" at once; returns their results."""
    results = mpdtest.at_once(body, ("ref", "sut"))
    return results["ref"], results["sut"]


def request(port: int, path: str = "/", method: str = "GET", icy: bool = False, rcvbuf: int | None = None):
    """A listener: sends the request, returns the socket and the response head (up to the empty line)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(5)
    sock.connect((HOST, port))
    headers = "Icy-MetaData: 1\r\n" if icy else ""
    sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n{headers}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        try:
            chunk = sock.recv(1)
        except ConnectionResetError:  # turned away: closed with our request unread
            break
        if not chunk:
            break
        head += chunk
    return sock, head


def read_for(sock: socket.socket, seconds: float) -> bytes:
    """What the listener receives in `seconds`."""
    data = bytearray()
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def decode(data: bytes) -> list[int]:
    """The stream decoded by ffmpeg: mono 16-bit samples at 8 kHz."""
    result = subprocess.run(["ffmpeg", "-v", "error", "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", "8000",
                             "pipe:1"], input=data, capture_output=True, timeout=30)
    count = len(result.stdout) // 2
    return list(struct.unpack(f"<{count}h", result.stdout[:2 * count]))


def frequency(samples: list[int]) -> float:
    """The tone's frequency from the zero crossings of its loud part."""
    loud = [s for s in samples if abs(s) > 1000]
    if len(samples) < 800 or len(loud) < len(samples) / 4:
        return 0.0
    crossings = sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))
    return crossings / 2 / (len(samples) / 8000)


def playing_tone(server: mpdtest.Server) -> int:
    song = mpdtest.parse_pairs(server.query("status")).get("song", "0")
    return TONES[int(song)][0]


def elapsed(server: mpdtest.Server) -> float:
    return float(mpdtest.parse_pairs(server.query("status")).get("elapsed", "0"))


def test_outputs_as_mpd(sides):
    ref, sut = (sides[kind].server.query("outputs") for kind in ("ref", "sut"))
    assert sut == ref


@pytest.mark.parametrize("encoder", list(ENCODERS))
def test_headers_as_mpd(sides, encoder):
    def heads(kind):
        port = sides[kind].ports[encoder]
        result = []
        for options in ({}, {"icy": True}, {"method": "HEAD"}, {"path": "/favicon.ico"}):
            sock, head = request(port, **options)
            if options.get("method") == "HEAD" or options.get("path"):
                head += read_for(sock, 1)  # mpd hangs up after these
            sock.close()
            result.append(head)
        return result

    ref, sut = both(heads)
    assert sut == ref


def test_each_encoders_stream_decodes_to_the_playing_song_in_real_time(sides):
    """All encoders at once (one listener each, on both servers), to keep the test short."""
    def listen(kind, encoder):
        sock, head = request(sides[kind].ports[encoder])
        assert head.startswith(b"HTTP/1.1 200 OK"), head
        started = time.monotonic()
        data = read_for(sock, 2.5)
        took = time.monotonic() - started
        sock.close()
        return data, took

    results: dict[tuple[str, str], tuple[bytes, float]] = {}
    threads = [threading.Thread(target=lambda k=kind, e=encoder: results.__setitem__((k, e), listen(k, e)))
               for kind in ("ref", "sut") for encoder in ENCODERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for encoder in ENCODERS:
        ref_samples = decode(results[("ref", encoder)][0])
        data, took = results[("sut", encoder)]
        samples = decode(data)
        seconds = len(samples) / 8000
        # A listener hears audio at once and the stream grows in real time: neither a backlog burst nor a stall.
        assert 1.2 <= seconds <= took + 0.8, \
            f"{encoder}: {seconds:.2f} s of audio in {took:.2f} s (mpd: {len(ref_samples) / 8000:.2f} s)"
        assert_tones(samples)


def assert_tones(samples: list[int]) -> None:
    """Every quarter second of the stream is one of the songs' tones, after the decoder's first half second
    (a stream joined mid-frame) and but one (a song change)."""
    windows = [frequency(samples[start:start + 2000]) for start in range(4000, len(samples) - 1999, 2000)]
    wrong = [heard for heard in windows if not any(abs(heard - tone) < 15 for tone, _ in TONES)]
    assert windows and len(wrong) <= 1, f"heard {[round(heard) for heard in windows]} Hz"


def test_two_listeners_and_a_late_joiner(sides):
    sut = sides["sut"]
    first, _ = request(sut.ports["lame"])
    early = read_for(first, 1.0)
    second, _ = request(sut.ports["lame"])
    joined = time.monotonic()
    late = b""
    while len(late) < 4096 and time.monotonic() - joined < 2:
        late += read_for(second, 0.1)
    # The late joiner gets audio within 2 s of connecting.
    assert len(late) >= 4096, f"{len(late)} bytes in 2 s"
    results = {}

    def drain(name, sock):
        results[name] = read_for(sock, 1.5)

    threads = [threading.Thread(target=drain, args=("first", first)),
               threading.Thread(target=drain, args=("second", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first.close()
    second.close()
    a, b = decode(early + results["first"]), decode(late + results["second"])
    assert len(a) / 8000 >= 2.0 and len(b) / 8000 >= 1.2, (len(a), len(b))
    assert_tones(a)
    assert_tones(b)


def test_a_listener_that_never_reads_delays_nobody(sides):
    def run(kind):
        side = sides[kind]
        stuck, _ = request(side.ports["wave"], rcvbuf=4096)
        reader, _ = request(side.ports["wave"])
        start_elapsed, started = elapsed(side.server), time.monotonic()
        data = read_for(reader, 3.0)
        took = time.monotonic() - started
        moved = elapsed(side.server) - start_elapsed
        reader.close()
        stuck.close()
        return data, took, moved

    ref, sut = both(run)
    data, took, moved = sut
    if moved < 0:  # the next song started meanwhile
        moved += SONG_SECONDS
    # 44.1 kHz stereo 16-bit: 176 400 bytes a second, for the reader as for the player's clock.
    assert abs(moved - took) < 0.5, f"elapsed moved {moved:.2f} s in {took:.2f} s"
    assert len(data) >= 176_400 * (took - 0.7), f"{len(data)} bytes in {took:.2f} s (mpd: {len(ref[0])})"


def test_max_clients_as_mpd(sides):
    def run(kind):
        port = sides[kind].ports["lame"]
        listeners = [request(port)[0] for _ in range(2)]
        extra, head = request(port)
        rest = read_for(extra, 0.5)
        counts = [len(read_for(sock, 0.3)) > 0 for sock in listeners]
        for sock in [*listeners, extra]:
            sock.close()
        # Until the server saw them go.
        time.sleep(0.2)
        return head + rest, counts

    ref, sut = both(run)
    # The third listener of `max_clients "2"` is hung up on without a response, as by mpd.
    assert sut == ref == (b"", [True, True])


def icy_titles(data: bytes) -> list[bytes]:
    """The StreamTitle blocks of an ICY stream (metaint 8192), empty ones left out."""
    titles = []
    position = 8192
    while position < len(data):
        length = data[position] * 16
        if length:
            titles.append(data[position + 1:position + 1 + length].rstrip(b" "))
        position += 1 + length + 8192
    return titles


def test_icy_stream_title_follows_the_song_as_mpd(sides):
    def run(kind):
        side = sides[kind]
        side.server.query("play 1")
        sock, _ = request(side.ports["lame"], icy=True)
        # Vorbis puts the tags in the stream: a chained logical stream per song.
        ogg, _ = request(side.ports["vorbis"], icy=True)
        first = read_for(sock, 1.0)
        side.server.query("next")
        second = read_for(sock, 2.0)
        chained = read_for(ogg, 0.1)
        sock.close()
        ogg.close()
        return icy_titles(first + second), b"TITLE=Third Tone" in chained

    ref, sut = both(run)
    assert sut[0][:1] == ref[0][:1] == [b"StreamTitle='Tones - Tone Maker - Second Tone';StreamUrl='';"]
    assert b"StreamTitle='Tones - Tone Maker - Third Tone';StreamUrl='';" in sut[0]
    assert sut == ref


def test_a_song_without_tags_empties_the_stream_title_as_mpd(sides):
    """A local file without tags (radio.mp3) gets an empty tag as it starts, as in mpd: ICY listeners get an
    empty `StreamTitle`, and the Vorbis stream chains a logical stream for it."""
    def run(kind):
        side = sides[kind]
        side.server.query('add "radio.mp3"')
        side.server.query("play 1")
        # The outputs have had the tagged song's tag before the listeners join.
        assert mpdtest.wait_until(lambda: elapsed(side.server) > 0.3, timeout=10), side.server.log_tail()
        sock, _ = request(side.ports["lame"], icy=True)
        ogg, _ = request(side.ports["vorbis"])
        first = read_for(sock, 1.0)
        ogg_data = read_for(ogg, 0.1)
        side.server.query("play 3")
        second = read_for(sock, 2.0)
        ogg_data += read_for(ogg, 0.5)
        sock.close()
        ogg.close()
        side.server.query("delete 3")
        side.server.query("play 0")
        starts = sum(1 for at in range(len(ogg_data) - 5)
                     if ogg_data[at:at + 4] == b"OggS" and ogg_data[at + 5] & 2)
        return icy_titles(first + second), starts

    ref, sut = both(run)
    assert ref[0][-1:] == [b"StreamTitle='';StreamUrl='';"], ref
    assert ref[1] == 2, ref
    assert sut == ref


def test_tags_no_keeps_the_songs_tags_from_the_output_as_mpd(server_factory, httpd_music):
    """`tags "no"`: the output never gets a tag, so ICY listeners get no `StreamTitle` and the Vorbis stream
    chains none, through a song change."""
    def run(kind):
        ports = {"lame": mpdtest.free_port(), "vorbis": mpdtest.free_port()}
        server = server_factory(kind, music=httpd_music, outputs=[
            {"type": "httpd", "name": f"Stream {name}", "bind_to_address": HOST, "port": str(port), "tags": "no",
             **ENCODERS[name]} for name, port in ports.items()])
        server.query('command_list_begin\nadd "0-tone.mp3"\nadd "1-tone.mp3"\nplay\ncommand_list_end\n')
        assert mpdtest.wait_until(lambda: elapsed(server) > 0.2, timeout=10), server.log_tail()
        sock, _ = request(ports["lame"], icy=True)
        ogg, _ = request(ports["vorbis"])
        data = read_for(sock, 0.5)
        server.query("next")
        data += read_for(sock, 1.5)
        ogg_data = read_for(ogg, 0.5)
        sock.close()
        ogg.close()
        starts = sum(1 for at in range(len(ogg_data) - 5)
                     if ogg_data[at:at + 4] == b"OggS" and ogg_data[at + 5] & 2)
        return icy_titles(data), starts, len(data) > 16384

    ref, sut = run("ref"), run("sut")
    assert ref == ([], 1, True), ref
    assert sut == ref


def opus_titles(data: bytes, path: Path) -> list[list[str]]:
    """The TITLE comments of each logical stream of an Ogg Opus stream, as opusinfo lists them."""
    path.write_bytes(data)
    result = subprocess.run(["opusinfo", str(path)], capture_output=True, text=True, timeout=30)
    streams: list[list[str]] = []
    for line in result.stdout.splitlines():
        if line.startswith("New logical stream"):
            streams.append([])
        elif line.strip().upper().startswith("TITLE=") and streams:
            streams[-1].append(line.strip().split("=", 1)[1])
    return streams


def test_opustags_chain_a_stream_with_the_new_title_as_mpd(sides, tmp_path):
    """`opustags "yes"`: each song starts a chained logical stream whose OpusTags carry its tags (a listener
    joining gets the current one's headers first); without it, the Opus stream has no tags of its own."""
    def run(kind):
        side = sides[kind]
        side.server.query("play 0")
        time.sleep(0.5)
        tagged, _ = request(side.ports["opustags"])
        plain, _ = request(side.ports["opus"])
        first = read_for(tagged, 1.0)
        side.server.query("next")
        tagged_data = first + read_for(tagged, 1.5)
        plain_data = read_for(plain, 0.2)
        tagged.close()
        plain.close()
        return (opus_titles(tagged_data, tmp_path / f"{kind}-tagged.opus"),
                opus_titles(plain_data, tmp_path / f"{kind}-plain.opus"))

    ref, sut = both(run)
    # The song playing when the listener joined, then the next one; the untagged stream: one, no title.
    assert ref == ([["First Tone"], ["Second Tone"]], [[]]), ref
    assert sut == ref


def test_pause_keeps_listeners_and_stop_hangs_up_as_mpd(sides):
    def run(kind):
        side = sides[kind]
        sock, _ = request(side.ports["opus"])
        read_for(sock, 0.5)
        side.server.query("pause 1")
        time.sleep(0.3)
        paused = read_for(sock, 1.0)
        side.server.query("pause 0")
        read_for(sock, 0.3)
        side.server.query("stop")
        after_stop = read_for(sock, 1.5)
        closed = True
        try:
            sock.settimeout(1.0)
            closed = sock.recv(1) == b""
        except OSError:
            closed = True
        sock.close()
        refused, head = request(side.ports["opus"])
        refused_data = head + read_for(refused, 0.5)
        refused.close()
        side.server.query("play")
        return len(paused) > 0, closed, refused_data

    ref, sut = both(run)
    # Paused: the stream goes on (silence); stopped: listeners are hung up on and new ones turned away.
    assert sut == ref == (True, True, b"")


def test_a_radio_streams_title_reaches_icy_listeners_as_mpd(sides, httpd_music, tmp_path):
    """A stream's own titles (tools/streamserver.py's ICY radio, looping a tone) go to the listeners too."""
    port_file = tmp_path / "port"
    radio = subprocess.Popen([sys.executable, str(mpdtest.REPO_ROOT / "tools" / "streamserver.py"), "--root",
                              str(httpd_music), "--port-file", str(port_file), "--lifetime", "120"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert mpdtest.wait_until(port_file.exists, 10), "streamserver did not start"
        url = (f"http://{HOST}:{port_file.read_text().strip()}/radio/radio.mp3"
               "?seconds=1.5&titles=Alpha|Beta&rate=24000")

        def run(kind):
            server = sides[kind].server
            server.query("clear")
            server.query(f'add "{url}"')
            server.query("play 0")
            mpdtest.wait_until(lambda: elapsed(server) > 0.2, timeout=10)
            sock, _ = request(sides[kind].ports["lame"], icy=True)
            data = read_for(sock, 4.0)
            sock.close()
            server.query("stop")
            return set(icy_titles(data))

        ref, sut = both(run)
    finally:
        radio.terminate()
        radio.wait(timeout=10)
    assert {b"StreamTitle='Alpha';StreamUrl='';", b"StreamTitle='Beta';StreamUrl='';"} & ref, ref
    assert sut == ref


def accepting(port: int) -> bool:
    """Whether something listens on `port` (the connection is closed at once, before any request)."""
    try:
        socket.create_connection((HOST, port), timeout=2).close()
        return True
    except ConnectionRefusedError:
        return False


@pytest.mark.parametrize("first", ["tone", "gone"])
def test_outputs_are_enabled_at_the_first_play_as_mpd(tmp_path, first):
    """An httpd output binds its port when it is enabled, which mpd does not do at start-up but when the player first
    opens its outputs; `enableoutput` and `disableoutput` change nothing before the first `play`. A first `play` of a
    song that cannot be decoded opens no output, so nothing is bound, until an output's flag changes: then every
    enabled output is enabled. Once the player ran, `disableoutput` unbinds and `enableoutput` binds, playing or not,
    and both answer only once that is done (checked right after the reply)."""
    audiofiles.require_tools("sox")
    music = tmp_path / "music"
    music.mkdir()
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(music / "tone.wav"), "synth", "20",
                    "sine", "440", "vol", "0.5"], check=True, capture_output=True)
    (music / "gone.wav").write_bytes((music / "tone.wav").read_bytes())
    made = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", mpdtest.sut_binary())):
        if not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        server = mpdtest.Server(f"{kind}-httpd-first", binary, music, conftest._workdir(kind))
        ports = [mpdtest.free_port(), mpdtest.free_port()]
        server.outputs = [{"type": "httpd", "name": f"Stream {index}", "bind_to_address": HOST,
                           "port": str(port), "encoder": "wave", **({"enabled": "no"} if index else {})}
                          for index, port in enumerate(ports)]
        made[kind] = Side(server, dict(enumerate(ports)))
    try:
        conftest._start([side.server for side in made.values()], songs_hint_from=made["ref"].server)
        # Deleted once both libraries list it: playing it fails in the decoder, before any output is opened.
        (music / "gone.wav").unlink()

        def run(kind):
            server, ports = made[kind].server, made[kind].ports
            seen = []

            def bound(what, settled=False):
                if settled:
                    time.sleep(mpdtest.scaled(0.5))
                seen.append((what, [accepting(ports[0]), accepting(ports[1])]))

            bound("started", settled=True)
            for command in ("enableoutput 1", "disableoutput 1"):
                assert server.query(command) == b"OK\n"
                bound(command, settled=True)
            server.query(f'add "{first}.wav"')
            server.query("play")
            if first == "tone":
                assert mpdtest.wait_until(lambda: elapsed(server) > 0.2, timeout=10), server.log_tail()
                bound("playing")
                server.query("stop")
            else:
                assert mpdtest.wait_until(lambda: b"\nerror: " in server.query("status"), 10), server.log_tail()
                bound("failed", settled=True)
            for command in ("enableoutput 1", "disableoutput 0", "disableoutput 1", "enableoutput 0"):
                assert server.query(command) == b"OK\n"
                bound(command)
            return seen

        ref, sut = both(run)
    finally:
        for side in made.values():
            conftest._stop(side.server)
    assert sut == ref
    first_play = [("playing", [True, False])] if first == "tone" else [("failed", [False, False])]
    assert ref == [("started", [False, False]), ("enableoutput 1", [False, False]),
                   ("disableoutput 1", [False, False]), *first_play, ("enableoutput 1", [True, True]),
                   ("disableoutput 0", [False, True]), ("disableoutput 1", [False, False]),
                   ("enableoutput 0", [True, False])]


def _stream_pair(tmp_path: Path, label: str) -> dict[str, Side]:
    """mpd and Fermata, not started yet, each with one httpd output `Stream` (wave) on a port of its own, on a
    library of one 20 s tone (tone.wav); start them with conftest._start."""
    audiofiles.require_tools("sox")
    music = tmp_path / "music"
    music.mkdir()
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(music / "tone.wav"), "synth", "20",
                    "sine", "440", "vol", "0.5"], check=True, capture_output=True)
    made = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", mpdtest.sut_binary())):
        if not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        server = mpdtest.Server(f"{kind}-httpd-{label}", binary, music, conftest._workdir(kind))
        port = mpdtest.free_port()
        server.outputs = [{"type": "httpd", "name": "Stream", "bind_to_address": HOST, "port": str(port),
                           "encoder": "wave"}]
        made[kind] = Side(server, {0: port})
    return made


def test_an_output_that_failed_to_enable_while_stopped_is_tried_again_at_play_as_mpd(tmp_path):
    """An httpd output enabled while stopped (after the first play) whose port another program holds fails to
    enable; once the port is free, `play` enables it at once, as mpd opens its outputs with force when a song
    starts (rather than when its ten seconds' retry is due): the port is bound within two seconds of `play`."""
    made = _stream_pair(tmp_path, "retry")
    try:
        conftest._start([side.server for side in made.values()], songs_hint_from=made["ref"].server)

        def run(kind):
            server, port = made[kind].server, made[kind].ports[0]
            seen = []
            server.query('add "tone.wav"')
            server.query("play")
            assert mpdtest.wait_until(lambda: elapsed(server) > 0.2, timeout=10), server.log_tail()
            seen += [server.query("stop"), server.query("disableoutput 0"), accepting(port)]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
                holder.bind((HOST, port))
                holder.listen(1)
                seen.append(server.query("enableoutput 0"))
            seen.append(accepting(port))
            started = time.monotonic()
            seen.append(server.query("play"))
            seen.append(mpdtest.wait_until(lambda: accepting(port), timeout=2))
            assert time.monotonic() - started < 5
            seen.append(server.query("stop"))
            return seen

        ref, sut = both(run)
    finally:
        for side in made.values():
            conftest._stop(side.server)
    assert ref == [b"OK\n", b"OK\n", False, b"OK\n", False, b"OK\n", True, b"OK\n"]
    assert sut == ref


def test_an_output_that_failed_to_enable_is_enabled_again_when_another_outputs_flag_changes_as_mpd(tmp_path):
    """An httpd output whose port another program holds when `play` starts fails to enable while a second output
    plays. Once the port is free, nothing binds it until an output's flag changes: `enableoutput` of an output
    already enabled changes nothing, `toggleoutput` of the other one enables every enabled output whose device is
    not (mpd's player runs `EnableDisable` on every flag change), so the port is bound when `toggleoutput` answers,
    long before the failed output's retry. Its stream opens only when its retry is due or a pause ends (mpd's
    outputs open with force then): a listener that comes before is turned away, one after a pause gets the
    stream."""
    made = _stream_pair(tmp_path, "flag")
    for side in made.values():
        side.ports[1] = mpdtest.free_port()
        side.server.outputs.append({"type": "httpd", "name": "Other", "bind_to_address": HOST,
                                    "port": str(side.ports[1]), "encoder": "wave"})
    try:
        conftest._start([side.server for side in made.values()], songs_hint_from=made["ref"].server)

        def run(kind):
            server, port, other = made[kind].server, made[kind].ports[0], made[kind].ports[1]
            seen = []
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
                holder.bind((HOST, port))
                holder.listen(1)
                server.query('add "tone.wav"')
                failed = time.monotonic()
                seen.append(server.query("play"))
                assert mpdtest.wait_until(lambda: elapsed(server) > 0.2, timeout=10), server.log_tail()
            seen += [accepting(port), accepting(other)]
            for command in ("enableoutput 0", "enableoutput 1"):
                seen += [server.query(command), accepting(port)]
            seen += [server.query("toggleoutput 1"), accepting(port), accepting(other)]
            # Turned away: the output is enabled, its stream not open (its retry is not due).
            sock, head = request(port)
            sock.close()
            seen.append(head if time.monotonic() - failed < 8 else "retry due")
            seen += [server.query("pause 1"), server.query("pause 0")]
            sock, head = request(port)
            sock.close()
            seen.append(head.split(b"\r\n")[0])
            seen += [server.query("toggleoutput 1"), accepting(other), server.query("stop")]
            return seen

        ref, sut = both(run)
    finally:
        for side in made.values():
            conftest._stop(side.server)
    assert ref == [b"OK\n", False, True, b"OK\n", False, b"OK\n", False, b"OK\n", True, False, b"",
                   b"OK\n", b"OK\n", b"HTTP/1.1 200 OK", b"OK\n", True, b"OK\n"]
    assert sut == ref


def test_moveoutput_answers_once_the_port_follows_the_output_as_mpd(tmp_path):
    """`moveoutput` of a playing httpd output to a partition that never played answers once the output let go of
    its port there (mpd disables it and ends its thread first); moved back to the partition that plays, it answers
    once the output bound its port again (mpd's player enables it before the reply). Checked right after each
    reply."""
    made = _stream_pair(tmp_path, "move")
    try:
        conftest._start([side.server for side in made.values()], songs_hint_from=made["ref"].server)

        def run(kind):
            server, port = made[kind].server, made[kind].ports[0]
            server.query('add "tone.wav"')
            server.query("play")
            assert mpdtest.wait_until(lambda: elapsed(server) > 0.2, timeout=10), server.log_tail()
            seen = [accepting(port)]
            with server.connect() as c:
                seen += [c.command("newpartition other"), c.command("partition other"),
                         c.command('moveoutput "Stream"'), accepting(port)]
                seen += [c.command("partition default"), c.command('moveoutput "Stream"'), accepting(port)]
            server.query("stop")
            return seen

        ref, sut = both(run)
    finally:
        for side in made.values():
            conftest._stop(side.server)
    assert ref == [True, b"OK\n", b"OK\n", b"OK\n", False, b"OK\n", b"OK\n", True]
    assert sut == ref
