"""Memory integration test helpers: ids, envelopes, handler runs, synthetic streams, the running service."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, EventPayload
from npcworld.embeddings import Embedder
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.ids import new_id
from services.memory.consumer import serve_memory
from services.memory.deps import MemoryDeps
from services.memory.domain import Memory, NpcRef
from services.memory.handlers import ROUTES
from services.memory.repository import MemoryRepository
from services.memory.settings import Settings
from tests.infra import free_port
from tests.polling import eventually

# A memory's vector (``coalesce(m.embedding, v.embedding)``) for ``memories AS m JOIN memory_npcs AS n``: its
# row's, or its world's for its text (migration 0128).
VECTOR_OF = (
    "LEFT JOIN memory_vectors AS v ON m.embedding IS NULL"
    " AND v.world_key = world_key(n.tenant_id, n.world_id)"
    " AND v.model_key = memory_model_key(m.embedding_model) AND v.text_key = memory_text_key(m.description)"
)

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def new_npc() -> NpcRef:
    return NpcRef(
        f"tenant-{uuid.uuid4().hex[:8]}", f"world-{uuid.uuid4().hex[:8]}", f"npc-{uuid.uuid4().hex[:8]}"
    )


def envelope(payload: EventPayload, npc: NpcRef, at: datetime, *, npc_id: str | None = None) -> Envelope:
    return Envelope.new(
        payload,
        tenant_id=npc.tenant_id,
        world_id=npc.world_id,
        world_time=at,
        npc_id=npc_id if npc_id is not None else npc.npc_id,
    )


async def handle(pool: AsyncConnectionPool, event: Envelope, deps: MemoryDeps) -> list[Envelope]:
    """Run the registered handler in one transaction, as the consumer loop does; return appended events."""
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore(), cause=event)
        await ROUTES[event.type](event, uow, deps)
    return uow.appended


def with_settings(deps: MemoryDeps, **changes: Any) -> MemoryDeps:
    return replace(deps, settings=deps.settings.model_copy(update=changes))


async def insert_stream(
    conn: AsyncConnection[Any],
    npc: NpcRef,
    vectors: npt.NDArray[np.float32],
    importances: Sequence[int],
    accessed: Sequence[datetime],
    model: str = "synthetic",
) -> list[Memory]:
    """Store a synthetic stream (given vectors, importances and last-access times) straight into the table."""
    repo = MemoryRepository()
    stream = await repo.ensure_npc(conn, npc)
    memories = [
        Memory(new_id(), npc, "observation", f"memory {i}", imp, at, at)
        for i, (imp, at) in enumerate(zip(importances, accessed, strict=True))
    ]
    for start in range(0, len(memories), 1000):
        await repo.add(
            conn,
            stream,
            memories[start : start + 1000],
            vectors[start : start + 1000],
            model=model,
            source_event_id=uuid.uuid4(),
        )
    return memories


def random_stream(
    rng: np.random.Generator, n: int, dims: int
) -> tuple[npt.NDArray[np.float32], list[int], list[datetime]]:
    """Clustered unit vectors (in half precision, as memories store them), importances 1-10 and last accesses
    spread over ~10 world days."""
    centres = rng.normal(size=(max(n // 50, 1), dims))
    vectors = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.normal(size=(n, dims))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)
    importances = [int(x) for x in rng.integers(1, 11, n)]
    accessed = [T0 + timedelta(minutes=int(m)) for m in rng.integers(0, 14400, n)]
    return vectors, importances, accessed


@asynccontextmanager
async def running_memory_service(
    database_url: str,
    bootstrap: str,
    *,
    embedder: Embedder | None = None,
    consumer: str | None = None,
    port: int | None = None,
) -> AsyncIterator[str]:
    """The memory service (consumer loop + internal API) in this process on a free port; yields its base URL.

    For other services' integration tests: point their MEMORY_API_URL / HttpMemoryReader at the URL.
    The consumer group is unique unless ``consumer`` is given; pass the session's local embedder to skip
    loading the model again; ``port`` fixes the API port (default: a free one). Everything stops when the
    block exits. Events reach the consumer only while an OutboxRelay runs (start one if the test has none).
    """
    port = port or free_port()
    settings = Settings(
        DATABASE_URL=database_url, KAFKA_BOOTSTRAP_SERVERS=bootstrap,
        MEMORY_API_HOST="127.0.0.1", MEMORY_API_PORT=port,
    )
    stop, started = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(serve_memory(
        settings, stop=stop, embedder=embedder, started=started,
        consumer=consumer or f"memory-{uuid.uuid4().hex[:8]}",
    ))
    try:
        await eventually(lambda: _ready(started, task), lambda ready: ready, timeout=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        await task


async def _ready(started: asyncio.Event, task: asyncio.Task[None]) -> bool:
    if task.done():
        task.result()  # raises what stopped the service
        raise RuntimeError("the memory service exited at start")
    return started.is_set()
