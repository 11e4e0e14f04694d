#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A test WebDAV server (read only) for Fermata's WebDAV storage and differential tests against mpd's curl storage.

Python's standard library only. Binds 127.0.0.1 (nothing else, ever) on a port the system chooses, serves the
files of one directory, and stops by itself: when the process that started it goes away, or after --lifetime
seconds (default 900).

Usage:
    tools/webdavserver.py --root DIR [--port-file FILE] [--lifetime SECONDS] [--stall SECONDS]
                          [--tls CERT KEY]

With --tls it speaks https (the certificate and key files in PEM) instead of http.

It prints `PORT <n>` on its standard output (and writes `<n>` to --port-file, atomically) once it listens. Each
request is logged to standard error, and kept for /log.

Methods: PROPFIND (`Depth: 0` or `1`; any other depth is refused with 403) answers `207 Multi-Status` with
`Content-Type: text/xml; charset="utf-8"`: one `<D:response>` for the resource, and at Depth 1 one for each entry
of a collection, each with an `<D:href>` (escaped; a collection's ends in a slash), and one `<D:propstat>` with
`resourcetype`, `getcontentlength` (files), `getlastmodified` (RFC 1123) and `getcontenttype`, `HTTP/1.1 200 OK`.
GET and HEAD answer files with Content-Length, `Accept-Ranges: bytes` and Last-Modified; `Range: bytes=A-[B]` gives
206 with Content-Range (416 past the end). A missing resource answers 404.

URL scheme (PATH is a path under --root, escaped):

    /dav/PATH            the tree as above, relative hrefs (`/dav/a%20b.flac`).
    /absolute/PATH       the same with absolute hrefs, their first segment upper-cased
                         (`http://127.0.0.1:P/ABSOLUTE/…`): mpd compares the listed path with the requested one
                         without regard to case.
    /quirks/PATH         the same, in the shapes mpd's parser takes its own way: a file whose name has `404first`
                         gets a propstat `HTTP/1.1 404 Not Found` before its 200 one; `newline` a status ending in a
                         line break; `nohref` its href after its propstat; `nodate` no getlastmodified; `baddate`
                         an unreadable one; `ns` its elements in a default namespace (no prefix). (An href after the
                         propstat is kept by mpd's parser for the next response, whose own href it then prefixes.)
                         A listing also names an entry two levels down, one outside the collection, and one whose
                         status is 404.
    /missing/PATH        404 Not Found (text/html) to everything.
    /plain/PATH          207 with `Content-Type: text/plain`.
    /malformed/PATH      207 text/xml with a body that is not well-formed XML.
    /empty/PATH          207 text/xml with an empty body.
    /status/CODE/PATH    CODE (with an XML content type and a multistatus body, which must not count).
    /stall/PATH          reads the PROPFIND and never answers (closes after --stall seconds, default 300).
    /redirect/PATH       301 to /dav/PATH (one redirect, which mpd follows).
    /redirect2/PATH      301 to /redirect/PATH (two redirects: one too many for mpd).
    /log                 the requests so far, one `METHOD PATH depth=D` line each (text/plain).
    /served              the bytes of files written to clients so far (whole 64 KiB chunks the socket took), one
                         `BYTES PATH` line each (text/plain), for what a scan reads of a song.
"""

import argparse
import email.utils
import mimetypes
import os
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(".")
LOG: list[str] = []
STALL = 300.0
LOG_LOCK = threading.Lock()
SERVED: dict[str, int] = {}

MODES = ("dav", "absolute", "quirks")


def _http_date(seconds: float) -> str:
    return email.utils.formatdate(seconds, usegmt=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "webdavserver"

    def log_message(self, format, *args):  # noqa: A002 (BaseHTTPRequestHandler's name)
        sys.stderr.write("webdavserver: " + (format % args) + "\n")

    def _record(self) -> None:
        with LOG_LOCK:
            LOG.append(f"{self.command} {self.path} depth={self.headers.get('Depth', '')}")

    def _reply(self, status: int, body: bytes = b"", content_type: str | None = "text/plain",
               headers: dict[str, str] | None = None, head: bool = False) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self._write(body)

    def _write(self, body: bytes) -> None:
        """Writes `body` in 64 KiB chunks, adding each one the socket takes to SERVED (a client that closes early
        ends the reply)."""
        for start in range(0, len(body), 65536):
            chunk = body[start:start + 65536]
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                self.close_connection = True
                return
            with LOG_LOCK:
                SERVED[self.path] = SERVED.get(self.path, 0) + len(chunk)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length", "0") or "0")
        return self.rfile.read(length) if length > 0 else b""

    def _split(self) -> tuple[str, str]:
        """The mode (first segment) and the unescaped rest of the path."""
        path = urllib.parse.urlsplit(self.path).path
        parts = path.lstrip("/").split("/", 1)
        mode = parts[0]
        rest = parts[1] if len(parts) > 1 else ""
        return mode, urllib.parse.unquote(rest)

    def _local(self, rest: str) -> Path | None:
        target = (ROOT / rest).resolve()
        root = ROOT.resolve()
        if target != root and root not in target.parents:
            return None
        return target if target.exists() else None

    # MARK: - PROPFIND

    def do_PROPFIND(self) -> None:  # noqa: N802 (the method's name)
        self._record()
        self._read_body()
        mode, rest = self._split()
        if mode == "missing":
            return self._reply(404, b"<html><body>Not Found</body></html>", "text/html")
        if mode == "plain":
            return self._reply(207, b"hello, this is not XML\n", "text/plain")
        if mode == "malformed":
            return self._reply(207, b'<?xml version="1.0"?>\n<D:multistatus xmlns:D="DAV:"><D:response>'
                                    b'<D:href>/x</D:wrong></D:multistatus>', 'text/xml; charset="utf-8"')
        if mode == "empty":
            return self._reply(207, b"", "text/xml")
        if mode == "status":
            code, _, rest = rest.partition("/")
            return self._reply(int(code), self._multistatus("dav", rest, self._local(rest), 1),
                               'text/xml; charset="utf-8"')
        if mode == "stall":
            # Never answers; the connection is closed after a few minutes.
            time.sleep(STALL)
            self.close_connection = True
            return
        if mode == "redirect":
            return self._reply(301, b"", headers={"Location": "/dav/" + urllib.parse.quote(rest)})
        if mode == "redirect2":
            return self._reply(301, b"", headers={"Location": "/redirect/" + urllib.parse.quote(rest)})
        if mode not in MODES:
            return self._reply(404, b"no such mode\n")
        depth = self.headers.get("Depth", "infinity")
        if depth not in ("0", "1"):
            return self._reply(403, b"Depth must be 0 or 1\n")
        local = self._local(rest)
        if local is None:
            return self._reply(404, b"<html><body>Not Found</body></html>", "text/html")
        self._reply(207, self._multistatus(mode, rest, local, int(depth)), 'text/xml; charset="utf-8"')

    def _href(self, mode: str, rest: str, is_dir: bool) -> str:
        path = f"/{mode}/" + urllib.parse.quote(rest.strip("/"))
        if is_dir and not path.endswith("/"):
            path += "/"
        if mode == "absolute":
            return f"http://127.0.0.1:{self.server.server_address[1]}/ABSOLUTE" + path[len("/absolute"):]
        return path

    def _response(self, mode: str, rest: str, local: Path) -> str:
        stat = local.stat()
        is_dir = local.is_dir()
        name = local.name
        quirky = mode == "quirks"
        d = "" if quirky and "ns" in name.split(".")[0].split("-") else "D:"
        href = f"<{d}href>{self._href(mode, rest, is_dir)}</{d}href>"
        props = [f"<{d}resourcetype>{f'<{d}collection/>' if is_dir else ''}</{d}resourcetype>"]
        if not is_dir:
            props.append(f"<{d}getcontentlength>{stat.st_size}</{d}getcontentlength>")
            props.append(f"<{d}getcontenttype>{mimetypes.guess_type(name)[0] or 'application/octet-stream'}"
                         f"</{d}getcontenttype>")
        if not (quirky and "nodate" in name):
            date = "yesterday at noon, roughly" if quirky and "baddate" in name else _http_date(stat.st_mtime)
            props.append(f"<{d}getlastmodified>{date}</{d}getlastmodified>")
        status = "HTTP/1.1 200 OK\n" if quirky and "newline" in name else "HTTP/1.1 200 OK"
        propstat = f"<{d}propstat><{d}prop>{''.join(props)}</{d}prop><{d}status>{status}</{d}status></{d}propstat>"
        if quirky and "404first" in name:
            propstat = (f"<{d}propstat><{d}prop><{d}quota-used-bytes/></{d}prop>"
                        f"<{d}status>HTTP/1.1 404 Not Found</{d}status></{d}propstat>") + propstat
        inner = propstat + href if quirky and "nohref" in name else href + propstat
        if d == "":
            return f'<response xmlns="DAV:">{inner}</response>'
        return f"<D:response>{inner}</D:response>"

    def _multistatus(self, mode: str, rest: str, local: Path | None, depth: int) -> bytes:
        parts = ['<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">']
        if local is not None:
            parts.append(self._response(mode, rest, local))
            if depth == 1 and local.is_dir():
                for child in sorted(local.iterdir()):
                    parts.append(self._response(mode, f"{rest.strip('/')}/{child.name}".lstrip("/"), child))
                if mode == "quirks":
                    base = rest.strip("/")
                    deeper = f"/quirks/{base}/a/b/deeper.flac".replace("//", "/")
                    parts.append(f"<D:response><D:href>{deeper}</D:href><D:propstat><D:prop><D:resourcetype/>"
                                 f"</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")
                    parts.append("<D:response><D:href>/elsewhere/outside.flac</D:href><D:propstat><D:prop>"
                                 "<D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
                                 "</D:response>")
                    gone = f"/quirks/{base}/gone.flac".replace("//", "/")
                    parts.append(f"<D:response><D:href>{gone}</D:href><D:propstat><D:prop><D:resourcetype/>"
                                 f"</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response>")
        parts.append("</D:multistatus>\n")
        return "\n".join(parts).encode()

    # MARK: - GET

    def do_HEAD(self) -> None:  # noqa: N802 (the method's name)
        self._get(head=True)

    def do_GET(self) -> None:  # noqa: N802 (the method's name)
        self._get(head=False)

    def _get(self, head: bool) -> None:
        self._record()
        mode, rest = self._split()
        if mode == "log":
            with LOG_LOCK:
                text = "".join(line + "\n" for line in LOG)
            return self._reply(200, text.encode(), head=head)
        if mode == "served":
            with LOG_LOCK:
                text = "".join(f"{count} {path}\n" for path, count in SERVED.items())
            return self._reply(200, text.encode(), head=head)
        if mode in ("redirect", "redirect2"):
            target = "/dav/" if mode == "redirect" else "/redirect/"
            return self._reply(301, b"", headers={"Location": target + urllib.parse.quote(rest)}, head=head)
        local = self._local(rest) if mode in MODES else None
        if local is None or not local.is_file():
            return self._reply(404, b"<html><body>Not Found</body></html>", "text/html", head=head)
        data = local.read_bytes()
        headers = {"Accept-Ranges": "bytes", "Last-Modified": _http_date(local.stat().st_mtime)}
        content_type = mimetypes.guess_type(local.name)[0] or "application/octet-stream"
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            first, _, last = wanted[len("bytes="):].partition("-")
            start = int(first or "0")
            end = min(int(last), len(data) - 1) if last else len(data) - 1
            if start >= len(data):
                return self._reply(416, b"", headers={"Content-Range": f"bytes */{len(data)}"}, head=head)
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            return self._reply(206, data[start:end + 1], content_type, headers, head)
        self._reply(200, data, content_type, headers, head)


def main() -> None:
    global ROOT, STALL
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--port-file")
    parser.add_argument("--lifetime", type=float, default=900)
    parser.add_argument("--stall", type=float, default=300)
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = parser.parse_args()
    ROOT = Path(args.root)
    STALL = args.stall
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    if args.port_file:
        temporary = args.port_file + ".tmp"
        with open(temporary, "w") as f:
            f.write(str(port))
        os.replace(temporary, args.port_file)
    print(f"PORT {port}", flush=True)
    parent = os.getppid()

    def watchdog() -> None:
        deadline = time.monotonic() + args.lifetime
        while time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
