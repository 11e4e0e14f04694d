#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A test HTTP server for Fermata's http(s) input and for differential tests against mpd.

Python's standard library only. Binds 127.0.0.1 (nothing else, ever) on a port the system chooses, serves the
files of one directory in the ways streams fail and succeed, and stops by itself: when the process that
started it goes away, or after --lifetime seconds (default 900).

Usage:
    tools/streamserver.py --root DIR [--port-file FILE] [--lifetime SECONDS]

It prints `PORT <n>` on its standard output (and writes `<n>` to --port-file, atomically) once it listens.
Requests are logged to standard error.

URL scheme (NAME is a file's path under --root; numbers are decimal):

    /file/NAME               200 with Content-Length and `Accept-Ranges: bytes`; `Range: bytes=A-[B]` gives 206
                             with Content-Range (416 past the end). HEAD works too.
    /norange/NAME            200 with Content-Length, no Accept-Ranges; any Range header is ignored.
    /nolength/NAME           200 without Content-Length: the body ends when the connection closes.
    /chunked/NAME            200 with `Transfer-Encoding: chunked` (HTTP/1.1), chunks of 4096 bytes.
    /type/MIME/NAME          as /file/, with `Content-Type: MIME` (`/` in MIME written as `~`: audio~mpeg).
    /radio/NAME?QUERY        an endless "radio" stream: NAME's bytes looped, `Content-Type: audio/mpeg`, no length.
                             With a request header `Icy-MetaData: 1` the answer carries `icy-metaint`, and after
                             every METAINT audio bytes a metadata block `StreamTitle='TITLE';` (a zero length byte
                             while the title is unchanged, unless repeat=1). Query parameters:
                               metaint=N    audio bytes between blocks (default 8192; 0: no ICY at all)
                               every=K      the title changes every K blocks (default 4)
                               seconds=S    or every S seconds instead (fractions allowed)
                               titles=A|B   the titles, used in turn (default `Title 1`, `Title 2`, …)
                               name=X       the `icy-name` header (default `Fermata Test Radio`; empty: none)
                               genre=X      the `icy-genre` header (default `Test`; empty: none)
                               url=X        an `icy-url` header (default none)
                               repeat=1     send the title in every block, changed or not (as SHOUTcast does)
                               shoutcast=1  answer with the status line `ICY 200 OK` instead of HTTP/1.0
                               rate=B       at most B audio bytes per second (default: as fast as the client reads)
                               limit=B      end the stream after B audio bytes (default: never)
                               id=X         count the bytes sent under X for /stats
                               encoding=E   send the titles and icy-name in Python's codec E (default utf-8;
                                            latin-1 for a station a `#charset=ISO-8859-1` URL is for)
    /redirect/N/PATH         302 to /redirect/N-1/PATH …, and /redirect/1/PATH 302s to /PATH: N redirects in all
                             (a query string is kept).
    /loop/PATH               302 to itself: a redirect loop.
    /status/CODE             answers CODE (404, 500, 300 without Location…) with a short text body.
    /stall/accept            reads the request and never answers (closes after --stall seconds, default 300).
    /stall/headers/NAME      sends the headers of /file/NAME and never a body byte (closes after --stall).
    /stall/body/B/NAME       sends the headers and B bytes of NAME, then nothing (closes after --stall).
    /drop/B/NAME             as /file/NAME (full Content-Length) but closes after B bytes: cut short.
    /dropnolength/B/NAME     as /nolength/NAME but closes after B bytes: indistinguishable from an end.
    /trickle/R/NAME          as /file/NAME at R bytes per second, in small pieces.
    /stats?id=X              `bytes=<n>` sent so far by /radio streams with id=X (text/plain); with id=GET PATH,
                             the number of requests for PATH (its path alone, without the query) so far.
    /headers                 echoes the request line and headers as text/plain (what a client sends).
"""

import argparse
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATS = {}
STATS_LOCK = threading.Lock()


def count_sent(identifier, count):
    if identifier is None:
        return
    with STATS_LOCK:
        STATS[identifier] = STATS.get(identifier, 0) + count


class Handler(BaseHTTPRequestHandler):
    server_version = "FermataStreamServer/1"
    protocol_version = "HTTP/1.0"

    def log_message(self, format, *args):
        sys.stderr.write("streamserver: %s %s\n" % (self.address_string(), format % args))

    # Helpers.

    def root_file(self, name):
        root = os.path.realpath(self.server.root)
        path = os.path.realpath(os.path.join(root, urllib.parse.unquote(name)))
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            return None
        return path

    def text(self, code, body, extra=()):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        for key, value in extra:
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def not_found(self):
        self.text(404, "not found\n")

    def hold(self):
        """Keeps the connection open without sending, until the client goes or --stall seconds pass."""
        deadline = time.monotonic() + self.server.stall
        self.connection.settimeout(0.5)
        while time.monotonic() < deadline:
            try:
                if self.connection.recv(4096) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def send_bytes(self, data, rate=None):
        """Sends data; at `rate` bytes per second in pieces if given. Returns False when the client went."""
        try:
            if rate is None:
                self.wfile.write(data)
                return True
            piece = max(1, min(1024, rate // 10))
            for start in range(0, len(data), piece):
                self.wfile.write(data[start : start + piece])
                self.wfile.flush()
                time.sleep(len(data[start : start + piece]) / rate)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def file_headers(self, path, code=200, length=True, ranges=True, mime=None, first=0, last=None):
        size = os.path.getsize(path)
        self.send_response(code)
        self.send_header("Content-Type", mime or "application/octet-stream")
        if ranges:
            self.send_header("Accept-Ranges", "bytes")
        if code == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
        if length:
            end = size - 1 if last is None else last
            self.send_header("Content-Length", str(end - first + 1))
        self.end_headers()

    # Routes.

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        parsed = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        parts = parsed.path.lstrip("/").split("/")
        if parts[0] != "stats":
            count_sent("GET " + parsed.path, 1)
        kind = parts[0]
        rest = parts[1:]
        try:
            handler = getattr(self, "route_" + kind.replace("-", "_"), None)
            if handler is None:
                self.not_found()
            else:
                handler(rest, query)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def route_headers(self, rest, query):
        self.text(200, self.requestline + "\n" + str(self.headers))

    def route_stats(self, rest, query):
        with STATS_LOCK:
            count = STATS.get(query.get("id"), 0)
        self.text(200, "bytes=%d\n" % count)

    def route_file(self, rest, query, mime=None):
        path = self.root_file("/".join(rest))
        if path is None:
            return self.not_found()
        size = os.path.getsize(path)
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            first_text, _, last_text = wanted[6:].partition("-")
            first = int(first_text or 0)
            last = min(int(last_text), size - 1) if last_text else size - 1
            if first >= size:
                return self.text(416, "range not satisfiable\n", [("Content-Range", "bytes */%d" % size)])
            self.file_headers(path, 206, mime=mime, first=first, last=last)
            if self.command != "HEAD":
                with open(path, "rb") as source:
                    source.seek(first)
                    self.send_bytes(source.read(last - first + 1))
            return
        self.file_headers(path, mime=mime)
        if self.command != "HEAD":
            with open(path, "rb") as source:
                self.send_bytes(source.read())

    def route_type(self, rest, query):
        if not rest:
            return self.not_found()
        self.route_file(rest[1:], query, mime=rest[0].replace("~", "/"))

    def route_norange(self, rest, query):
        path = self.root_file("/".join(rest))
        if path is None:
            return self.not_found()
        self.file_headers(path, ranges=False)
        with open(path, "rb") as source:
            self.send_bytes(source.read())

    def route_nolength(self, rest, query):
        path = self.root_file("/".join(rest))
        if path is None:
            return self.not_found()
        self.file_headers(path, length=False, ranges=False)
        with open(path, "rb") as source:
            self.send_bytes(source.read())

    def route_chunked(self, rest, query):
        path = self.root_file("/".join(rest))
        if path is None:
            return self.not_found()
        self.protocol_version = "HTTP/1.1"
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        with open(path, "rb") as source:
            data = source.read()
        for start in range(0, len(data), 4096):
            piece = data[start : start + 4096]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def route_redirect(self, rest, query):
        if len(rest) < 2 or not rest[0].isdigit():
            return self.not_found()
        hops = int(rest[0])
        target = "/" + "/".join(rest[1:]) if hops <= 1 else "/redirect/%d/%s" % (hops - 1, "/".join(rest[1:]))
        if self.path.find("?") >= 0:
            target += self.path[self.path.find("?") :]
        self.text(302, "redirect\n", [("Location", target)])

    def route_loop(self, rest, query):
        self.text(302, "loop\n", [("Location", self.path)])

    def route_status(self, rest, query):
        code = int(rest[0]) if rest and rest[0].isdigit() else 500
        self.text(code, "status %d\n" % code)

    def route_stall(self, rest, query):
        if rest and rest[0] == "accept":
            return self.hold()
        if len(rest) >= 2 and rest[0] == "headers":
            path = self.root_file("/".join(rest[1:]))
            if path is None:
                return self.not_found()
            self.file_headers(path)
            self.wfile.flush()
            return self.hold()
        if len(rest) >= 3 and rest[0] == "body" and rest[1].isdigit():
            path = self.root_file("/".join(rest[2:]))
            if path is None:
                return self.not_found()
            self.file_headers(path)
            with open(path, "rb") as source:
                self.send_bytes(source.read(int(rest[1])))
            self.wfile.flush()
            return self.hold()
        self.not_found()

    def route_drop(self, rest, query, length=True):
        if len(rest) < 2 or not rest[0].isdigit():
            return self.not_found()
        path = self.root_file("/".join(rest[1:]))
        if path is None:
            return self.not_found()
        self.file_headers(path, length=length, ranges=False)
        with open(path, "rb") as source:
            self.send_bytes(source.read(int(rest[0])))
        self.wfile.flush()
        self.close_connection = True

    def route_dropnolength(self, rest, query):
        self.route_drop(rest, query, length=False)

    def route_trickle(self, rest, query):
        if len(rest) < 2 or not rest[0].isdigit():
            return self.not_found()
        path = self.root_file("/".join(rest[1:]))
        if path is None:
            return self.not_found()
        self.file_headers(path, ranges=False)
        with open(path, "rb") as source:
            self.send_bytes(source.read(), rate=max(1, int(rest[0])))

    def route_radio(self, rest, query):
        path = self.root_file("/".join(rest))
        if path is None:
            return self.not_found()
        with open(path, "rb") as source:
            audio = source.read()
        if not audio:
            return self.not_found()
        wants_icy = self.headers.get("Icy-MetaData", "0").strip() == "1"
        metaint = int(query.get("metaint", "8192")) if wants_icy else 0
        every = max(1, int(query.get("every", "4")))
        seconds = float(query["seconds"]) if "seconds" in query else None
        titles = query["titles"].split("|") if "titles" in query else None
        repeat = query.get("repeat") == "1"
        rate = int(query["rate"]) if "rate" in query else None
        limit = int(query["limit"]) if "limit" in query else None
        identifier = query.get("id")
        encoding = query.get("encoding", "utf-8")

        if query.get("shoutcast") == "1":
            self.wfile.write(b"ICY 200 OK\r\n")
        else:
            self.send_response_only(200)
        headers = [("Content-Type", "audio/mpeg")]
        name = query.get("name", "Fermata Test Radio")
        genre = query.get("genre", "Test")
        if name:
            # send_header writes Latin-1: pass the encoded bytes through it unchanged.
            headers.append(("icy-name", name.encode(encoding).decode("latin-1")))
        if genre:
            headers.append(("icy-genre", genre))
        if query.get("url"):
            headers.append(("icy-url", query["url"]))
        if metaint > 0:
            headers.append(("icy-metaint", str(metaint)))
        for key, value in headers:
            self.send_header(key, value)
        self.end_headers()

        def title(index):
            return titles[index % len(titles)] if titles else "Title %d" % (index + 1)

        started = time.monotonic()
        position = 0
        sent_audio = 0
        block = 0
        last_title = None
        while limit is None or sent_audio < limit:
            piece_length = metaint if metaint > 0 else 8192
            if limit is not None:
                piece_length = min(piece_length, limit - sent_audio)
            piece = bytearray()
            while len(piece) < piece_length:
                take = min(piece_length - len(piece), len(audio) - position)
                piece += audio[position : position + take]
                position = (position + take) % len(audio)
            if not self.send_bytes(bytes(piece), rate):
                return
            sent_audio += len(piece)
            count_sent(identifier, len(piece))
            if metaint > 0 and len(piece) == metaint:
                index = int((time.monotonic() - started) / seconds) if seconds else block // every
                current = title(index)
                if current != last_title or repeat:
                    text = ("StreamTitle='%s';" % current).encode(encoding)
                    length = (len(text) + 15) // 16
                    meta = bytes([length]) + text + b"\0" * (length * 16 - len(text))
                    last_title = current
                else:
                    meta = b"\0"
                if not self.send_bytes(meta):
                    return
                count_sent(identifier, len(meta))
                block += 1
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def watch_parent(parent, lifetime, server):
    deadline = time.monotonic() + lifetime
    while time.monotonic() < deadline and os.getppid() == parent:
        time.sleep(0.5)
    server.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the directory served")
    parser.add_argument("--port-file", help="write the port here once listening")
    parser.add_argument("--lifetime", type=float, default=900, help="stop after this many seconds")
    parser.add_argument("--stall", type=float, default=300, help="how long stalls hold a connection")
    arguments = parser.parse_args()

    server = Server(("127.0.0.1", 0), Handler)
    server.root = arguments.root
    server.stall = arguments.stall
    port = server.server_address[1]
    if arguments.port_file:
        temporary = arguments.port_file + ".tmp"
        with open(temporary, "w") as out:
            out.write("%d\n" % port)
        os.rename(temporary, arguments.port_file)
    print("PORT %d" % port, flush=True)
    threading.Thread(target=watch_parent, args=(os.getppid(), arguments.lifetime, server), daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    server.server_close()


if __name__ == "__main__":
    main()
