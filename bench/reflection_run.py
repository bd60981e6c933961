"""Reflection benchmark: one reflection run end to end (offline provider, real memory service over HTTP), and
the Celery hand-off latency (enqueue → stored outcome) on Redis and on the SQLAlchemy transport over Postgres.

Run: python -m bench.reflection_run [--memories 300] [--runs 10] [--jobs 10]
Memories are recorded through the memory service's handler (local MiniLM embeddings, offline importance);
each run reads the 100 most recent, asks 3 questions, retrieves 30 per question, stores ReflectionCompleted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from celery.contrib.testing.worker import start_worker

from bench._stack import BenchStack
from launcher.private_ports import free_port
from npcworld.contracts import Envelope, ObservationMade, ReflectionTriggered
from npcworld.db import open_pool
from npcworld.embeddings import LocalMiniLMEmbedder
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.llm import LLMSettings, build_llm
from npcworld.memory_client.http import HttpMemoryReader
from services.memory.consumer import serve_memory
from services.memory.deps import MemoryDeps
from services.memory.handlers import on_observation_made
from services.memory.importance import LLMImportanceRater
from services.memory.settings import Settings as MemoryServiceSettings
from services.reflection.celery_app import CeleryJobQueue, create_celery
from services.reflection.deps import RunDeps
from services.reflection.job import ReflectionJob
from services.reflection.reflect import run_reflection
from services.reflection.runtime import WorkerRuntime
from services.reflection.settings import ReflectionSettings, sqlalchemy_broker_url
from services.reflection.tasks import register_tasks

T0 = datetime(2023, 2, 13, 7, 0, tzinfo=UTC)
TENANT, WORLD, NPC = "bench", "w1", "marta"
TOPICS = ("the Valentine's Day party at Hobbs Cafe", "Sam's campaign for mayor", "the new espresso machine",
          "Klaus's research paper", "the cafe's morning rush", "Isabella's decorations")


async def _record(pool: object, deps: MemoryDeps, n: int) -> None:
    for i in range(n):
        text = f"Marta talked with a customer about {TOPICS[i % len(TOPICS)]} (#{i})"
        event = Envelope.new(ObservationMade(description=text), tenant_id=TENANT, world_id=WORLD, npc_id=NPC,
                             world_time=T0 + timedelta(minutes=i))
        async with pool.connection() as conn, conn.transaction():  # type: ignore[attr-defined]
            await on_observation_made(event, UnitOfWork(conn, EventStore(), cause=event), deps)


async def _job(pool: object, run: int) -> ReflectionJob:
    key = f"reflection:{TENANT}:{WORLD}:{NPC}:bench-{uuid.uuid4().hex[:8]}-{run}"
    trigger = Envelope.new(ReflectionTriggered(run=run, run_key=key, importance_sum=151, threshold=150),
                           tenant_id=TENANT, world_id=WORLD, npc_id=NPC, world_time=T0 + timedelta(days=1))
    async with pool.connection() as conn, conn.transaction():  # type: ignore[attr-defined]
        await EventStore().append(conn, key, [trigger], expected_version=0)
    return ReflectionJob(tenant_id=TENANT, world_id=WORLD, npc_id=NPC, run=run, run_key=key,
                         world_time=trigger.world_time, trigger_event_id=trigger.event_id,
                         correlation_id=trigger.correlation_id)


async def _done(pool: object, key: str) -> bool:
    async with pool.connection() as conn:  # type: ignore[attr-defined]
        return await EventStore().stream_version(conn, TENANT, key) >= 2


async def _celery(name: str, broker: str, db: str, memory_url: str, pool: object, jobs: int) -> None:
    queue_name = f"bench-{uuid.uuid4().hex[:8]}"
    settings = ReflectionSettings(reflection_queue=queue_name, reflection_worker_pool="solo")
    app = create_celery(settings, broker)

    async def build() -> RunDeps:
        wpool = await open_pool(db, min_size=1, max_size=2)
        return RunDeps(pool=wpool, llm=build_llm(LLMSettings(), wpool), reader=HttpMemoryReader(memory_url),
                       settings=settings)

    runtime = WorkerRuntime(build)
    register_tasks(app, runtime, retries=0)
    queue = CeleryJobQueue(app, settings.reflection_queue)
    latencies = []
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="ERROR", shutdown_timeout=30):
        for run in range(1, jobs + 1):
            job = await _job(pool, run)
            started = time.perf_counter()
            await queue.enqueue(job)
            while not await _done(pool, job.run_key):
                await asyncio.sleep(0.005)
            latencies.append(time.perf_counter() - started)
    await asyncio.to_thread(runtime.close)
    print(f"celery {name:<22} enqueue → outcome stored: median {statistics.median(latencies) * 1000:7.0f} ms"
          f"  max {max(latencies) * 1000:7.0f} ms  ({jobs} jobs, one at a time)")


async def main(args: argparse.Namespace) -> None:
    with BenchStack() as stack:
        port = free_port()
        settings = MemoryServiceSettings.model_validate({
            "DATABASE_URL": stack.database_url, "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap,
            "MEMORY_API_HOST": "127.0.0.1", "MEMORY_API_PORT": port,
        })
        embedder, stop, started = LocalMiniLMEmbedder(), asyncio.Event(), asyncio.Event()
        service = asyncio.create_task(serve_memory(settings, stop=stop, embedder=embedder, started=started))
        await started.wait()
        pool = await open_pool(stack.database_url, min_size=1, max_size=4)
        url = f"http://127.0.0.1:{port}"
        reader = HttpMemoryReader(url)
        try:
            deps = MemoryDeps(embedder=embedder, rater=LLMImportanceRater(build_llm(LLMSettings(), pool)),
                              settings=settings)
            await _record(pool, deps, args.memories)
            run_deps = RunDeps(pool=pool, llm=build_llm(LLMSettings(), pool), reader=reader,
                               settings=ReflectionSettings())
            times = []
            for run in range(1, args.runs + 1):
                job = await _job(pool, run)
                started_at = time.perf_counter()
                assert await run_reflection(job, run_deps) == "completed"
                times.append(time.perf_counter() - started_at)
            print(f"reflection run ({args.memories} memories, offline provider, memory API over HTTP): "
                  f"median {statistics.median(times) * 1000:.0f} ms  min {min(times) * 1000:.0f} ms"
                  f"  max {max(times) * 1000:.0f} ms  ({args.runs} runs; 4 LLM calls, 1 recent + 3 retrievals"
                  ")")
            await _celery("redis", "redis://127.0.0.1:6379/0", stack.database_url, url, pool, args.jobs)
            sqla = sqlalchemy_broker_url(stack.database_url)
            await _celery("sqlalchemy (postgres)", sqla, stack.database_url, url, pool, args.jobs)
        finally:
            await reader.aclose()
            await pool.close()
            stop.set()
            await service


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=300)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=10)
    asyncio.run(main(parser.parse_args()))
