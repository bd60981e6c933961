"""``npcworld run``: the embedded stack plus every service process, supervised until Ctrl-C.

The demo town runs live; its progress (world clock, a few NPC activities, events/s) shows every two seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import psycopg

from npcworld.embedded import EmbeddedStack

__all__ = ["ProcessGroup", "Supervisor", "process_commands"]

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


class Supervisor:
    """Starts the stack, the relay, the services and the gateway; restarts a crashed child."""

    def __init__(self, home: Path, *, port: int, demo: bool) -> None:
        self.home = home
        self.port = port
        self.demo = demo

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
        last_seq, last_t = _event_count(state.database_url), time.monotonic()
        rotation = 0
        while not stopping:
            time.sleep(2)
            if stopping:
                break
            for name in group.restart_crashed():
                click.echo(f"{name} exited; restarted (see {logs}/{name}.log)")
            seq, now = _event_count(state.database_url), time.monotonic()
            rate = (seq - last_seq) / (now - last_t)
            last_seq, last_t = seq, now
            click.echo(
                f"[{time.strftime('%H:%M:%S')}] events stored: {seq}  ({rate:.1f}/s)  "
                f"processes up: {group.alive()}/{len(group.children)}"
            )
            if self.demo:
                click.echo(_world_progress(state.database_url, first=rotation))
                rotation += 3
        group.stop()
        stack.down()
        click.echo("stopped")


def _event_count(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
    return int(row[0]) if row else 0


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
