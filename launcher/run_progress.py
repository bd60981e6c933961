"""What ``npcworld run`` prints every two seconds: events stored, processes and stack health, the demo town.

Every query tolerates a lost database: the line then says so, and the run goes on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import psycopg

from launcher.embedded.rotation import PROGRESS_SQL
from launcher.process_group import ChildState
from launcher.stack_health import StackHealth

__all__ = ["Progress", "progress_line", "stored_events", "world_progress"]


@dataclass
class Progress:
    """Events stored at the last tick (for the rate), and which NPCs the demo lines showed last."""

    seq: int = 0
    at: float = field(default_factory=time.monotonic)
    shown: int = 0


def stored_events(database_url: str) -> tuple[tuple[int, int] | None, str | None]:
    """(events stored, last broker checkpoint's sequence), or None and a short reason Postgres gave."""
    try:
        with psycopg.connect(database_url, connect_timeout=5) as conn:
            row = conn.execute(PROGRESS_SQL).fetchone()
    except psycopg.Error as exc:
        return None, _reason(exc)
    return ((int(row[0]), int(row[1])) if row else (0, 0)), None


def progress_line(last: Progress, stored: tuple[int, int] | None, error: str | None,
                  children: list[ChildState], health: StackHealth) -> str:
    now, head = time.monotonic(), f"[{time.strftime('%H:%M:%S')}] "
    if stored is None:
        head += f"database unreachable ({error})"
    else:
        rate = f"  ({(stored[0] - last.seq) / max(now - last.at, 1e-3):.1f}/s)" if last.seq else ""
        head += f"events stored: {stored[0]}{rate}"
        last.seq, last.at = stored[0], now
    down = [f"{c.name} down since {_clock(c.since)}" for c in children if not c.up]
    restarts = sum(c.restarts for c in children)
    procs = (f"processes up: {sum(c.up for c in children)}/{len(children)}"
             + (f" ({', '.join(down)})" if down else "") + (f", {restarts} restarts" if restarts else ""))
    return "  ".join([head, procs, health.postgres.describe("postgres"), health.kafka.describe("kafka")])


def world_progress(
    database_url: str, tenant_id: str | None, first: int = 0, world_id: str = "brindle-hollow"
) -> str:
    """The demo world's clock and what a few NPCs are doing (a different few each time)."""
    if tenant_id is None:
        return f"  {world_id}: loading the town…"
    key = (tenant_id, world_id)
    try:
        with psycopg.connect(database_url, connect_timeout=5) as conn:
            clock = conn.execute(
                "SELECT world_time, step, paused, speed FROM ws_clocks"
                " WHERE tenant_id = %s AND world_id = %s",
                key,
            ).fetchone()
            count = conn.execute(
                "SELECT count(*) FROM ws_npcs WHERE tenant_id = %s AND world_id = %s", key
            ).fetchone()
            rows = conn.execute(
                "SELECT name, coalesce(action, 'idle'), emoji, coalesce(location, '?') FROM ws_npcs"
                " WHERE tenant_id = %s AND world_id = %s ORDER BY npc_id OFFSET %s LIMIT %s",
                (*key, first % max(1, count[0] if count else 1), 3),
            ).fetchall()
    except psycopg.Error as exc:
        return f"  {world_id}: unavailable ({_reason(exc)})"
    if clock is None:
        return f"  {world_id}: loading the town…"
    mode = "paused" if clock[2] else ("stepped" if clock[3] is None else f"{clock[3]:g}x")
    head = f"  {world_id} {clock[0]:%a %b %d %H:%M:%S} (step {clock[1]}, {mode})"
    return "\n".join(
        [head]
        + [f"    {name}: {action} {emoji} @ {where.split(':', 1)[-1]}" for name, action, emoji, where in rows]
    )


def _clock(wall: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(wall))


def _reason(exc: psycopg.Error) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:120] if text else ''}".rstrip(": ")
