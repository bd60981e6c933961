"""Event-bus benchmark: append → outbox relay → Kafka (Tansu) → idempotent consumer commit.

Starts its own embedded Postgres and Tansu, runs the relay and the consumer as subprocesses and the
producer in this process, then prints sustained throughput and latency at a fixed rate.
Run: ``python -m bench.eventbus [--events 50000] [--rate 1000] [--seconds 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from psycopg import AsyncConnection

from bench import _raw_kafka, _roles
from bench._raw_kafka import RawFigures
from bench._stack import BenchStack, children, cpu_seconds
from npcworld.contracts import Envelope, ObservationMade
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging.kafka import ensure_topics

REPO = Path(__file__).resolve().parents[1]
WORLD_TIME = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
TARGET_RATE, TARGET_P99_MS = 5000, 100.0
_STORE = EventStore()
_PY_SPY = str(Path(sys.executable).with_name("py-spy"))


@dataclass
class Phase:
    """What one phase did, measured from this process and from the database."""

    world: str
    events: int
    transactions: int = 0
    started: float = 0.0
    appended: float = 0.0
    handled: int = 0
    first_commit: float = 0.0
    last_commit: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, list[float]] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)


def _events(world: str, npc: str, first: int, count: int) -> list[Envelope]:
    return [
        Envelope.new(ObservationMade(description=f"bench event {first + i}"), tenant_id="bench",
                     world_id=world, npc_id=npc, world_time=WORLD_TIME)
        for i in range(count)
    ]


async def _append(conn: AsyncConnection, world: str, tx: int, first: int, count: int, streams: int) -> None:
    npc = f"npc-{tx % streams:03d}"
    events = _events(world, npc, first, count)
    async with conn.transaction():
        await UnitOfWork(conn, _STORE).append(f"bench-{world}-{npc}", events)


async def _wait_handled(conn: AsyncConnection, phase: Phase, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = await (await conn.execute(
            "SELECT count(*) FROM bench_handled WHERE world_id = %s", (phase.world,))).fetchone()
        phase.handled = int(row[0]) if row else 0
        if phase.handled >= phase.events:
            break
        await asyncio.sleep(0.05)
    row = await (await conn.execute(
        "SELECT extract(epoch FROM min(pg_xact_commit_timestamp(xmin)))::float8,"
        " extract(epoch FROM max(pg_xact_commit_timestamp(xmin)))::float8"
        " FROM bench_handled WHERE world_id = %s", (phase.world,))).fetchone()
    if row and row[0] is not None:
        phase.first_commit, phase.last_commit = row


async def _check_exactly_once(conn: AsyncConnection, phase: Phase) -> None:
    """Every appended event handled once: none lost, none handled twice, none dead-lettered."""
    row = await (await conn.execute(
        "SELECT (SELECT count(*) FROM events WHERE world_id = %(w)s),"
        " (SELECT count(DISTINCT event_id) FROM bench_handled WHERE world_id = %(w)s),"
        " (SELECT count(*) - count(DISTINCT event_id) FROM bench_handled WHERE world_id = %(w)s),"
        " (SELECT count(*) FROM dead_letters WHERE consumer = %(c)s)",
        {"w": phase.world, "c": _roles.CONSUMER_NAME})).fetchone()
    stored, handled, doubled, dead = row if row else (0, 0, 0, 0)
    if stored != phase.events:
        phase.violations.append(f"{stored} events stored, {phase.events} appended")
    if handled != stored:
        phase.violations.append(f"{stored - handled} of {stored} events never handled (lost)")
    if doubled:
        phase.violations.append(f"{doubled} extra handlings of events already handled (doubled)")
    if dead:
        phase.violations.append(f"{dead} events dead-lettered by the consumer so far")


async def run_burst(conn: AsyncConnection, events: int, batch: int, streams: int) -> Phase:
    """Append ``events`` as fast as one connection can, ``batch`` per transaction."""
    phase = Phase(f"burst-{uuid.uuid4().hex[:8]}", events)
    phase.started = time.time()
    for tx, first in enumerate(range(0, events, batch)):
        await _append(conn, phase.world, tx, first, min(batch, events - first), streams)
        phase.transactions += 1
    phase.appended = time.time()
    await _wait_handled(conn, phase, timeout=90)
    return phase


async def run_paced(conn: AsyncConnection, rate: int, seconds: float, streams: int) -> Phase:
    """Append at ``rate`` events/s: every 1 ms tick commits the events that fell due, in one transaction."""
    total = int(rate * seconds)
    phase = Phase(f"paced-{uuid.uuid4().hex[:8]}", total)
    phase.started = time.time()
    start, sent = time.perf_counter(), 0
    while sent < total:
        due = min(total, int((time.perf_counter() - start) * rate) + 1) - sent
        if due <= 0:
            await asyncio.sleep(0.001)
            continue
        await _append(conn, phase.world, phase.transactions, sent, due, streams)
        phase.transactions += 1
        sent += due
    phase.appended = time.time()
    await _wait_handled(conn, phase, timeout=60)
    rows = await (await conn.execute(
        "SELECT extract(epoch FROM pg_xact_commit_timestamp(e.xmin) - b.recorded_at)::float8 * 1000,"
        " extract(epoch FROM b.handled_at - b.recorded_at)::float8 * 1000,"
        " extract(epoch FROM pg_xact_commit_timestamp(b.xmin) - b.recorded_at)::float8 * 1000"
        " FROM bench_handled b JOIN events e USING (event_id) WHERE b.world_id = %s", (phase.world,)
    )).fetchall()
    for i, name in enumerate(("append committed", "consumer INSERT (clock_timestamp)", "consumer committed")):
        phase.latency_ms[name] = sorted(r[i] for r in rows)
    return phase


class Processes:
    """The relay and consumer subprocesses, and the pids whose CPU time each phase reports."""

    def __init__(self, stack: BenchStack, args: argparse.Namespace) -> None:
        self.stack = stack
        self.stats = stack.root / "relay-timeline.json"
        base = [sys.executable, "-m", "bench.eventbus", "--db", stack.database_url,
                "--bootstrap", stack.bootstrap]
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        spy, self.profiling = _py_spy(args.profile), args.profile is not None
        self.relay = subprocess.Popen(
            spy("relay") + base + ["--role", "relay", "--stats", str(self.stats)], cwd=REPO, env=env)
        self.consumer = subprocess.Popen(
            spy("consumer") + base + ["--role", "consumer", "--max-records", str(args.max_records)]
            + (["--pipelined"] if args.pipelined else []),
            cwd=REPO, env=env)

    def cpu(self) -> dict[str, float]:
        broker = self.stack.broker_pid()
        return {
            "producer": cpu_seconds([os.getpid()]),
            "relay": cpu_seconds(_with_children(self.relay.pid)),
            "consumer": cpu_seconds(_with_children(self.consumer.pid)),
            "postgres": cpu_seconds(self.stack.postgres_pids()),
            "tansu": cpu_seconds([broker] if broker else []),
        }

    def stop(self) -> list[tuple[float, int]]:
        """Stop both (SIGTERM, then SIGKILL after 20 s) and return the relay's publish timeline."""
        for proc in (self.consumer, self.relay):
            # Under py-spy the role runs as its child; py-spy writes its profile when the child exits.
            for pid in (children(proc.pid) if self.profiling else [proc.pid]):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
        for proc in (self.consumer, self.relay):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if not self.stats.exists():
            return []
        return [(float(t), int(n)) for t, n in json.loads(self.stats.read_text())]


def _with_children(pid: int) -> list[int]:
    return [pid, *children(pid)]  # under py-spy the role is a child of the py-spy process


def _py_spy(directory: Path | None) -> Callable[[str], list[str]]:
    def wrap(role: str) -> list[str]:
        if directory is None:
            return []
        directory.mkdir(parents=True, exist_ok=True)
        out = str(directory / f"{role}.txt")
        return [_PY_SPY, "record", "--format", "raw", "--rate", "200", "-o", out, "--"]
    return wrap


async def orchestrate(stack: BenchStack, procs: Processes, args: argparse.Namespace) -> list[Phase]:
    """Warm up, then the throughput phase, then the fixed-rate phase, each with its CPU usage."""
    async with await AsyncConnection.connect(stack.database_url, autocommit=True) as conn:
        warm = await run_burst(conn, 500, 50, args.streams)
        if warm.handled < warm.events:
            raise SystemExit(f"warm-up: {warm.handled}/{warm.events} events handled; is the consumer up?")
        burst = await _with_cpu(procs, run_burst(conn, args.events, args.batch, args.streams))
        paced = await _with_cpu(procs, run_paced(conn, args.rate, args.seconds, args.streams))
        await asyncio.sleep(2.0)  # a late redelivery would show as a second handling
        for phase in (warm, burst, paced):
            await _check_exactly_once(conn, phase)
        burst.violations += [f"warm-up: {v}" for v in warm.violations]
        return [burst, paced]


async def _with_cpu(procs: Processes, run: Coroutine[Any, Any, Phase]) -> Phase:
    before = procs.cpu()
    phase = await run
    phase.cpu = {k: v - before[k] for k, v in procs.cpu().items()}
    return phase


def _pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return values[min(len(values) - 1, max(0, round(q * len(values)) - 1))] if values else float("nan")


def report(stack: BenchStack, phases: list[Phase], timeline: list[tuple[float, int]], raw: RawFigures,
           args: argparse.Namespace) -> list[str]:
    """Print the figures, the raw broker's beside them, and whether the targets were met; returns what
    broke exactly-once (empty when every event was handled once)."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nnpcworld event bus: {os.cpu_count()} CPUs, Python {platform.python_version()},"
          f" PostgreSQL {stack.postgres_version} (embedded), Tansu; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC;"
          f" load average (1, 5, 15 min) before the run {args.load_at_start}, after it {load};"
          f" the handler's route {'pipelined' if args.pipelined else 'not pipelined (each statement waits)'}")
    sustained = _report_burst(phases[0], timeline, args)
    p99 = _report_paced(phases[1], args)
    raw_p99 = _pct(raw.latency_ms, 0.99)
    print(f"\n3. The same broker in a bare aiokafka loop (no database), this run:"
          f" {raw.received:,}/{raw.messages:,} messages at {raw.rate:,.0f}/s;"
          f" at {args.rate:,}/s p50 {_pct(raw.latency_ms, 0.5):.1f} ms,"
          f" p99 {raw_p99:.1f} ms")
    print(f"   pipeline / raw: throughput {sustained / raw.rate if raw.rate else float('nan'):.2f},"
          f" p99 {p99 / raw_p99 if raw_p99 else float('nan'):.1f}x")
    met = {True: "met", False: "NOT met"}
    print(f"\nTargets: sustained {sustained:,.0f} events/s (target >= {TARGET_RATE:,}):"
          f" {met[sustained >= TARGET_RATE]}; p99 to consumer commit {p99:.1f} ms"
          f" at {args.rate:,}/s (target <= {TARGET_P99_MS:g} ms): {met[p99 <= TARGET_P99_MS]}")
    violations = [f"{name}: {v}" for name, phase in zip(("throughput", "latency"), phases, strict=True)
                  for v in phase.violations]
    print("Exactly-once: " + ("every event handled once" if not violations else "VIOLATED"))
    for line in violations:
        print(f"   {line}")
    return violations


def _report_burst(burst: Phase, timeline: list[tuple[float, int]], args: argparse.Namespace) -> float:
    print(f"\n1. Sustained throughput: {burst.events:,} events, {args.batch} per transaction,"
          f" {args.streams} NPC streams, one producer connection")
    inside = [(t, n) for t, n in timeline if burst.started <= t <= burst.last_commit]
    published_at = inside[-1][0] if inside else float("nan")
    rows = [("appended (committed)", burst.appended, burst.events),
            ("published to Kafka (acked)", published_at, sum(n for _, n in inside)),
            ("handled (consumer committed)", burst.last_commit, burst.handled)]
    print(f"   {'stage, from the first append':<32}{'events':>9}{'done at (s)':>13}{'events/s':>11}")
    for name, at, n in rows:
        secs = at - burst.started
        print(f"   {name:<32}{n:>9,}{secs:>13.2f}{n / secs if secs > 0 else float('nan'):>11,.0f}")
    _print_cpu(burst)
    complete = burst.handled == burst.events and burst.last_commit > burst.started
    return burst.handled / (burst.last_commit - burst.started) if complete else 0.0


def _report_paced(paced: Phase, args: argparse.Namespace) -> float:
    achieved = paced.events / (paced.appended - paced.started)
    print(f"\n2. Latency at {args.rate:,} events/s for {args.seconds:g} s: every 1 ms tick appends the events"
          f" due in one transaction ({paced.transactions:,} transactions, mean"
          f" {paced.events / max(1, paced.transactions):.1f} events); achieved {achieved:,.0f} events/s;"
          f" handled {paced.handled:,}/{paced.events:,}")
    print(f"   {'from envelope recorded_at to (ms)':<36}{'p50':>8}{'p95':>8}{'p99':>8}{'max':>9}")
    for name, values in paced.latency_ms.items():
        cells = "".join(f"{_pct(values, q):>8.1f}" for q in (0.5, 0.95, 0.99))
        print(f"   {name:<36}{cells}{values[-1] if values else float('nan'):>9.1f}")
    _print_cpu(paced)
    return _pct(paced.latency_ms.get("consumer committed", []), 0.99)


def _print_cpu(phase: Phase) -> None:
    wall = phase.last_commit - phase.started
    parts = ", ".join(f"{k} {v:.1f}" for k, v in phase.cpu.items())
    busy = sum(phase.cpu.values()) / wall if wall > 0 else float("nan")
    print(f"   CPU seconds over {wall:.1f} s: {parts} ({busy:.2f} cores busy on average)")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.eventbus", description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=50_000, help="events in the throughput phase")
    p.add_argument("--batch", type=int, default=100, help="events per transaction in the throughput phase")
    p.add_argument("--streams", type=int, default=100, help="NPC streams the events are spread over")
    p.add_argument("--rate", type=int, default=1000, help="events/s in the latency phase")
    p.add_argument("--seconds", type=float, default=20.0, help="length of the latency phase")
    p.add_argument("--max-records", type=int, default=500, help="consumer loop max_records")
    p.add_argument("--pipelined", action="store_true",
                   help="declare the handler's route pipelined (it only writes): one round trip per poll")
    p.add_argument("--profile", type=Path, help="record py-spy stacks of relay and consumer into this folder")
    p.add_argument("--role", choices=["all", "relay", "consumer"], default="all", help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("--bootstrap", help=argparse.SUPPRESS)
    p.add_argument("--stats", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    if args.role == "relay":
        asyncio.run(_roles.run_relay(args.db, args.bootstrap, args.stats))
        return
    if args.role == "consumer":
        asyncio.run(_roles.run_consumer(args.db, args.bootstrap, args.max_records, args.pipelined))
        return
    args.load_at_start = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    with BenchStack() as stack:
        import psycopg

        with psycopg.connect(stack.database_url, autocommit=True) as conn:
            conn.execute(_roles.BENCH_DDL)
        asyncio.run(ensure_topics(stack.bootstrap))
        procs = Processes(stack, args)
        try:
            phases = asyncio.run(orchestrate(stack, procs, args))
        finally:
            timeline = procs.stop()
        raw = asyncio.run(_raw_kafka.measure(stack.bootstrap, args.events, args.rate, args.seconds,
                                             args.max_records))
        if report(stack, phases, timeline, raw, args):
            raise SystemExit("exactly-once VIOLATED: events lost, handled twice or dead-lettered (above)")


if __name__ == "__main__":
    main()
