"""`npcworld run` replaces its embedded broker with an empty one as events pile up; the town lives on."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

from tests.infra import free_port

_LIVE = re.compile(r"broker generation (\d+) is live \(checkpoint seq (\d+)")
_STEP = re.compile(r"\(step (\d+),")
_POSTGRES = re.compile(r"embedded stack up: postgres (\S+)")


def _lines(proc: subprocess.Popen[str]) -> tuple[queue.Queue[str], threading.Thread]:
    out: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    return out, reader


def test_the_live_backend_rotates_its_broker_and_keeps_the_town_going(tmp_path: Path) -> None:
    memory_port = free_port()
    env = {
        **os.environ,
        "NPCWORLD_HOME": str(tmp_path / "home"),
        "NPCWORLD_KAFKA_PORT": str(free_port()),
        "MEMORY_API_HOST": "127.0.0.1",
        "MEMORY_API_PORT": str(memory_port),
        "MEMORY_API_URL": f"http://127.0.0.1:{memory_port}",
    }
    env.pop("DATABASE_URL", None)
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "npcworld.cli", "run", "--port", str(free_port()), "--rotate-events", "800"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    (lines, reader), seen = _lines(proc), []
    database_url, rotated_at_step, checkpoint, step = "", -1, 0, 0
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (rotated_at_step >= 0 and step >= rotated_at_step + 30):
            try:
                line = lines.get(timeout=5)
            except queue.Empty:
                assert proc.poll() is None, "npcworld run exited:\n" + "".join(seen[-40:])
                continue
            seen.append(line)
            if match := _POSTGRES.search(line):
                database_url = match.group(1)
            if (match := _STEP.search(line)) is not None:
                step = int(match.group(1))
            if (match := _LIVE.search(line)) is not None and rotated_at_step < 0:
                rotated_at_step, checkpoint = step, int(match.group(2))
        assert rotated_at_step >= 0, "no rotation within 5 minutes:\n" + "".join(seen[-40:])
        assert step >= rotated_at_step + 30, "the town stopped after the rotation:\n" + "".join(seen[-40:])
        with psycopg.connect(database_url) as conn:
            handled = conn.execute(
                "SELECT count(DISTINCT p.consumer) FROM processed_events p JOIN events e USING (event_id)"
                " WHERE e.seq > %s AND p.consumer IN ('world_state', 'perception', 'memory', 'planning')",
                (checkpoint,),
            ).fetchone()
        assert handled is not None and handled[0] == 4  # every stage consumed from the new broker
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    reader.join(10)  # it ends at the end of the output
    assert proc.stdout is not None
    proc.stdout.close()
    while not lines.empty():
        seen.append(lines.get())
    assert proc.returncode == 0, "".join(seen[-20:])
    assert any(line.startswith("stopped: ") for line in seen), "".join(seen[-20:])
