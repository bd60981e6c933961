"""``npcworld run``: the embedded stack plus every service process, supervised until Ctrl-C."""

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

__all__ = ["Supervisor"]

# Every service package with a consumer entrypoint runs as its own process.
_ROOT = Path(__file__).resolve().parents[2]
SERVICE_MODULES = tuple(sorted(p.parent.name for p in _ROOT.glob("services/*/consumer.py")))


class Supervisor:
    """Starts the stack, the relay, the services and the gateway; restarts a crashed child."""

    def __init__(self, home: Path, *, port: int, demo: bool) -> None:
        self.home = home
        self.port = port
        self.demo = demo
        self.children: dict[str, subprocess.Popen[bytes]] = {}

    def _commands(self) -> dict[str, list[str]]:
        py = sys.executable
        cmds = {"relay": [py, "-m", "npcworld.cli", "relay"]}
        for svc in SERVICE_MODULES:
            cmds[svc] = [py, "-m", f"services.{svc}.consumer"]
        cmds["gateway"] = [py, "-m", "uvicorn", "services.gateway.api:create_app", "--factory",
                           "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"]
        return cmds

    def run(self) -> None:
        stack = EmbeddedStack(self.home)
        state = stack.up()
        env = {**os.environ, "DATABASE_URL": state.database_url,
               "KAFKA_BOOTSTRAP_SERVERS": state.kafka_bootstrap_servers}
        logs = self.home / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        click.echo(f"embedded stack up: postgres {state.database_url}  kafka {state.kafka_bootstrap_servers}")
        commands = self._commands()
        for name, cmd in commands.items():
            self._spawn(name, cmd, env, logs)
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
        while not stopping:
            time.sleep(2)
            for name, proc in list(self.children.items()):
                if proc.poll() is not None and not stopping:
                    click.echo(f"{name} exited with {proc.returncode}; restarting (see {logs}/{name}.log)")
                    self._spawn(name, commands[name], env, logs)
            seq, now = _event_count(state.database_url), time.monotonic()
            rate = (seq - last_seq) / (now - last_t)
            last_seq, last_t = seq, now
            alive = sum(p.poll() is None for p in self.children.values())
            click.echo(f"[{time.strftime('%H:%M:%S')}] events stored: {seq}  ({rate:.1f}/s)  "
                       f"processes up: {alive}/{len(self.children)}")
        self._shutdown()
        stack.down()
        click.echo("stopped")

    def _spawn(self, name: str, cmd: list[str], env: dict[str, str], logs: Path) -> None:
        log = (logs / f"{name}.log").open("ab")
        self.children[name] = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)

    def _shutdown(self) -> None:
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


def _event_count(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
    return int(row[0]) if row else 0


