#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A test RTSP server for `rtsp://` streams (libavformat's rtsp demuxer, in mpd and in Fermata).

Python's standard library only. Binds 127.0.0.1 (nothing else, ever) on a port the system chooses, and stops by
itself when the process that started it goes away or after --lifetime seconds (default 900).

Usage:
    tools/rtspserver.py --root DIR [--port-file FILE] [--lifetime SECONDS]

It writes the port to --port-file (atomically) once it listens. Requests are logged to standard error.

`rtsp://127.0.0.1:PORT/NAME` plays NAME, a WAV file under --root (16-bit PCM, 44.1 kHz, one or two channels), as
RTP payload type L16 (RFC 3551: big-endian samples; static type 10 for stereo, 11 for mono) over the RTSP
connection itself (RFC 2326 interleaved TCP, channels 0 and 1); a client that asks for UDP first is told 461
Unsupported Transport, as servers that only interleave answer. After PLAY the samples are sent in packets of
10 ms, as fast as the client reads, then an RTCP BYE, and the connection is closed: the end of the stream.
`rtsp://127.0.0.1:PORT/missing` (any name that is not a file) answers DESCRIBE with 404 Not Found, and
`rtsp://127.0.0.1:PORT/silent/NAME` answers every request but never sends a packet after PLAY (a stalled
station; closed after --lifetime).
"""

import argparse
import os
import socket
import struct
import sys
import threading
import time
import wave
from pathlib import Path

FRAMES_PER_PACKET = 441


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def read_wav(path: Path) -> tuple[int, int, bytes]:
    """The channel count, the rate and the samples of a 16-bit WAV file, big-endian."""
    with wave.open(str(path), "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError("16-bit samples only")
        channels, rate = w.getnchannels(), w.getframerate()
        data = w.readframes(w.getnframes())
    swapped = bytearray(len(data))
    swapped[0::2], swapped[1::2] = data[1::2], data[0::2]
    return channels, rate, bytes(swapped)


class Session(threading.Thread):
    def __init__(self, conn: socket.socket, root: Path):
        super().__init__(daemon=True)
        self.conn, self.root = conn, root
        self.file = conn.makefile("rb")
        self.lock = threading.Lock()
        self.name = ""

    def send(self, data: bytes) -> None:
        with self.lock:
            self.conn.sendall(data)

    def reply(self, cseq: str, status: str, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        lines = [f"RTSP/1.0 {status}", f"CSeq: {cseq}", "Server: fermata-test"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def source(self, url: str) -> tuple[bool, Path]:
        path = url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
        for suffix in ("/track1", "/trackID=0"):
            path = path.removesuffix(suffix)
        silent = path.startswith("silent/")
        return silent, self.root / path.removeprefix("silent/")

    def read_request(self) -> tuple[str, str, dict[str, str]] | None:
        while True:
            first = self.file.read(1)
            if not first:
                return None
            if first == b"$":
                # An interleaved packet from the client (RTCP receiver reports): skipped.
                header = self.file.read(3)
                if len(header) < 3:
                    return None
                self.file.read(struct.unpack(">H", header[1:])[0])
                continue
            line = (first + self.file.readline()).decode("latin-1").strip()
            if line:
                break
        method, url = line.split(" ")[:2]
        headers = {}
        while True:
            header = self.file.readline().decode("latin-1").strip()
            if not header:
                break
            key, _, value = header.partition(":")
            headers[key.strip().lower()] = value.strip()
        if "content-length" in headers:
            self.file.read(int(headers["content-length"]))
        return method, url, headers

    def run(self) -> None:
        try:
            self.serve()
        except (OSError, ValueError) as exc:
            log(f"session ended: {exc}")
        finally:
            self.conn.close()

    def serve(self) -> None:
        while (request := self.read_request()) is not None:
            method, url, headers = request
            cseq = headers.get("cseq", "0")
            log(f"{method} {url}")
            silent, path = self.source(url)
            if method == "OPTIONS":
                self.reply(cseq, "200 OK", {"Public": "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER"})
            elif method == "DESCRIBE":
                if not path.is_file():
                    self.reply(cseq, "404 Not Found")
                    continue
                channels, rate, _ = read_wav(path)
                payload = 10 if channels == 2 else 11
                sdp = ("v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=Test\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                       f"m=audio 0 RTP/AVP {payload}\r\na=rtpmap:{payload} L16/{rate}/{channels}\r\n"
                       "a=control:track1\r\n").encode()
                self.reply(cseq, "200 OK", {"Content-Type": "application/sdp", "Content-Base": url.rstrip("/") + "/"},
                           sdp)
            elif method == "SETUP":
                transport = headers.get("transport", "")
                if "TCP" not in transport:
                    self.reply(cseq, "461 Unsupported Transport")
                    continue
                self.reply(cseq, "200 OK", {"Transport": "RTP/AVP/TCP;unicast;interleaved=0-1",
                                            "Session": "12345678"})
            elif method == "PLAY":
                self.reply(cseq, "200 OK", {"Session": "12345678", "Range": "npt=0.000-"})
                if silent:
                    continue
                threading.Thread(target=self.stream, args=(path,), daemon=True).start()
            elif method == "TEARDOWN":
                self.reply(cseq, "200 OK", {"Session": "12345678"})
                return
            else:
                self.reply(cseq, "200 OK", {"Session": "12345678"})

    def stream(self, path: Path) -> None:
        channels, _, data = read_wav(path)
        step = FRAMES_PER_PACKET * channels * 2
        payload = 10 if channels == 2 else 11
        try:
            for number, offset in enumerate(range(0, len(data), step)):
                body = data[offset:offset + step]
                rtp = struct.pack(">BBHII", 0x80, payload, number & 0xFFFF, number * FRAMES_PER_PACKET,
                                  0x1234ABCD) + body
                self.send(b"$\x00" + struct.pack(">H", len(rtp)) + rtp)
            # RTCP BYE (version 2, one source).
            bye = struct.pack(">BBHI", 0x81, 203, 1, 0x1234ABCD)
            self.send(b"$\x01" + struct.pack(">H", len(bye)) + bye)
            time.sleep(0.5)
            self.conn.shutdown(socket.SHUT_RDWR)
        except OSError as exc:
            log(f"stream ended: {exc}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--port-file", type=Path)
    parser.add_argument("--lifetime", type=float, default=900)
    args = parser.parse_args()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    if args.port_file:
        temporary = args.port_file.with_suffix(".tmp")
        temporary.write_text(str(port))
        os.replace(temporary, args.port_file)
    parent = os.getppid()
    deadline = time.monotonic() + args.lifetime

    def watchdog() -> None:
        while time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    while True:
        conn, _ = server.accept()
        Session(conn, args.root).start()


if __name__ == "__main__":
    sys.exit(main())
