"""The supervisor's view of the embedded Postgres and broker: checked every tick, restarted when dead.

A component that died is started again at once (by ``npcworld up``, which starts whatever is not running),
and again with a doubling delay (up to a minute) while that keeps failing; what is down, since when, and how
often it was restarted is what ``status`` shows.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from launcher.embedded import EmbeddedStack, StackState
from launcher.embedded.procs import STACK_MARKER
from launcher.process_group import ChildState
from npcworld.errors import InfraError
from npcworld.messaging.kafka import ensure_topics

__all__ = ["ComponentHealth", "StackHealth", "bring_up", "write_run_state"]

logger = logging.getLogger(__name__)

_RETRY_MAX_S = 60.0


@dataclass
class ComponentHealth:
    up: bool = True
    since: float = field(default_factory=time.time)  # wall-clock time it came up or went down
    restarts: int = 0
    error: str | None = None

    def describe(self, name: str) -> str:
        if self.up:
            return f"{name} up" + (f" ({self.restarts} restarts)" if self.restarts else "")
        return f"{name} DOWN since {time.strftime('%H:%M:%S', time.localtime(self.since))}" + (
            f" ({self.error})" if self.error else " (restarting)")


class StackHealth:
    """Liveness of one embedded stack and its restarts (see the module docstring)."""

    def __init__(self, stack: EmbeddedStack, say: Callable[[str], None]) -> None:
        self.stack, self.say = stack, say
        self.postgres = ComponentHealth()
        self.kafka = ComponentHealth()
        self._retry_at, self._delay = 0.0, 0.0

    def check(self) -> None:
        """Start again whichever component is dead (a zombie broker counts as dead)."""
        down: dict[str, ComponentHealth] = {}
        for name, health, alive in (("postgres", self.postgres, self.stack.postgres_alive),
                                    ("kafka", self.kafka, self.stack.broker_alive)):
            if alive():
                if not health.up:  # brought back by someone else (e.g. ``npcworld up``)
                    health.up, health.since, health.error = True, time.time(), None
                continue
            down[name] = health
            if health.up:
                health.up, health.since = False, time.time()
                self.say(f"[{time.strftime('%H:%M:%S')}] {name} is down; restarting it")
        if not down or time.monotonic() < self._retry_at:
            return
        try:
            bring_up(self.stack.home)
            if "kafka" in down:  # an empty broker: the relay finds it fresh and republishes what is needed
                asyncio.run(ensure_topics(f"127.0.0.1:{self.stack.kafka_port}"))
        except Exception as exc:  # kept down and tried again later; the run goes on
            self._delay = min(_RETRY_MAX_S, max(1.0, 2 * self._delay))
            self._retry_at = time.monotonic() + self._delay
            for health in down.values():
                health.error = f"{type(exc).__name__}: {exc}"[:200]
            logger.warning("restarting %s failed: %s", ", ".join(down), exc)
            return
        self._delay = 0.0
        for name, health in down.items():
            health.restarts += 1
            health.up, health.since, health.error = True, time.time(), None
            self.say(f"[{time.strftime('%H:%M:%S')}] {name} restarted")


def bring_up(home: Path) -> StackState:
    """``npcworld up`` for ``home`` in a process group of its own; the stack's endpoints.

    A Ctrl-C in the terminal reaches the whole foreground group: started in-process, initdb, pg_ctl or the
    broker could be killed half-way (a half-initialised data dir does not start again). Isolated, the start
    finishes and the supervisor then stops what it started.

    Raises:
        InfraError: the stack did not come up (the reason ``npcworld up`` gave).
    """
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "launcher.cli", "--home", str(home), "up"], capture_output=True,
        stdin=subprocess.DEVNULL, process_group=0, env={**os.environ, STACK_MARKER: str(home)}, check=False,
    )
    with (logs / "stack.log").open("ab") as log:
        log.write(done.stdout + done.stderr)
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
        reason = next((ln.removeprefix("error: ") for ln in reversed(lines) if ln.startswith("error: ")),
                      lines[-1] if lines else f"exit code {done.returncode}")
        raise InfraError(f"the embedded stack did not start: {reason} (see {logs / 'stack.log'})")
    return StackState(**json.loads((home / "stack.json").read_text()))


def write_run_state(
    home: Path, health: StackHealth, children: list[ChildState], database: str | None
) -> None:
    """``<home>/run.json``: what ``npcworld status`` shows of a live run (written atomically every tick)."""
    def stamped(item: object) -> dict[str, object]:
        fields = asdict(item)  # type: ignore[call-overload]
        return {**fields, "since": datetime.fromtimestamp(fields["since"], UTC).isoformat(timespec="seconds")}

    state = {
        "pid": os.getpid(),
        "updated_at": time.time(),
        "postgres": stamped(health.postgres),
        "kafka": stamped(health.kafka),
        "database_reachable": database is None,
        "database_error": database,
        "processes": [stamped(c) for c in children],
    }
    tmp = home / "run.json.tmp"
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(home / "run.json")
