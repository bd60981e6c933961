"""Where a stepped town's steps waited: a per-step timeline read from the event log.

``python -m bench.town_timeline HOME [--world brindle-hollow]`` reads the database of a home that
``python -m bench.town_load --keep-logs`` kept (or the ``--home`` of an ``npcworld run``, running or not: a
stopped one's Postgres is started for the read and stopped again). For each step (one ``WorldTicked`` to
the next) it follows the chain the tick caused (its ``correlation_id``) and every consumer's claim of each
event in it, and prints, per window (before, during and after player traffic when there was any, else one):

- the steps' durations (p50, p90, mean), split into the tick → the chain's last claim, and that claim → the
  next tick (the clock's wait for the barrier, and its own tick);
- per hop (event type → consumer): from the event's ``recorded_at`` to the start of the consumer's transaction
  that claimed it (p50, p90, and the sum over the window);
- which hop was the last of each step, and how much of the window the steps it ended took;
- the slowest steps, with when their ``StepCompleted`` was appended (a step with held writes: what came after
  it is memory's release and what it caused).

A claim's time is its transaction's start (``processed_at`` defaults to ``now()``), so a hop includes the
relay, the broker, the consumer's queue and its gather step, not the transaction itself. Player traffic is
told by its root (``PlayerSpoke``, or an ``ObservationMade`` a studio posted).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from launcher.embedded.postgres import postgres_pid, start_postgres, stop_postgres

_TICKS = """
SELECT seq, correlation_id, extract(epoch FROM recorded_at)::float8, (payload->>'step')::int
  FROM events WHERE type = 'WorldTicked' AND world_id = %s ORDER BY seq
"""
_CHAINS = """
SELECT e.correlation_id, e.type, extract(epoch FROM e.recorded_at)::float8, p.consumer,
       extract(epoch FROM p.processed_at)::float8
  FROM events e JOIN processed_events p ON p.event_id = e.event_id
 WHERE e.world_id = %s AND e.correlation_id = ANY(%s)
"""
_STEPS_COMPLETED = """
SELECT (payload->>'step')::int, extract(epoch FROM recorded_at)::float8
  FROM events WHERE type = 'StepCompleted' AND world_id = %s
"""
_PLAYER_TRAFFIC = """
SELECT extract(epoch FROM min(recorded_at))::float8, extract(epoch FROM max(recorded_at))::float8
  FROM events
 WHERE world_id = %s
   AND (type = 'PlayerSpoke' OR (type = 'ObservationMade' AND payload->>'source' = 'studio'))
"""


@dataclass
class Window:
    """What the steps that began in one window of wall time waited for."""

    name: str
    # (the step, the tick to its last claim, that claim to the next tick), seconds
    steps: list[tuple[float, float, float]] = field(default_factory=list)
    hops: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    last: Counter[tuple[str, str]] = field(default_factory=Counter)
    last_seconds: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    slowest: list[tuple[float, int, float | None]] = field(default_factory=list)  # (seconds, step, completed)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def timeline(url: str, world: str) -> list[Window]:
    """The windows of ``world``'s steps in the database at ``url``."""
    async with await psycopg.AsyncConnection.connect(url) as conn:
        ticks = await (await conn.execute(_TICKS, (world,))).fetchall()
        if len(ticks) < 2:
            raise SystemExit(f"world {world!r} has fewer than two steps here")
        rows = await (await conn.execute(_CHAINS, (world, [t[1] for t in ticks]))).fetchall()
        appended = await (await conn.execute(_STEPS_COMPLETED, (world,))).fetchall()
        completed = {int(s): float(at) for s, at in appended}
        traffic = await (await conn.execute(_PLAYER_TRAFFIC, (world,))).fetchone()
    chains: dict[Any, list[tuple[str, float, str, float]]] = defaultdict(list)
    for correlation, kind, recorded, consumer, claimed in rows:
        chains[correlation].append((kind, float(recorded), consumer, float(claimed)))
    start, end = (traffic or (None, None))
    windows = {name: Window(name) for name in (("before", "during", "after") if start else ("all",))}
    for (_, correlation, at, step), following in itertools.pairwise(ticks):
        if start is None:
            window = windows["all"]
        else:
            window = windows["before" if at < start else "during" if at <= end else "after"]
        next_at = float(following[2])
        last_at, last_hop = at, ("WorldTicked", "none")
        for kind, recorded, consumer, claimed in chains.get(correlation, []):
            if recorded < at or claimed > next_at:
                continue  # an earlier step's, or claimed after the clock moved on (not waited for)
            window.hops[(kind, consumer)].append(claimed - recorded)
            if claimed > last_at:
                last_at, last_hop = claimed, (kind, consumer)
        window.steps.append((next_at - at, last_at - at, next_at - last_at))
        window.last[last_hop] += 1
        window.last_seconds[last_hop] += next_at - at
        done = completed.get(int(step))
        window.slowest.append((next_at - at, int(step), None if done is None else done - at))
    return list(windows.values())


def _print(window: Window, top: int) -> None:
    ms = 1000.0
    steps = [s[0] for s in window.steps]
    print(f"== {window.name}: {len(steps)} steps, {sum(steps):.1f} s; step p50 {_pct(steps, .5) * ms:.0f} ms,"
          f" p90 {_pct(steps, .9) * ms:.0f} ms, mean {statistics.mean(steps) * ms:.0f} ms")
    to_last, to_tick = [s[1] for s in window.steps], [s[2] for s in window.steps]
    print(f"   tick → last claim p50 {_pct(to_last, .5) * ms:.0f} ms"
          f" (mean {statistics.mean(to_last) * ms:.0f}); last claim → next tick"
          f" p50 {_pct(to_tick, .5) * ms:.0f} ms (mean {statistics.mean(to_tick) * ms:.0f})")
    print("   hops (event → consumer: recorded → claiming transaction began):")
    for (kind, consumer), waits in sorted(window.hops.items(), key=lambda kv: -sum(kv[1]))[:12]:
        print(f"     {kind:>22} → {consumer:<12} n={len(waits):5d}  p50 {_pct(waits, .5) * ms:7.1f} ms"
              f"  p90 {_pct(waits, .9) * ms:7.1f} ms  sum {sum(waits):6.1f} s")
    print("   last hop of a step (steps, their seconds):")
    for hop, count in window.last.most_common(6):
        print(f"     {hop[0]} → {hop[1]}: {count}, {window.last_seconds[hop]:.1f} s")
    print(f"   slowest {top} steps (ms; StepCompleted appended at):")
    for seconds, step, done in sorted(window.slowest, reverse=True)[:top]:
        held = "" if done is None else f" (StepCompleted at {done * ms:.0f})"
        print(f"     step {step}: {seconds * ms:.0f}{held}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path, help="a home kept by town_load --keep-logs, or npcworld's --home")
    parser.add_argument("--world", default="brindle-hollow")
    parser.add_argument("--top", type=int, default=8, help="how many of the slowest steps to list")
    args = parser.parse_args()
    pgdata = args.home / "pgdata"
    if not (pgdata / "PG_VERSION").exists():
        parser.error(f"{args.home} holds no database (no {pgdata})")
    stopped = postgres_pid(pgdata) is None
    url = start_postgres(pgdata)
    try:
        for window in asyncio.run(timeline(url, args.world)):
            _print(window, args.top)
    finally:
        if stopped:
            stop_postgres(pgdata)


if __name__ == "__main__":
    main()
