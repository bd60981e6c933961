"""`npcworld run` replaces its embedded broker with an empty one as events pile up; the town lives on."""

from __future__ import annotations

import queue
import re
import signal
import time
from pathlib import Path

import psycopg

from tests.runs import Run

_LIVE = re.compile(r"broker generation (\d+) is live \(checkpoint seq (\d+)")
_STEP = re.compile(r"\(step (\d+),")
_POSTGRES = re.compile(r"embedded stack up: postgres (\S+)")


def test_the_live_backend_rotates_its_broker_and_keeps_the_town_going(tmp_path: Path) -> None:
    run = Run(tmp_path / "home", "--rotate-events", "800")
    database_url, rotated_at_step, checkpoint, step = "", -1, 0, 0
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (rotated_at_step >= 0 and step >= rotated_at_step + 30):
            try:
                line = run.lines.get(timeout=5)
            except queue.Empty:
                assert run.proc.poll() is None, "npcworld run exited:\n" + run.output()
                continue
            run.seen.append(line)
            if match := _POSTGRES.search(line):
                database_url = match.group(1)
            if (match := _STEP.search(line)) is not None:
                step = int(match.group(1))
            if (match := _LIVE.search(line)) is not None and rotated_at_step < 0:
                rotated_at_step, checkpoint = step, int(match.group(2))
        assert rotated_at_step >= 0, "no rotation within 5 minutes:\n" + run.output()
        assert step >= rotated_at_step + 30, "the town stopped after the rotation:\n" + run.output()
        with psycopg.connect(database_url) as conn:
            handled = conn.execute(
                "SELECT array_agg(DISTINCT p.consumer ORDER BY p.consumer) FROM processed_events p"
                " JOIN events e USING (event_id)"
                " WHERE e.seq > %s AND p.consumer IN ('world_state', 'perception', 'memory', 'planning')",
                (checkpoint,),
            ).fetchone()
        stages = ["memory", "perception", "planning", "world_state"]
        assert handled is not None and handled[0] == stages, f"consumed from the new broker: {handled}"
    finally:
        run.signal_group(signal.SIGINT)
        code = run.finish()
    out = run.output()
    assert code == 0, out
    assert re.search(r"^stopped: ", out, re.MULTILINE), out
