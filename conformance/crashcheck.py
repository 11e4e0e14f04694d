"""Kill a server with SIGKILL while a client changes things; check that what was acknowledged survived.

Used by the sticker and stored-playlist crash tests.  A round: start the server, check that its
state equals the model, let a client send random changes one at a time (each acknowledged change
is applied to the model), SIGKILL the server at a random moment.  The one change sent but not yet
acknowledged may or may not have landed: the next state must be the model with or without it.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from typing import Callable

import mpdtest

#: A change: (protocol line, opaque description for `apply`).
NextChange = Callable[[random.Random, dict], tuple[str, object]]
Apply = Callable[[dict, object], dict]
ReadState = Callable[[mpdtest.Server], dict]


def _client(port: int, rng: random.Random, model: dict, pending: list,
            next_change: NextChange, apply: Apply) -> None:
    try:
        client = mpdtest.LineClient(port)
    except OSError:
        return
    try:
        while True:
            line, change = next_change(rng, model)
            pending[:] = [change]
            reply = client.command(line)
            if reply.endswith(b"OK\n"):
                updated = apply(model, change)
                model.clear()
                model.update(updated)
            pending[:] = []
    except (OSError, ValueError):
        return
    finally:
        client.close()


def _differences(found: dict, expected: dict) -> str:
    """What `found` has that `expected` lacks or holds otherwise, and the reverse, one line each."""
    lines = []
    for key in sorted(set(found) | set(expected), key=repr):
        if found.get(key, _MISSING) != expected.get(key, _MISSING):
            lines.append(f"  {key!r}: found {found.get(key, _MISSING)!r}, expected {expected.get(key, _MISSING)!r}")
    return "\n".join(lines)


_MISSING = "(missing)"


def _check(server: mpdtest.Server, found: dict, expected: list[dict], what: str) -> None:
    """Asserts that `found` is one of `expected`; else says how it differs from the first, with the log."""
    assert found in expected, (f"{what}:\n{_differences(found, expected[0])}\n"
                               f"{len(found)} found, {len(expected[0])} expected\n{server.log_tail(60)}")


def kill_rounds(server: mpdtest.Server, rounds: int, rng: random.Random,
                next_change: NextChange, apply: Apply, read_state: ReadState,
                after_round: Callable[[], None] = lambda: None) -> None:
    """Run `rounds` rounds of changes and SIGKILLs on `server` (not started yet)."""
    model: dict = {}
    for number in range(rounds):
        server.start()
        _check(server, read_state(server), [model], f"round {number}: state after restart")
        pending: list = []
        worker = threading.Thread(target=_client,
                                  args=(server.port, rng, model, pending, next_change, apply))
        worker.start()
        time.sleep(rng.uniform(0.01, 0.3))
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        worker.join(timeout=10)
        assert not worker.is_alive(), "the client did not notice the kill"
        server.proc = None
        if pending:
            server.start()
            on_disk = read_state(server)
            server.stop()
            server.proc = None
            _check(server, on_disk, [model, apply(model, pending[0])], f"round {number}: change in flight")
            model.clear()
            model.update(on_disk)
        after_round()
    server.start()
    _check(server, read_state(server), [model], "after the last round")
    server.stop()
