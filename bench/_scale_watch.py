"""What the scale bench reads at the start and the end of a run's measured stretch (the clock's step and
world time, events stored, model calls by kind, table sizes, CPU seconds per process) and the figures it
derives from two such snapshots."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from bench._town_watch import ProcessCpu

__all__ = ["Snapshot", "figures", "snapshot"]

_SIZES = """
SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
"""


@dataclass(frozen=True)
class Snapshot:
    at: float
    load: tuple[float, float, float]
    step: int
    world_time: datetime | None
    events: int
    llm: dict[str, int]
    sizes: dict[str, int]
    cpu: dict[str, float] = field(default_factory=dict)


def snapshot(database_url: str, home: Path, supervisor: int) -> Snapshot:
    """Everything at once from the run's (only) world: its clock, events, llm_calls and table sizes."""
    cpu = ProcessCpu(home, supervisor).snapshot()
    with psycopg.connect(database_url, autocommit=True) as conn:
        clock = conn.execute("SELECT coalesce(max(step), 0), max(world_time) FROM ws_clocks").fetchone()
        events = conn.execute("SELECT count(*) FROM events").fetchone()
        llm = conn.execute("SELECT prompt_kind, count(*) FROM llm_calls GROUP BY prompt_kind").fetchall()
        sizes = conn.execute(_SIZES).fetchall()
    assert clock is not None and events is not None
    return Snapshot(time.monotonic(), os.getloadavg(), int(clock[0]), clock[1], int(events[0]),
                    {str(k): int(n) for k, n in llm}, {str(t): int(b) for t, b in sizes}, cpu)


def figures(npcs: int, step_seconds: float, a: Snapshot, b: Snapshot) -> dict[str, Any]:
    """NPC-steps/s, real-time factor, CPU per process, events per NPC-step, model calls and storage per
    NPC-day between snapshots ``a`` and ``b``."""
    wall = max(b.at - a.at, 1e-9)
    steps = b.step - a.step
    world_seconds = steps * step_seconds
    if a.world_time and b.world_time:
        world_seconds = (b.world_time - a.world_time).total_seconds()
    npc_steps, npc_days = steps * npcs, npcs * world_seconds / 86400
    grown = {t: b.sizes.get(t, 0) - a.sizes.get(t, 0) for t in b.sizes}
    top = sorted(grown.items(), key=lambda kv: -kv[1])[:6]
    calls = {k: n - a.llm.get(k, 0) for k, n in b.llm.items() if n - a.llm.get(k, 0)}
    cpu = ProcessCpu.diff(a.cpu, b.cpu)

    def per_day(x: float) -> float | None:
        return round(x / npc_days, 1) if npc_days else None

    return {
        "npcs": npcs,
        "wall_seconds": round(wall, 1),
        "steps": steps,
        "world_seconds": world_seconds,
        "npc_steps_per_second": round(npc_steps / wall, 1),
        "realtime_factor": round(world_seconds / wall, 2),
        "events_per_npc_step": round((b.events - a.events) / npc_steps, 2) if npc_steps else None,
        "llm_calls_per_npc_day": {"all": per_day(sum(calls.values())),
                                  **{k: per_day(n) for k, n in sorted(calls.items(), key=lambda kv: -kv[1])}},
        "storage_mb": round(sum(grown.values()) / 1e6, 1),
        "storage_mb_per_npc_day": per_day(sum(grown.values()) / 1e6),
        "largest_tables_mb_per_npc_day": {t: per_day(n / 1e6) for t, n in top},
        "cpu_share_of_one_core": {role: round(s / wall, 2) for role, s in cpu.items() if s},
        "cpu_cores_used": round(sum(cpu.values()) / wall, 2),
        "load_average": {"start": a.load, "end": b.load},
    }
