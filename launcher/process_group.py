"""The child processes of a run: started, restarted with backoff when they exit, and stopped completely.

Each child leads a process group of its own, so a Ctrl-C in the terminal reaches only the supervisor, which
then stops the children in order; stopping kills what is left of each group (a Celery worker's pool too).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["BACKOFF_MAX_S", "ChildState", "Forcing", "ProcessGroup"]

_BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0  # the default longest wait (``npcworld run --restart-max``)
_STABLE_S = 60.0  # a child that ran this long is healthy again: its next restart is immediate


class Forcing(Protocol):
    """Says whether stopping should stop waiting and kill (a ``threading.Event`` or a signal flag)."""

    def is_set(self) -> bool: ...


@dataclass
class ChildState:
    """What ``status`` shows of one child: up or down since when, and how often it was restarted."""

    name: str
    pid: int | None
    up: bool
    since: float  # wall-clock time of the last start, or of the exit that left it down
    restarts: int


class ProcessGroup:
    """Child processes with their logs; ``restart_crashed`` restarts those that exited, with backoff."""

    def __init__(
        self, commands: dict[str, list[str]], env: dict[str, str], logs: Path,
        own_env: Mapping[str, Mapping[str, str]] | None = None, backoff_max_s: float = BACKOFF_MAX_S,
    ) -> None:
        """``env`` is every child's environment; ``own_env[name]`` adds to it for that child alone. A child
        that exits again within a minute of its start waits twice as long as the last time before it is
        started again, from 1 s up to ``backoff_max_s``."""
        if backoff_max_s < _BACKOFF_FIRST_S:
            raise ValueError(f"the longest restart wait must be at least {_BACKOFF_FIRST_S:g} s, "
                             f"got {backoff_max_s:g}")
        self.commands, self.env, self.logs = commands, env, logs
        self.backoff_max_s = backoff_max_s
        self.own_env = dict(own_env or {})
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        self.restarts: dict[str, int] = {}
        self._started: dict[str, float] = {}  # monotonic start time
        self._since: dict[str, float] = {}  # wall-clock time of the last start or exit
        self._retry_at: dict[str, float] = {}
        self._delay: dict[str, float] = {}
        self._lock = threading.Lock()  # rotation stops and starts the relay from another thread
        logs.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        for name in self.commands:
            self._spawn(name)

    def _spawn(self, name: str) -> None:
        with (self.logs / f"{name}.log").open("ab") as log:
            self.children[name] = subprocess.Popen(
                self.commands[name], env={**self.env, **self.own_env.get(name, {})}, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, process_group=0,
            )
        self._started[name], self._since[name] = time.monotonic(), time.time()

    def restart_crashed(self) -> list[str]:
        """Restart children that exited, each no sooner than its backoff allows; the names restarted."""
        restarted, now = [], time.monotonic()
        with self._lock:
            for name, proc in list(self.children.items()):
                if proc.poll() is None:
                    continue
                if name not in self._retry_at:  # just noticed: schedule by how long it had run
                    ran = now - self._started[name]
                    delay = 0.0 if ran >= _STABLE_S else min(
                        self.backoff_max_s, max(_BACKOFF_FIRST_S, 2 * self._delay.get(name, 0.0)))
                    self._delay[name], self._retry_at[name] = delay, now + delay
                    self._since[name] = time.time()
                    _kill_group(proc.pid)  # whatever it left in its group (e.g. a worker's pool)
                if now >= self._retry_at[name]:
                    del self._retry_at[name]
                    self.restarts[name] = self.restarts.get(name, 0) + 1
                    self._spawn(name)
                    restarted.append(name)
        return restarted

    def states(self) -> list[ChildState]:
        with self._lock:
            return [ChildState(name, proc.pid if proc.poll() is None else None, proc.poll() is None,
                               self._since[name], self.restarts.get(name, 0))
                    for name, proc in self.children.items()]

    def stop_one(self, name: str, timeout: float = 15.0) -> None:
        """Stop one child gracefully; it stays stopped (``restart_crashed`` skips it) until ``start_one``."""
        with self._lock:
            proc = self.children.pop(name)
            self._retry_at.pop(name, None)
        _stop([proc], timeout, threading.Event())

    def start_one(self, name: str) -> None:
        with self._lock:
            self._spawn(name)

    def alive(self) -> int:
        return sum(p.poll() is None for p in self.children.values())

    def stop(self, force: Forcing | None = None, timeout: float = 15.0) -> int:
        """Stop every child (SIGTERM, then SIGKILL after ``timeout`` s or as soon as ``force`` is set).

        Returns:
            How many children were running.
        """
        with self._lock:
            procs = list(self.children.values())
            self._retry_at.clear()
        running = sum(p.poll() is None for p in procs)
        _stop(procs, timeout, force or threading.Event())
        return running


def _stop(procs: list[subprocess.Popen[bytes]], timeout: float, force: Forcing) -> None:
    for proc in procs:
        if proc.poll() is None and not force.is_set():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
    deadline = time.monotonic() + timeout
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline and not force.is_set():
        time.sleep(0.05)
    for proc in procs:
        _kill_group(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)


def _kill_group(pgid: int) -> None:
    """SIGKILL whatever still runs in the child's process group (the child leads it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
