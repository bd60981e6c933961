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


_STAGES = ["memory", "perception", "planning", "world_state"]


def _resumed(database_url: str, checkpoint: int) -> list[str]:
    """The stages that have handled an event stored after the rotation's checkpoint (from the new broker)."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT coalesce(array_agg(DISTINCT p.consumer ORDER BY p.consumer), '{}')"
            " FROM processed_events p JOIN events e USING (event_id)"
            " WHERE e.seq > %s AND p.consumer = ANY(%s)",
            (checkpoint, _STAGES),
        ).fetchone()
    return list(row[0]) if row else []


def test_the_live_backend_rotates_its_broker_and_keeps_the_town_going(tmp_path: Path) -> None:
    """The town steps on after the rotation, and every stage handles events from the new broker. Memory
    handles only what changes (and, in a stepped world, a step's held work), so a quiet stretch of steps may
    give it nothing: the test waits at least 30 steps and until each stage has had its event."""
    run = Run(tmp_path / "home", "--rotate-events", "800")
    database_url, rotated_at_step, checkpoint, step, resumed = "", -1, 0, 0, []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
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
            if rotated_at_step >= 0 and step >= rotated_at_step + 30 and _STEP.search(line):
                resumed = _resumed(database_url, checkpoint)
                if resumed == _STAGES:
                    break
        assert rotated_at_step >= 0, "no rotation within 5 minutes:\n" + run.output()
        assert step >= rotated_at_step + 30, "the town stopped after the rotation:\n" + run.output()
        assert resumed == _STAGES, f"stages that consumed from the new broker: {resumed}"
    finally:
        run.signal_group(signal.SIGINT)
        code = run.finish()
    out = run.output()
    assert code == 0, out
    assert re.search(r"^stopped: ", out, re.MULTILINE), out
