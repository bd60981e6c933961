"""``npcworld run``: the embedded stack plus every service process, supervised until Ctrl-C.

The demo town runs live; its progress (world clock, a few NPC activities, events/s) shows every two seconds.
The embedded broker is replaced by an empty one every ``rotate_events`` events (see
``launcher.embedded.rotation``), so a backend left running for days does not slow down or grow.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import click
from psycopg_pool import AsyncConnectionPool

import services
from launcher.demo import DEMO_TEMPLATE, demo_tenant, demo_world
from launcher.embedded import EmbeddedStack
from launcher.embedded.broker import DEFAULT_ROTATE_EVENTS
from launcher.embedded.procs import STACK_MARKER
from launcher.embedded.rotation import RotationResult, rotate_broker, rotation_due
from launcher.instances import instance_env, instance_name
from launcher.process_group import BACKOFF_MAX_S, ProcessGroup
from launcher.run_guard import Guardian, RunLock, stop_leftovers
from launcher.run_progress import Progress, progress_line, stored_events, world_progress
from launcher.stack_health import StackHealth, bring_up, write_run_state
from npcworld.aio import loop_name
from npcworld.db import open_pool
from npcworld.errors import InfraError
from npcworld.service_auth import TOKEN_ENV

__all__ = [
    "ProcessGroup", "SignalFlag", "StopSignals", "Supervisor", "process_commands", "rotate_group_broker",
]

_ROTATION_RETRY_S = 600.0  # after a failed rotation, carry on with the current broker this long

# Every service package with a consumer entrypoint runs as its own process.
_SERVICES = Path(services.__file__).resolve().parent
SERVICE_MODULES = tuple(sorted(p.parent.name for p in _SERVICES.glob("*/consumer.py")))
# Services with Celery jobs also run a worker (``celery -A services.<svc>.worker worker``).
WORKER_MODULES = tuple(sorted(p.parent.name for p in _SERVICES.glob("*/worker.py")))


def process_commands(port: int | None, instances: Mapping[str, int] | None = None) -> dict[str, list[str]]:
    """The relay, the services (one process each, or ``instances[svc]``: see ``launcher.instances``), their
    Celery workers, and the gateway's API on ``port`` (None: no API; its projection consumer runs either way,
    as ``gateway-projection``)."""
    py = sys.executable
    cmds = {"relay": [py, "-m", "launcher.cli", "relay"]}
    for svc in SERVICE_MODULES:
        for index in range(1, (instances or {}).get(svc, 1) + 1):
            cmds[instance_name(svc, index)] = [py, "-m", f"services.{svc}.consumer"]
    for svc in WORKER_MODULES:
        cmds[f"{svc}-worker"] = [py, "-m", "celery", "-A", f"services.{svc}.worker", "worker",
                                 "--loglevel", "WARNING"]
    if port is not None:
        cmds["gateway"] = [
            py,
            "-m",
            "uvicorn",
            "services.gateway.api:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--loop",
            loop_name(),
        ]
    return cmds


async def rotate_group_broker(
    pool: AsyncConnectionPool, stack: EmbeddedStack, group: ProcessGroup
) -> RotationResult:
    """Replace ``stack``'s broker with an empty one under the running ``group`` (its relay is stopped and
    started again; its consumer loops park and resume by themselves)."""
    async def restart_broker() -> None:
        await asyncio.to_thread(stack.restart_broker)

    return await rotate_broker(
        pool,
        f"127.0.0.1:{stack.kafka_port}",
        stop_relay=lambda: asyncio.to_thread(group.stop_one, "relay"),
        restart_broker=restart_broker,
        start_relay=lambda: asyncio.to_thread(group.start_one, "relay"),
    )


class SignalFlag:
    """A flag a signal handler may set. ``threading.Event.set`` takes the event's lock, which the interrupted
    main thread may be holding (inside ``Event.wait``): setting it from a handler can deadlock the run. This
    one is a plain attribute; ``wait`` polls it in short sleeps, which a signal cuts short."""

    _POLL_S = 0.05

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self._set and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(self._POLL_S, left))
        return self._set


class StopSignals:
    """SIGINT, SIGTERM and SIGHUP ask the run to stop; a second one forces a fast (still complete) stop."""

    def __init__(self) -> None:
        self.requested, self.force = SignalFlag(), SignalFlag()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, _signum: int, _frame: object) -> None:
        # Only flags: printing here could re-enter a write the main thread is in the middle of.
        (self.force if self.requested.is_set() else self.requested).set()


class Supervisor:
    """Starts the stack, the relay, the services and the gateway; keeps them all alive (a dead Postgres or
    broker is restarted like a crashed child); rotates the embedded broker every ``rotate_events`` events
    (0: never); and stops everything however the run ends (see ``launcher.run_guard`` for SIGKILL)."""

    def __init__(
        self, home: Path, *, port: int, demo: bool, rotate_events: int = DEFAULT_ROTATE_EVENTS,
        instances: Mapping[str, int] | None = None, template: str = DEMO_TEMPLATE,
        restart_max_s: float = BACKOFF_MAX_S,
    ) -> None:
        self.home = home.resolve()
        self.restart_max_s = restart_max_s
        self.template = template
        self.port = port
        self.demo = demo
        self.rotate_events = rotate_events
        self.instances = dict(instances or {})
        self._next_rotation_try = 0.0

    def run(self) -> None:
        signals = StopSignals()
        lock = RunLock(self.home)
        lock.acquire(on_wait=_say, cancelled=signals.requested.is_set)
        guardian = Guardian(self.home, lock)
        stack = EmbeddedStack(self.home)
        group: ProcessGroup | None = None
        try:
            if left := stop_leftovers(self.home, exclude=(guardian.proc.pid, *stack.broker_pids())):
                _say(f"stopped {left} processes left behind by an earlier run of {self.home}")
            try:
                state = bring_up(self.home)
            except InfraError:
                if signals.requested.is_set():  # a Ctrl-C reached the start as it began: a stop, not a fault
                    return
                raise
            _say(f"embedded stack up: postgres {state.database_url}  kafka {state.kafka_bootstrap_servers}")
            if signals.requested.is_set():
                return
            # One process per service: each may be a static group member (npcworld.messaging.kafka), so a
            # restarted one gets its partitions back at once.
            # A fresh service credential per run (unless one is given): even on loopback, another local
            # user cannot read the memory service's internal API.
            env = {"KAFKA_GROUP_INSTANCE_ID": "run", TOKEN_ENV: secrets.token_urlsafe(24),
                   **state.client_env(dict(os.environ)), STACK_MARKER: str(self.home)}
            shared, own = instance_env(self.instances, env)
            group = ProcessGroup(process_commands(self.port, self.instances), env | shared,
                                 self.home / "logs", own_env=own, backoff_max_s=self.restart_max_s)
            group.start()
            if self.demo:
                self._seed_demo(state.database_url, signals)
            _say(f"API on http://127.0.0.1:{self.port}/docs  logs in {self.home / 'logs'}/  (Ctrl-C stops)")
            self._supervise(state.database_url, stack, group, signals)
        finally:
            self._stop(stack, group, signals)
            guardian.dismiss()
            lock.release()

    def _seed_demo(self, database_url: str, signals: StopSignals) -> None:
        """Creates the demo town in the background: the run is supervised (and stoppable) meanwhile."""
        def seed() -> None:
            from launcher.demo import seed_demo

            try:
                _say(seed_demo(database_url, self.port, self.home, self.template))
            except Exception as exc:
                if not signals.requested.is_set():
                    _say(f"the demo town was not set up ({type(exc).__name__}: {exc}); the backend runs on")

        threading.Thread(target=seed, name="demo", daemon=True).start()

    def _supervise(self, database_url: str, stack: EmbeddedStack, group: ProcessGroup,
                   signals: StopSignals) -> None:
        health, last = StackHealth(stack, _say), Progress()
        while not signals.requested.wait(2):
            health.check()
            for name in group.restart_crashed():
                _say(f"{name} exited; restarted (see {self.home / 'logs'}/{name}.log)")
            stored, error = stored_events(database_url)
            children = group.states()
            write_run_state(self.home, health, children, error)
            _say(progress_line(last, stored, error, children, health))
            if self.demo and stored is not None:
                world = demo_world(self.template)
                _say(world_progress(database_url, demo_tenant(self.home), first=last.shown, world_id=world))
                last.shown += 3
            if (stored is not None and health.kafka.up and not signals.requested.is_set()
                    and time.monotonic() >= self._next_rotation_try
                    and rotation_due(stored[0], stored[1], self.rotate_events)):
                self._rotate(database_url, stack, group)

    def _stop(self, stack: EmbeddedStack, group: ProcessGroup | None, signals: StopSignals) -> None:
        signals.requested.set()  # a signal from here on forces
        forced = signals.force.is_set()
        _say("stopping at once…" if forced else "stopping (Ctrl-C again to stop at once)…")
        stopped = []
        if group is not None and (count := group.stop(signals.force)):
            stopped.append(f"{count} processes")
        if signals.force.is_set() and not forced:
            _say("stopping at once…")
        stopped += stack.down(force=signals.force.is_set())
        if left := stop_leftovers(self.home, timeout=0 if signals.force.is_set() else 5):
            stopped.append(f"{left} stray processes")
        (self.home / "run.json").unlink(missing_ok=True)
        _say("stopped" + (": " + ", ".join(stopped) if stopped else ""))

    def _rotate(self, database_url: str, stack: EmbeddedStack, group: ProcessGroup) -> None:
        _say(f"[{time.strftime('%H:%M:%S')}] replacing the embedded broker with an empty one "
             f"(every {self.rotate_events} events; every event stays in PostgreSQL)")

        async def once() -> RotationResult:
            pool = await open_pool(database_url, max_size=2, name="rotation")
            try:
                return await rotate_group_broker(pool, stack, group)
            finally:
                await pool.close()

        try:
            result = asyncio.run(once())
        except Exception as exc:  # the backend keeps running on the current broker; tried again later
            self._next_rotation_try = time.monotonic() + _ROTATION_RETRY_S
            _say(f"broker rotation failed ({exc!r}); trying again in {_ROTATION_RETRY_S / 60:.0f} min")
            return
        _say(f"[{time.strftime('%H:%M:%S')}] broker generation {result.generation} is live "
             f"(checkpoint seq {result.checkpoint_seq}, {result.seconds:.1f} s)")


def _say(line: str) -> None:
    """Print a line; a terminal that went away (the run goes on, or is stopping) is not an error."""
    with contextlib.suppress(OSError):
        click.echo(line)
