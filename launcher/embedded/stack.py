"""The embedded stack: Postgres + pgvector and Tansu under one data dir, started and stopped together."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from launcher.embedded.broker import (
    broker_running,
    find_broker,
    port_is_free,
    start_broker,
    stop_broker,
    wait_for_port,
)
from launcher.embedded.postgres import postgres_pid, start_postgres, stop_postgres
from npcworld.db import apply_migrations
from npcworld.errors import InfraError

__all__ = ["DEFAULT_KAFKA_PORT", "EmbeddedStack", "StackState"]

logger = logging.getLogger(__name__)

DEFAULT_KAFKA_PORT = 19092


@dataclass(frozen=True)
class StackState:
    """What ``npcworld up`` started, as written to ``stack.json``."""

    database_url: str
    kafka_bootstrap_servers: str
    postgres_pid: int | None
    broker_pid: int | None
    started_at: float

    def client_env(self, environ: dict[str, str]) -> dict[str, str]:
        """``environ`` plus what the service processes need to use this stack.

        Tansu answers a waiting fetch only when its wait ends, so every idle consumer asks again after this
        wait; 20 ms halves that load against 10 ms for a few ms more per hop. Partitions stay as the
        catalogue says: Tansu's memory storage costs more per message the longer a partition is (0.6 ms at
        empty, 3.6 ms at 5k, 30 ms at 20k messages), so fewer, longer partitions slow a long run down
        (KAFKA_MAX_PARTITIONS exists for short runs). The environment may override both."""
        return {
            "KAFKA_FETCH_MAX_WAIT_MS": "20",
            **environ,
            "DATABASE_URL": self.database_url,
            "KAFKA_BOOTSTRAP_SERVERS": self.kafka_bootstrap_servers,
        }


class EmbeddedStack:
    """Supervises the embedded components of one data dir (``NPCWORLD_HOME``)."""

    def __init__(self, home: Path, kafka_port: int | None = None) -> None:
        self.home = home.resolve()
        self.kafka_port = kafka_port or int(os.environ.get("NPCWORLD_KAFKA_PORT", DEFAULT_KAFKA_PORT))
        self.pgdata = self.home / "pgdata"
        self.state_file = self.home / "stack.json"
        self.broker_pid_file = self.home / "tansu.pid"
        self.broker_log = self.home / "logs" / "tansu.log"

    def up(self) -> StackState:
        """Start whatever is not running yet, migrate the database, and record the endpoints."""
        self.home.mkdir(parents=True, exist_ok=True)
        broker_pid = broker_running(self.broker_pid_file) or self._adopt_broker()
        if broker_pid is None and not port_is_free(self.kafka_port):
            # Checked before Postgres starts, so a taken port leaves nothing half-started.
            raise InfraError(f"port {self.kafka_port} is taken: stop what uses it or set NPCWORLD_KAFKA_PORT")
        database_url = start_postgres(self.pgdata)
        apply_migrations(database_url)
        if broker_pid is None or not wait_for_port(self.kafka_port, timeout=1):
            stop_broker(self.broker_pid_file, timeout=2)  # one that does not answer is of no use
            broker_pid = self._start_broker()
        state = StackState(
            database_url=database_url,
            kafka_bootstrap_servers=f"127.0.0.1:{self.kafka_port}",
            postgres_pid=postgres_pid(self.pgdata),
            broker_pid=broker_pid,
            started_at=time.time(),
        )
        _write_atomically(self.state_file, json.dumps(asdict(state), indent=2))
        return state

    def _adopt_broker(self) -> int | None:
        """A broker of this data dir whose pid file is gone or stale (its run crashed): use it again."""
        pid = find_broker(self.home, self.kafka_port)
        if pid is not None:
            logger.info("reusing the broker (pid %d) left running for %s", pid, self.home)
            self.broker_pid_file.write_text(str(pid))
        return pid

    def _start_broker(self) -> int:
        return start_broker(self.kafka_port, self.broker_log, self.broker_pid_file, owner=self.home)

    def restart_broker(self) -> int:
        """Replace the broker (running or dead) with an empty one on the same port; its new pid.

        Used by a rotation and when the broker died; the relay republishes what consumers still need."""
        stop_broker(self.broker_pid_file)
        pid = self._start_broker()
        self._record(broker_pid=pid)
        return pid

    def restart_postgres(self) -> str:
        """Start the server of this data dir again after it stopped or died (recovering from its WAL)."""
        url = start_postgres(self.pgdata)
        self._record(postgres_pid=postgres_pid(self.pgdata))
        return url

    def broker_pids(self) -> tuple[int, ...]:
        """The pid of this data dir's broker, if one runs (by its pid file, or else by its marker)."""
        pid = broker_running(self.broker_pid_file) or find_broker(self.home, self.kafka_port)
        return () if pid is None else (pid,)

    def postgres_alive(self) -> bool:
        return postgres_pid(self.pgdata) is not None

    def broker_alive(self) -> bool:
        """Running (not a zombie) and accepting connections."""
        return broker_running(self.broker_pid_file) is not None and wait_for_port(self.kafka_port, timeout=1)

    def _record(self, **changes: object) -> None:
        if self.state_file.exists():
            state = json.loads(self.state_file.read_text())
            _write_atomically(self.state_file, json.dumps({**state, **changes}, indent=2))

    def down(self, *, force: bool = False) -> list[str]:
        """Stop both components; returns the names of those that were running.

        ``force`` kills the broker and stops Postgres in immediate mode (it recovers from its WAL next time).
        """
        stopped = []
        if stop_broker(self.broker_pid_file, timeout=0 if force else 10):
            stopped.append("kafka (tansu)")
        stale = find_broker(self.home, self.kafka_port)  # one that lost its pid file
        if stale is not None:
            self.broker_pid_file.write_text(str(stale))
            stop_broker(self.broker_pid_file, timeout=2)
            stopped.append("kafka (tansu)")
        if stop_postgres(self.pgdata, immediate=force):
            stopped.append("postgres")
        self.state_file.unlink(missing_ok=True)
        return list(dict.fromkeys(stopped))

    def status(self) -> dict[str, object]:
        """Which components run, with their pids and endpoints."""
        state = json.loads(self.state_file.read_text()) if self.state_file.exists() else {}
        broker = broker_running(self.broker_pid_file)
        bootstrap = state.get("kafka_bootstrap_servers")
        port = int(bootstrap.rsplit(":", 1)[1]) if bootstrap else self.kafka_port  # the port it started on
        return {
            "home": str(self.home),
            "postgres": {"pid": postgres_pid(self.pgdata), "url": state.get("database_url")},
            "kafka": {"pid": broker, "bootstrap": bootstrap,
                      "listening": broker is not None and wait_for_port(port, timeout=0.5)},
        }


def _write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` in one step: a process reading it meanwhile (a service starting, ``npcworld status``)
    sees the old or the new text, never a file cut short."""
    part = path.with_name(f".{path.name}.{os.getpid()}")
    part.write_text(text)
    os.replace(part, path)
