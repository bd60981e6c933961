"""The memory service's internal HTTP API: retrieval, recent memories and a filtered, paged listing.

Other services reach it through ``npcworld.memory_client.http.HttpMemoryReader``. Errors are JSON
bodies with ``title``, ``detail`` and ``field``: 422 for a bad request (naming the field), 404 for an
NPC the memory service does not know, 409 when the stream lives in another embedding space.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import CAUSE_HEADER, parse_header
from npcworld.contracts import MemoryKind
from npcworld.db import open_pool
from npcworld.embeddings import EmbeddingSpaceMismatchError
from npcworld.errors import NotFoundError, TransientError, ValidationError
from npcworld.lanes import LANE_HEADER, WRITER_HEADER, handling_lane
from npcworld.memory_client import MemoryPage, MemoryView, RetrievalRequest, RetrievedView
from npcworld.messaging.retry import TRANSIENT_ERRORS, RetryPolicy
from npcworld.service_auth import internal_app
from npcworld.slow_calls import in_transaction
from services.memory.deps import MemoryDeps
from services.memory.domain import Memory, NpcRef, RetrievalWeights
from services.memory.retrieval import RetrievedMemory, retrieve

__all__ = ["MAX_PAGE", "create_app"]

MAX_PAGE = 500
_RETRIEVE_ATTEMPTS = 8
_RETRY = RetryPolicy(base_delay=0.01, max_delay=0.5)
Id = Annotated[str, Query(min_length=1, max_length=100)]


def create_app(
    deps: MemoryDeps, *, pool: AsyncConnectionPool | None = None, database_url: str = "",
    token: str | None = None,
) -> FastAPI:
    """The internal API; uses ``pool`` when given, else opens its own on ``database_url`` at start-up.
    With ``token`` every route but /healthz answers 401 unless the request carries it as a bearer token
    (``npcworld.service_auth``)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = pool or await open_pool(database_url, max_size=4, name="memory-api")
        try:
            yield
        finally:
            if pool is None:
                await app.state.pool.close()

    app = internal_app("npcworld memory (internal)", token, lifespan=lifespan)
    app.state.deps = deps
    _install_errors(app)
    _routes(app)
    return app


def _routes(app: FastAPI) -> None:
    @app.post("/internal/v1/retrieve", response_model=list[RetrievedView])
    async def retrieve_memories(body: RetrievalRequest, request: Request) -> list[RetrievedView]:
        deps: MemoryDeps = request.app.state.deps
        with _caller(request):
            await _turn(request, deps)
            return await _retrieve(request, deps, body)

    @app.get("/internal/v1/recent", response_model=list[MemoryView])
    async def recent(
        request: Request, tenant_id: Id, world_id: Id, npc_id: Id,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        kind: Annotated[list[MemoryKind] | None, Query()] = None,
    ) -> list[MemoryView]:
        page = await _page(request, NpcRef(tenant_id, world_id, npc_id), limit=limit, kinds=kind or [])
        return list(page.items)

    @app.get("/internal/v1/memories", response_model=MemoryPage)
    async def list_memories(
        request: Request, tenant_id: Id, world_id: Id, npc_id: Id,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        kind: Annotated[list[MemoryKind] | None, Query()] = None,
        since: datetime | None = None,
        until: datetime | None = None,
        cursor: Annotated[str | None, Query(max_length=200)] = None,
    ) -> MemoryPage:
        npc = NpcRef(tenant_id, world_id, npc_id)
        return await _page(request, npc, limit=limit, kinds=kind or [], since=since, until=until,
                           after=_decode_cursor(cursor) if cursor else None)


async def _retrieve(request: Request, deps: MemoryDeps, body: RetrievalRequest) -> list[RetrievedView]:
    w = body.weights
    weights = RetrievalWeights(w.recency, w.importance, w.relevance) if w else RetrievalWeights()
    npc = NpcRef(body.tenant_id, body.world_id, body.npc_id)
    # Embedded before a connection is taken: requests waiting for the model hold none. For ingest traffic
    # the model runs on a lowered thread (npcworld.yielding).
    vector = (await deps.embedder.embed([body.query]))[0] if body.query.strip() else None
    for attempt in range(1, _RETRIEVE_ATTEMPTS + 1):
        try:
            async with request.app.state.pool.connection() as conn, conn.transaction():
                found = await retrieve(conn, deps, npc, body.query,
                                       k=body.k, now=body.now, weights=weights, vector=vector,
                                       cause=parse_header(request.headers.get(CAUSE_HEADER)))
            return [_retrieved(r) for r in found]
        except TRANSIENT_ERRORS as exc:
            # A retrieval may deadlock with the consumer on the NPC's rows: that settles on retry.
            if attempt == _RETRIEVE_ATTEMPTS:
                raise TransientError(f"retrieval for {npc.npc_id!r} kept conflicting: {exc}") from exc
            await _RETRY.sleep(attempt)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _caller(request: Request) -> Iterator[None]:
    """Work for this request runs in the lane of the event its caller handles, and, when the call was made
    inside the caller's transaction, as part of it: a model call for it then never yields the CPU
    (``npcworld.yielding``), since a writer waits for the answer."""
    writer = request.headers.get(WRITER_HEADER)
    with handling_lane(request.headers.get(LANE_HEADER)), (
        in_transaction(writer) if writer else contextlib.nullcontext()
    ):
        yield


async def _turn(request: Request, deps: MemoryDeps) -> None:
    """Wait until the request may be served (``WorldFirst``: ingest after the world's work, unless a writer
    waits for it)."""
    lane, writer_waits = request.headers.get(LANE_HEADER), WRITER_HEADER in request.headers
    await deps.world_first.turn(lane, writer_waits=writer_waits)


async def _page(request: Request, npc: NpcRef, *, limit: int, **filters: Any) -> MemoryPage:
    deps: MemoryDeps = request.app.state.deps
    await _turn(request, deps)
    async with request.app.state.pool.connection() as conn:
        stream = await deps.repository.get_npc(conn, npc)
        if stream is None:
            raise NotFoundError(f"NPC {npc.npc_id!r} not found in world {npc.world_id!r}")
        rows = await deps.repository.page(conn, stream, limit=limit + 1, **filters)
    items = tuple(_view(m) for m in rows[:limit])
    last = rows[limit - 1] if len(rows) > limit else None
    return MemoryPage(items=items, next_cursor=_encode_cursor(last) if last else None)


def _encode_cursor(memory: Memory) -> str:
    raw = f"{memory.created_at.isoformat()}|{memory.memory_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        at, memory_id = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split("|")
        return datetime.fromisoformat(at), str(uuid.UUID(memory_id))
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise ValidationError("cursor is not one this API returned", field="cursor") from exc


def _view(m: Memory) -> MemoryView:
    return MemoryView(
        memory_id=m.memory_id, kind=m.kind, description=m.description, importance=m.importance,
        created_at=m.created_at, last_accessed_at=m.last_accessed_at, location=m.location, subject=m.subject,
        evidence=m.evidence, depth=m.depth, source=m.provenance.source, told_by=m.provenance.told_by,
        trust=m.provenance.trust,
    )


def _retrieved(r: RetrievedMemory) -> RetrievedView:
    s = r.scores
    return RetrievedView(
        **_view(r.memory).model_dump(), recency=s.recency, importance_score=s.importance,
        relevance=s.relevance, score=s.score,
    )


def _error(status: int, title: str, detail: str, field: str | None = None) -> JSONResponse:
    body = {"title": title, "status": status, "detail": detail, "field": field}
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": ("request",), "msg": "invalid"}
        loc = [str(p) for p in first["loc"] if p not in ("body", "query")]
        field = ".".join(loc) or "request"
        return _error(422, "Invalid request", f"{field}: {first['msg']}", field)

    @app.exception_handler(ValidationError)
    async def rejected(_: Request, exc: ValidationError) -> JSONResponse:
        return _error(422, "Invalid request", str(exc), exc.field)

    @app.exception_handler(NotFoundError)
    async def not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return _error(404, "Not found", str(exc))

    @app.exception_handler(TransientError)
    async def busy(_: Request, exc: TransientError) -> JSONResponse:
        return _error(503, "Busy, retry", str(exc))

    @app.exception_handler(EmbeddingSpaceMismatchError)
    async def other_space(_: Request, exc: EmbeddingSpaceMismatchError) -> JSONResponse:
        return _error(409, "Embedding space mismatch", str(exc))
