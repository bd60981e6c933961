"""Memory benchmark: retrieval p50/p95 at 1k/10k/100k memories per NPC, with ~1M rows in all, and ingestion.

Run: python bench/memory_retrieval.py [--sizes 1000,10000,100000] [--total 1000000] [--queries 200]
Synthetic streams (clustered 384-dim unit vectors, importance 1-10, accesses over 30 world days) are bulk
loaded with COPY, then the upkeep builds the per-stream HNSW indexes (streams of MEMORY_OWN_INDEX_MIN or more;
there is no index over every stream); ingestion runs the real handler with the local model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from psycopg import sql

from launcher.embedded.postgres import start_postgres, stop_postgres
from npcworld.contracts import Envelope, ObservationMade
from npcworld.db import apply_migrations
from npcworld.embeddings import LOCAL_MODEL_ID, LocalMiniLMEmbedder, PrefetchingEmbedder
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.ids import uuid7
from services.memory.batching import prefetch_embeddings
from services.memory.deps import MemoryDeps
from services.memory.domain import ImportanceRatings, NpcRef, RatingContext, RetrievalWeights
from services.memory.handlers import on_observation_made
from services.memory.indexing import maintain_indexes_once
from services.memory.repository import MemoryRepository
from services.memory.retrieval import rank
from services.memory.settings import MemorySettings

_START = (
    "import sys, pathlib; from launcher.embedded.postgres import start_postgres as s; "
    "print(s(pathlib.Path(sys.argv[1])))"
)
T0 = datetime(2023, 2, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=31)
DIMS = 384


class ConstantRater:
    """Importance without an LLM, so ingestion measures embedding and storage only."""

    async def rate(self, descriptions: Any, context: RatingContext) -> ImportanceRatings:
        return ImportanceRatings(tuple(3 for _ in descriptions), "constant")


def synthetic(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    centres = rng.normal(size=(max(n // 100, 1), DIMS))
    vectors = centres[rng.integers(0, len(centres), n)] + 0.7 * rng.normal(size=(n, DIMS))
    unit: npt.NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit.astype(np.float32)


def load_npc(
    conn: psycopg.Connection[Any], n: int, rng: np.random.Generator
) -> tuple[NpcRef, npt.NDArray[Any]]:
    npc = NpcRef("bench", "world", f"npc-{uuid.uuid4().hex[:8]}")
    key = conn.execute(
        "INSERT INTO memory_npcs (tenant_id, world_id, npc_id, embedding_model, embedding_dims, memory_count)"
        " "
        "VALUES (%s, %s, %s, %s, %s, %s) RETURNING npc_key",
        (npc.tenant_id, npc.world_id, npc.npc_id, LOCAL_MODEL_ID, DIMS, n),
    ).fetchone()[0]  # type: ignore[index]
    vectors = synthetic(rng, n)
    ids = [uuid7() for _ in range(n)]  # time-ordered, like the service's ids
    importance = rng.integers(1, 11, n)
    accessed = [T0 + timedelta(minutes=int(m)) for m in rng.integers(0, 30 * 24 * 60, n)]
    # Distinct texts: a vector is its world's for its text (migration 0128); the rows keep none until the
    # upkeep moves a large stream's into its rows for the stream's own index.
    texts = [f"{npc.npc_id} memory {i}" for i in range(n)]
    with conn.cursor().copy(
        "COPY memories (memory_id, npc_key, kind, description, importance,"
        " created_at,"
        " embedding_model, embedding_dims, source_event_id) FROM STDIN WITH (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["uuid", "int8", "text", "text", "int2", "timestamptz", "text", "int4", "uuid"])
        source = uuid.uuid4()
        for i in range(n):
            copy.write_row(
                (ids[i], key, "observation", texts[i], int(importance[i]), accessed[i], LOCAL_MODEL_ID, DIMS,
                 source)
            )
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS staged_vectors (description text, embedding halfvec)")
    conn.execute("TRUNCATE staged_vectors")
    with conn.cursor().copy("COPY staged_vectors FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["text", "halfvec"])
        for i in range(n):
            copy.write_row((texts[i], HalfVector(vectors[i])))
    conn.execute(
        "INSERT INTO memory_vectors (world_key, model_key, text_key, embedding)"
        " SELECT world_key(%s, %s), memory_model_key(%s), memory_text_key(description), embedding"
        " FROM staged_vectors",
        (npc.tenant_id, npc.world_id, LOCAL_MODEL_ID),
    )
    with conn.cursor().copy(
        "COPY memory_access (memory_id, npc_key, importance, last_accessed_at) FROM STDIN "
        "WITH (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["uuid", "int8", "int2", "timestamptz"])
        for i in range(n):
            copy.write_row((ids[i], key, int(importance[i]), accessed[i]))
    return npc, vectors


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(
    url: str,
    npc: NpcRef,
    vectors: npt.NDArray[np.float32],
    args: argparse.Namespace,
    settings: MemorySettings,
) -> dict[str, float]:
    """Latency of ranking (query vector given) after a warm-up, then recall@10 against exact scoring."""
    rng = np.random.default_rng(7)
    deps = MemoryDeps(embedder=LocalMiniLMEmbedder(), rater=ConstantRater(), settings=settings)
    exact = replace(deps, settings=settings.model_copy(update={"exact_scan_max": 10**9}))
    times, recalls, cpu = [], [], 0.0
    async with await psycopg.AsyncConnection.connect(url) as conn:
        stream = await MemoryRepository().get_npc(conn, npc)
        assert stream is not None
        backend = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone() or [0])[0]
        for i in range(args.warmup + args.queries + 30):
            noise = 0.5 * rng.normal(size=DIMS).astype(np.float32) / DIMS**0.5
            q = vectors[rng.integers(0, len(vectors))] + noise
            q = (q / np.linalg.norm(q)).astype(np.float32)
            async with conn.transaction():
                started, cpu_started = time.perf_counter(), _cpu_seconds(backend)
                got = await rank(conn, deps, stream, q, now=NOW, weights=RetrievalWeights(), k=10)
                if args.warmup <= i < args.warmup + args.queries:
                    times.append((time.perf_counter() - started) * 1000)
                    cpu += _cpu_seconds(backend) - cpu_started
                elif i >= args.warmup + args.queries and stream.memory_count > settings.exact_scan_max:
                    want = await rank(conn, exact, stream, q, now=NOW, weights=RetrievalWeights(), k=10)
                    recalls.append(len({s.memory_id for s in got} & {s.memory_id for s in want}) / len(want))
        if args.explain:
            await _explain(conn, deps, stream, q)
    return {
        "p50": statistics.median(times),
        "p95": percentile(times, 0.95),
        "recall": statistics.mean(recalls) if recalls else 1.0,
        "cpu": 1000 * cpu / len(times),
    }


class _Explaining:
    """A connection that runs EXPLAIN (ANALYZE, BUFFERS) of every SELECT before running it for real, so one
    ranking prints the plan, timings and buffer counts of each statement it sends."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn, self.plans = conn, list[str]()

    def pipeline(self) -> contextlib.AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()  # one statement at a time here

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        text = query if isinstance(query, str) else query.as_string(self.conn)
        if text.lstrip().upper().startswith(("SELECT", "WITH")):
            explain = sql.SQL("EXPLAIN (ANALYZE, BUFFERS) ") + sql.SQL(text)
            rows = await (await self.conn.execute(explain, params, prepare=False)).fetchall()
            self.plans.append("\n".join(r[0] for r in rows))
        return await self.conn.execute(query, params, **kwargs)


async def _explain(
    conn: psycopg.AsyncConnection[Any], deps: MemoryDeps, stream: Any, q: npt.NDArray[np.float32]
) -> None:
    explaining = _Explaining(conn)
    async with conn.transaction():
        await rank(explaining, deps, stream, q, now=NOW, weights=RetrievalWeights(), k=10)  # type: ignore[arg-type]
    print(f"plans of one ranking, NPC with {stream.memory_count} memories:")
    for plan in explaining.plans:
        print("    " + re.sub(r"'\[[^\]]*\]'", "'[...]'", plan).replace("\n", "\n    "))


def _cpu_seconds(backend_pid: int) -> float:
    """CPU time of this process plus the Postgres backend serving it (steadier than wall time under load)."""
    fields = Path(f"/proc/{backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return time.process_time() + ticks / os.sysconf("SC_CLK_TCK")


async def ingest(url: str, count: int, poll: int) -> tuple[float, float, float]:
    """Observations through the real handler: one event per transaction and model call (as before), and
    polls of ``poll`` events in one transaction with one model call (the memory consumer's way)."""
    embedder = LocalMiniLMEmbedder()
    texts = [
        f"Isabella Rodriguez is arranging chairs number {i} for the Valentine's Day party"
        for i in range(count)
    ]
    await embedder.embed(texts[:2])
    started = time.perf_counter()
    await embedder.embed(texts)
    batched = count / (time.perf_counter() - started)
    rates = []
    run = uuid.uuid4().hex[:6]  # fresh streams per run: repeats would be suppressed as duplicates
    for size, world in ((1, f"ingest-single-{run}"), (poll, f"ingest-poll-{run}")):
        deps = MemoryDeps(embedder=PrefetchingEmbedder(embedder), rater=ConstantRater())
        events = [
            Envelope.new(
                ObservationMade(description=text, subject=f"chair {i}"),
                tenant_id="bench", world_id=world, npc_id="isabella",
                world_time=T0 + timedelta(seconds=10 * i),
            )
            for i, text in enumerate(texts)
        ]
        started = time.perf_counter()
        async with await psycopg.AsyncConnection.connect(url) as conn:
            for at in range(0, count, size):
                chunk = events[at : at + size]
                if size > 1:
                    await prefetch_embeddings(chunk, deps)
                async with conn.transaction():
                    for event in chunk:
                        await on_observation_made(event, UnitOfWork(conn, EventStore(), cause=event), deps)
                assert isinstance(deps.embedder, PrefetchingEmbedder)
                deps.embedder.clear()
        rates.append(count / (time.perf_counter() - started))
    return rates[0], rates[1], batched


def own_indexes(url: str, settings: MemorySettings) -> float:
    """Build the per-stream indexes the memory service's background upkeep would build."""
    deps = MemoryDeps(embedder=LocalMiniLMEmbedder(), rater=ConstantRater(), settings=settings)
    started = time.perf_counter()
    while asyncio.run(maintain_indexes_once(url, deps)):
        pass
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE memories")
        conn.execute("VACUUM ANALYZE memory_access")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", help="an existing empty database (default: embedded Postgres)")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument(
        "--total", type=int, default=1_000_000, help="rows across NPCs for the last run (0: skip)"
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ingest", type=int, default=500)
    parser.add_argument("--poll", type=int, default=100, help="events per consumer poll for ingestion")
    parser.add_argument("--shared-buffers", default=None, help="override the embedded server's (1GB)")
    parser.add_argument("--repeat", type=int, default=1, help="measure each NPC this many times")
    parser.add_argument("--filler", type=int, default=4_999,
                        help="memories per NPC filling the table (default: just under the exact-scan bound)")
    parser.add_argument("--warmup", type=int, default=50, help="queries per NPC before measuring")
    parser.add_argument("--explain", action="store_true",
                        help="after measuring each NPC, print the plans (with buffers) of one more ranking")
    args = parser.parse_args()
    pgdata = Path(tempfile.mkdtemp(prefix="npcworld-bench-")) / "pgdata"
    url = args.database_url or start_postgres(pgdata)
    if not args.database_url:
        # start_postgres set the embedded server's settings; shared_buffers needs a restart to apply.
        if args.shared_buffers:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"ALTER SYSTEM SET shared_buffers = '{args.shared_buffers}'")
        stop_postgres(pgdata)
        # A fresh process: the pgserver wheel caches a stopped server per data dir in this one.
        url = subprocess.run(
            [sys.executable, "-c", _START, str(pgdata)], check=True, capture_output=True, text=True
        ).stdout.strip()
    try:
        run(url, args)
    finally:
        if not args.database_url:
            stop_postgres(pgdata)


def run(url: str, args: argparse.Namespace) -> None:
    apply_migrations(url)
    settings = MemorySettings()
    rng = np.random.default_rng(1)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        streams = [(n, *load_npc(conn, n, rng)) for n in sizes]
    with psycopg.connect(url) as conn:
        print("server:", ", ".join(f"{n}={conn.execute(f'SHOW {n}').fetchone()[0]}"  # type: ignore[index]
                                   for n in ("shared_buffers", "work_mem", "effective_cache_size")))
    print(f"loaded {sum(sizes)} memories; "
          f"own indexes (streams >= {settings.own_index_min}) {own_indexes(url, settings):.1f} s")
    for n, npc, vectors in streams:
        for _ in range(args.repeat):
            r = asyncio.run(measure(url, npc, vectors, args, settings))
            print(
                f"one NPC, {n:>7} memories: p50 {r['p50']:6.2f} ms  p95 {r['p95']:6.2f} ms  "
                f"recall@10 {r['recall']:.3f}  CPU {r['cpu']:.2f} ms/query"
            )
    if args.total:
        with psycopg.connect(url, autocommit=True) as conn:
            register_vector(conn)
            loaded = sum(sizes)
            while loaded < args.total:
                load_npc(conn, min(args.filler, args.total - loaded), rng)
                loaded += min(args.filler, args.total - loaded)
        print(f"table now {loaded} memories across NPCs; own indexes {own_indexes(url, settings):.1f} s")
        for n, npc, vectors in streams:
            for _ in range(args.repeat):
                r = asyncio.run(measure(url, npc, vectors, args, settings))
                print(
                    f"{loaded} rows, NPC with {n:>7}: p50 {r['p50']:6.2f} ms  p95 {r['p95']:6.2f} ms  "
                    f"recall@10 {r['recall']:.3f}  CPU {r['cpu']:.2f} ms/query"
                )
    if args.ingest:
        for _ in range(args.repeat):
            single, polled, batched = asyncio.run(ingest(url, args.ingest, args.poll))
            print(
                f"ingestion (memories/s, local embeddings, dedup check, insert, MemoryRecorded): "
                f"{single:.0f} one event per transaction and model call; {polled:.0f} in polls of "
                f"{args.poll} (one transaction, one model call); embedding alone, batched: "
                f"{batched:.0f} texts/s"
            )


if __name__ == "__main__":
    main()
