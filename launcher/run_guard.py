"""What stops a run's processes when the run itself cannot: a lock per data dir and a guardian process.

``npcworld run`` holds ``<home>/run.lock`` (``flock``) while it or its guardian lives. The guardian is a small
process in a session of its own that shares the lock and a pipe with the supervisor. If the pipe closes
without the supervisor's word that it stopped everything (it was SIGKILLed, the interpreter crashed, the
machine ran out of memory), the guardian stops every process of the data dir, the broker and PostgreSQL,
and only then exits, which frees the lock: the next run never meets a half-stopped one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from launcher.embedded.procs import processes_of, signal_all, wait_gone
from npcworld.errors import InfraError

__all__ = ["Guardian", "RunLock", "guarded", "run_holder", "run_state", "stop_leftovers"]

_CLEAN = b"stopped\n"


class RunLock:
    """One ``npcworld run`` per data dir; waits for a previous run that is still being stopped."""

    def __init__(self, home: Path) -> None:
        self.path = home / "run.lock"
        self.fd = -1

    def acquire(self, *, wait: float = 60.0, on_wait: Callable[[str], None] = lambda _: None,
                cancelled: Callable[[], bool] = lambda: False) -> None:
        """Take the lock, waiting up to ``wait`` s for a guardian that is stopping a crashed run.

        Raises:
            InfraError: another run of this data dir is alive, the previous one did not finish stopping,
                or ``cancelled`` became true while waiting.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline, told = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = run_holder(self.path.parent)
                if holder is not None:
                    os.close(self.fd)
                    raise InfraError(f"npcworld run (pid {holder}) is already running on {self.path.parent}; "
                                     f"stop it first (Ctrl-C in its terminal, or kill {holder})") from None
                if cancelled():
                    os.close(self.fd)
                    raise InfraError("stopped while waiting for the previous run to stop") from None
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise InfraError(f"the previous run of {self.path.parent} is still stopping after "
                                     f"{wait:.0f} s; see {self.path.parent}/logs/guardian.log") from None
                if not told:
                    on_wait(f"waiting for the previous run of {self.path.parent} to finish stopping…")
                    told = True
                time.sleep(0.2)
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        if self.fd >= 0:
            os.ftruncate(self.fd, 0)
            os.close(self.fd)
            self.fd = -1


def run_holder(home: Path) -> int | None:
    """The pid of the live ``npcworld run`` of ``home``, if one runs (a guardian alone does not count)."""
    try:
        pid = int((home / "run.lock").read_text() or "0")
    except (FileNotFoundError, ValueError):
        return None
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    try:
        fd = os.open(home / "run.lock", os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:  # the pid could have been reused by an unrelated process: the lock says whether a run holds it
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return pid
    finally:
        os.close(fd)
    return None


def run_state(home: Path) -> dict[str, object]:
    """What the live run of ``home`` last wrote about itself (``write_run_state``), with its age."""
    holder = run_holder(home)
    if holder is None:
        return {"running": False}
    try:
        state = json.loads((home / "run.json").read_text())
    except (FileNotFoundError, ValueError):
        return {"running": True, "pid": holder, "starting": True}
    return {"running": True, **state, "seconds_since_update": round(time.time() - state["updated_at"], 1)}


class Guardian:
    """The guardian process of one run (see the module docstring)."""

    def __init__(self, home: Path, lock: RunLock) -> None:
        log = (home / "logs")
        log.mkdir(parents=True, exist_ok=True)
        with (log / "guardian.log").open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "launcher.run_guard", str(home.resolve())],
                stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                pass_fds=(lock.fd,), start_new_session=True,
            )

    def dismiss(self) -> None:
        """Everything is stopped: the guardian exits without doing anything."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write(_CLEAN)
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


@contextlib.contextmanager
def guarded(home: Path) -> Iterator[None]:
    """A command that owns a private stack under ``home`` (``npcworld simulate``, ``npcworld test``) stops it
    however it ends: SIGTERM and SIGHUP unwind it like Ctrl-C (so its ``finally`` blocks stop the services and
    the stack), and a guardian process stops whatever is left if it is SIGKILLed. Its children must carry
    ``STACK_MARKER=<home>`` in their environment for the guardian to find them."""
    lock = RunLock(home)
    lock.acquire()
    guardian = Guardian(home, lock)
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        guardian.dismiss()
        lock.release()


def stop_leftovers(home: Path, *, exclude: tuple[int, ...] = (), timeout: float = 10.0) -> int:
    """Stop every process marked as belonging to ``home`` (SIGTERM, then SIGKILL); how many there were."""
    pids = processes_of(home, exclude=exclude)
    signal_all(pids, signal.SIGTERM)
    left = wait_gone(pids, timeout)
    signal_all(left, signal.SIGKILL)
    wait_gone(left, 5)
    return len(pids)


def _guard(home: Path) -> None:
    from launcher.embedded import EmbeddedStack

    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # only the supervisor's end of the pipe decides
    word = sys.stdin.buffer.read()
    if word == _CLEAN:
        return
    print(f"{time.strftime('%H:%M:%S')} the supervisor of {home} ended without stopping; "
          "stopping its processes", flush=True)
    count = stop_leftovers(home)
    stopped = EmbeddedStack(home).down()
    print(f"{time.strftime('%H:%M:%S')} stopped {count} processes and {', '.join(stopped) or 'no stack'}",
          flush=True)


if __name__ == "__main__":
    _guard(Path(sys.argv[1]))
