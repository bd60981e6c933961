"""`npcworld run` driven as a terminal or an operator would: its output, signals, what it leaves running."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path

from launcher.private_ports import free_port, private_api_env


class Run:
    """`npcworld run` in a process group of its own, as a terminal runs it; its output line by line."""

    def __init__(self, home: Path, *args: str) -> None:
        self.home, self.port = home, free_port()
        env = {
            **os.environ,
            "NPCWORLD_HOME": str(home),
            "NPCWORLD_KAFKA_PORT": str(free_port()),
            **private_api_env(),
        }
        env.pop("DATABASE_URL", None)
        env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", "run", "--port", str(self.port), *args],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        # A test that fails before ``finish`` leaves its run behind: its output pipe is closed when the Run is
        # collected (not left to warn in whichever test runs then), and a run still going is killed at exit.
        weakref.finalize(self, _abandon, self.proc)

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                assert self.proc.poll() is None, "npcworld run exited:\n" + self.output()
                continue
            self.seen.append(line)
            if re.search(pattern, line):
                return
        raise AssertionError(f"no line matching {pattern!r} within {timeout:.0f} s:\n" + self.output())

    def signal_group(self, sig: signal.Signals) -> None:
        os.killpg(self.proc.pid, sig)  # what Ctrl-C in a terminal (or a process manager) does

    def finish(self, timeout: float = 90) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError("npcworld run did not stop:\n" + self.output()) from None
        finally:
            self._reader.join(10)  # it ends with the output
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        return code

    def output(self) -> str:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen[-40:])


def _abandon(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()


def leftovers(home: Path) -> list[str]:
    """Processes of ``home``: the run's children and broker (by their marker), Postgres (by its data dir)."""
    home_bytes, found = str(home.resolve()).encode(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        marked = b"NPCWORLD_STACK=" + home_bytes in environ.split(b"\0")
        if state != "Z" and (home_bytes in cmdline or marked):
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")[:120]
            found.append(f"{entry.name} {command}")
    return found


def assert_nothing_left(home: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (left := leftovers(home)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, "still running:\n" + "\n".join(left)


def assert_stopped_quietly(run: Run, home: Path) -> None:
    code = run.finish()
    out = run.output()
    assert code == 0, out
    assert "Traceback" not in out, out
    assert re.search(r"^stopped", out, re.MULTILINE), out
    assert_nothing_left(home)
