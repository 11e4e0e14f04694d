"""The snapserver configuration the Snapcast test and benchmark share: Debian's snapserver 0.26 reading a fifo
as FLAC at 48000:16:2, every port on loopback, zeroconf off (no system bus), its log on stderr."""

from __future__ import annotations

import os
from pathlib import Path


def config(root: Path, fifo: Path, *, host: str, name: str, tcp: int, stream: int, http: int | None = None,
           controlscript: Path | None = None, buffer_ms: int | None = None, log_filter: str = "*:info") -> str:
    """The text of snapserver.conf for a stream `name` read from `fifo`; its state lives under `root`. The
    HTTP interface is on only when `http` is given."""
    source = f"pipe://{fifo}?name={name}&mode=read&sampleformat=48000:16:2&codec=flac"
    if controlscript is not None:
        source += f"&controlscript={controlscript}"
    http_section = (f"enabled = true\nbind_to_address = {host}\nport = {http}\ndoc_root =\n" if http is not None
                    else "enabled = false\n")
    stream_section = f"bind_to_address = {host}\nport = {stream}\nsource = {source}\n"
    if buffer_ms is not None:
        stream_section += f"buffer = {buffer_ms}\n"
    return (f"[server]\nthreads = 2\ndatadir = {root}\n\n[http]\n{http_section}\n"
            f"[tcp]\nenabled = true\nbind_to_address = {host}\nport = {tcp}\n\n[stream]\n{stream_section}\n"
            f"[logging]\nsink = stderr\nfilter = {log_filter}\n")


def environment(root: Path, **extra: str) -> dict[str, str]:
    """The environment to start snapserver in: no system bus (so avahi-client publishes nothing), HOME in
    `root`, plus `extra`."""
    return {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={root / 'no-bus'}", "HOME": str(root), **extra}
