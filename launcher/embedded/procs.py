"""Process facts from /proc: whether a pid is really alive, and which processes belong to a data dir.

Every process that ``npcworld run`` starts (services, relay, gateway, Celery workers and their pool, the
broker) carries ``NPCWORLD_STACK=<absolute data dir>`` in its environment, so whatever a crashed run left
behind can be found and stopped by the next one; PostgreSQL is found by its data directory instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

__all__ = ["STACK_MARKER", "alive", "processes_of", "signal_all", "wait_gone"]

STACK_MARKER = "NPCWORLD_STACK"


def alive(pid: int) -> bool:
    """True when ``pid`` runs; a zombie (exited, not yet reaped) is not alive and is reaped if it is ours."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user (the ``pgserver`` user of a root install)
    if _state(pid) in {"Z", "X", None}:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        return False
    return True


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[0]  # the name in parentheses may contain spaces


def processes_of(home: Path, *, exclude: tuple[int, ...] = ()) -> list[int]:
    """Live processes started for the data dir ``home`` (by the environment marker), oldest first."""
    marker = f"{STACK_MARKER}={home.resolve()}".encode()
    skip = {os.getpid(), *exclude}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in skip:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0") and alive(int(entry.name)):
            found.append(int(entry.name))
    return sorted(found)


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait up to ``timeout`` s for ``pids`` to exit; those still alive."""
    deadline = time.monotonic() + timeout
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left
