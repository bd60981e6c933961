"""``npcworld run``: the embedded stack plus every service process, supervised until Ctrl-C.

The demo town runs live; its progress (world clock, a few NPC activities, events/s) shows every two seconds.
The embedded broker is replaced by an empty one every ``rotate_events`` events (see
``npcworld.embedded.rotation``), so a backend left running for days does not slow down or grow.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import psycopg
from psycopg_pool import AsyncConnectionPool

from npcworld.db import open_pool
from npcworld.embedded import EmbeddedStack
from npcworld.embedded.broker import DEFAULT_ROTATE_EVENTS
from npcworld.embedded.rotation import PROGRESS_SQL, RotationResult, rotate_broker, rotation_due

__all__ = ["ProcessGroup", "Supervisor", "process_commands", "rotate_group_broker"]

_ROTATION_RETRY_S = 600.0  # after a failed rotation, carry on with the current broker this long

# Every service package with a consumer entrypoint runs as its own process.
_ROOT = Path(__file__).resolve().parents[2]
SERVICE_MODULES = tuple(sorted(p.parent.name for p in _ROOT.glob("services/*/consumer.py")))
# Services with Celery jobs also run a worker (``celery -A services.<svc>.worker worker``).
WORKER_MODULES = tuple(sorted(p.parent.name for p in _ROOT.glob("services/*/worker.py")))


def process_commands(port: int | None) -> dict[str, list[str]]:
    """The relay, one process per service, and the gateway on ``port`` (None: no gateway)."""
    py = sys.executable
    cmds = {"relay": [py, "-m", "npcworld.cli", "relay"]}
    for svc in SERVICE_MODULES:
        cmds[svc] = [py, "-m", f"services.{svc}.consumer"]
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
        ]
    return cmds


class ProcessGroup:
    """Child processes with their logs; a crashed one is restarted by ``restart_crashed``."""

    def __init__(self, commands: dict[str, list[str]], env: dict[str, str], logs: Path) -> None:
        self.commands, self.env, self.logs = commands, env, logs
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        logs.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        for name in self.commands:
            self._spawn(name)

    def _spawn(self, name: str) -> None:
        log = (self.logs / f"{name}.log").open("ab")
        self.children[name] = subprocess.Popen(
            self.commands[name], env=self.env, stdout=log, stderr=subprocess.STDOUT
        )

    def restart_crashed(self) -> list[str]:
        crashed = [n for n, p in self.children.items() if p.poll() is not None]
        for name in crashed:
            self._spawn(name)
        return crashed

    def stop_one(self, name: str, timeout: float = 15.0) -> None:
        """Stop one child gracefully; it stays stopped (``restart_crashed`` skips it) until ``start_one``."""
        proc = self.children.pop(name)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def start_one(self, name: str) -> None:
        self._spawn(name)

    def alive(self) -> int:
        return sum(p.poll() is None for p in self.children.values())

    def stop(self) -> None:
        for proc in self.children.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 15
        for proc in self.children.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


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


class Supervisor:
    """Starts the stack, the relay, the services and the gateway; restarts a crashed child; rotates the
    embedded broker every ``rotate_events`` events (0: never)."""

    def __init__(
        self, home: Path, *, port: int, demo: bool, rotate_events: int = DEFAULT_ROTATE_EVENTS
    ) -> None:
        self.home = home
        self.port = port
        self.demo = demo
        self.rotate_events = rotate_events
        self._next_rotation_try = 0.0

    def run(self) -> None:
        stack = EmbeddedStack(self.home)
        state = stack.up()
        env = state.client_env(dict(os.environ))
        logs = self.home / "logs"
        click.echo(f"embedded stack up: postgres {state.database_url}  kafka {state.kafka_bootstrap_servers}")
        group = ProcessGroup(process_commands(self.port), env, logs)
        group.start()
        if self.demo:
            from npcworld.demo import seed_demo

            click.echo(seed_demo(state.database_url, self.port, self.home))
        click.echo(f"API on http://127.0.0.1:{self.port}/docs  logs in {logs}/  (Ctrl-C stops)")
        stopping = False

        def stop(*_: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        (last_seq, _), last_t = _progress(state.database_url), time.monotonic()
        rotation = 0
        while not stopping:
            time.sleep(2)
            if stopping:
                break
            for name in group.restart_crashed():
                click.echo(f"{name} exited; restarted (see {logs}/{name}.log)")
            (seq, checkpoint), now = _progress(state.database_url), time.monotonic()
            rate = (seq - last_seq) / (now - last_t)
            last_seq, last_t = seq, now
            click.echo(
                f"[{time.strftime('%H:%M:%S')}] events stored: {seq}  ({rate:.1f}/s)  "
                f"processes up: {group.alive()}/{len(group.children)}"
            )
            if self.demo:
                click.echo(_world_progress(state.database_url, first=rotation))
                rotation += 3
            if not stopping and time.monotonic() >= self._next_rotation_try and rotation_due(
                seq, checkpoint, self.rotate_events
            ):
                self._rotate(state.database_url, stack, group)
        group.stop()
        stack.down()
        click.echo("stopped")


    def _rotate(self, database_url: str, stack: EmbeddedStack, group: ProcessGroup) -> None:
        click.echo(f"[{time.strftime('%H:%M:%S')}] replacing the embedded broker with an empty one "
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
            click.echo(f"broker rotation failed ({exc!r}); trying again in {_ROTATION_RETRY_S / 60:.0f} min")
            return
        click.echo(f"[{time.strftime('%H:%M:%S')}] broker generation {result.generation} is live "
                   f"(checkpoint seq {result.checkpoint_seq}, {result.seconds:.1f} s)")


def _progress(database_url: str) -> tuple[int, int]:
    """Events stored so far, and the last broker checkpoint's sequence number."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(PROGRESS_SQL).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _world_progress(database_url: str, first: int = 0, world_id: str = "brindle-hollow") -> str:
    """The demo world's clock and what a few NPCs are doing (a different few each time)."""
    with psycopg.connect(database_url) as conn:
        clock = conn.execute(
            "SELECT world_time, step, paused, speed FROM ws_clocks WHERE world_id = %s", (world_id,)
        ).fetchone()
        count = conn.execute("SELECT count(*) FROM ws_npcs WHERE world_id = %s", (world_id,)).fetchone()
        rows = conn.execute(
            "SELECT name, coalesce(action, 'idle'), emoji, coalesce(location, '?') FROM ws_npcs"
            " WHERE world_id = %s ORDER BY npc_id OFFSET %s LIMIT %s",
            (world_id, first % max(1, count[0] if count else 1), 3),
        ).fetchall()
    if clock is None:
        return f"  {world_id}: loading the town…"
    mode = "paused" if clock[2] else ("stepped" if clock[3] is None else f"{clock[3]:g}x")
    head = f"  {world_id} {clock[0]:%a %b %d %H:%M:%S} (step {clock[1]}, {mode})"
    return "\n".join(
        [head]
        + [f"    {name}: {action} {emoji} @ {where.split(':', 1)[-1]}" for name, action, emoji, where in rows]
    )
