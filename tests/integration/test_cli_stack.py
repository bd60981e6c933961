"""`npcworld up | status | down` supervise the embedded stack in a data dir of ours."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import psycopg

from tests.infra import free_port


def npcworld(home: Path, *args: str, port: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NPCWORLD_HOME": str(home), "NPCWORLD_KAFKA_PORT": str(port)}
    env.pop("DATABASE_URL", None)
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], env=env, capture_output=True,
                          text=True, timeout=120)


def test_up_is_idempotent_status_reports_and_down_stops_everything(tmp_path: Path) -> None:
    port = free_port()
    first = npcworld(tmp_path, "up", port=port)
    assert first.returncode == 0, first.stderr
    try:
        again = npcworld(tmp_path, "up", port=port)
        assert again.returncode == 0, again.stderr
        state = json.loads(npcworld(tmp_path, "status", port=port).stdout)
        assert state["postgres"]["pid"] and state["kafka"]["listening"]
        with psycopg.connect(state["postgres"]["url"]) as conn:
            tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname='public'")}
            assert {"events", "outbox", "processed_events"} <= tables
            assert conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()
    finally:
        down = npcworld(tmp_path, "down", port=port)
    assert "postgres" in down.stdout and "kafka" in down.stdout
    state = json.loads(npcworld(tmp_path, "status", port=port).stdout)
    assert state["postgres"]["pid"] is None and state["kafka"]["pid"] is None


def test_up_names_the_port_when_it_is_taken(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        result = npcworld(tmp_path, "up", port=port)
    npcworld(tmp_path, "down", port=port)
    assert result.returncode != 0
    assert f"port {port} is taken" in result.stderr


def test_services_without_database_settings_or_stack_say_what_to_do(tmp_path: Path) -> None:
    result = npcworld(tmp_path, "migrate", port=free_port())
    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr and "npcworld up" in result.stderr


def test_up_reuses_a_broker_of_its_data_dir_that_lost_its_pid_file_and_restarts_a_killed_one(
    tmp_path: Path,
) -> None:
    port = free_port()
    assert npcworld(tmp_path, "up", port=port).returncode == 0
    try:
        first = json.loads(npcworld(tmp_path, "status", port=port).stdout)["kafka"]["pid"]
        (tmp_path / "tansu.pid").unlink()  # as a crashed run may leave it
        again = npcworld(tmp_path, "up", port=port)
        assert again.returncode == 0, again.stderr  # not "port … is taken": it is ours
        assert json.loads(npcworld(tmp_path, "status", port=port).stdout)["kafka"]["pid"] == first
        os.kill(first, signal.SIGKILL)
        dead = json.loads(npcworld(tmp_path, "status", port=port).stdout)["kafka"]
        assert dead["pid"] is None and not dead["listening"]  # killed (even if not yet reaped) is down
        assert npcworld(tmp_path, "up", port=port).returncode == 0
        assert json.loads(npcworld(tmp_path, "status", port=port).stdout)["kafka"]["listening"]
    finally:
        npcworld(tmp_path, "down", port=port)
