"""Streaming a reply's text while the LLM layer produces it: a sink set for the duration of one call
(``streaming_to``), the words of an offline answer, and the ``reply`` field read out of a model's JSON as
its tokens arrive. The validated answer is still what ``complete`` returns; chunks are a preview of it.

``ReplyChunkWriter`` is the sink services use: it stores each chunk in ``llm_reply_chunks`` (migration 0108),
outside any transaction, where the gateway's per-chat stream reads them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool, PoolTimeout

__all__ = ["STREAMED_FIELDS", "ChunkBatcher", "ReplyChunkWriter", "ReplyFieldReader", "Sink", "current_sink",
           "streaming_to", "words"]

logger = logging.getLogger(__name__)
Sink = Callable[[str], Awaitable[None]]
# Which prompt's output field a stream shows (the text a player reads); other prompts are not streamed.
STREAMED_FIELDS = {"player_reply": "reply", "interview_answer": "reply"}

_sink: ContextVar[Sink | None] = ContextVar("npcworld_reply_sink", default=None)


@runtime_checkable
class ChunkBatcher(Protocol):
    """A sink that also takes several chunks known together (an answer that is final already) at once."""

    async def __call__(self, text: str) -> None: ...

    async def send_all(self, texts: Sequence[str]) -> None: ...


def current_sink() -> Sink | None:
    """The sink of the call this task makes, if a caller asked for one."""
    return _sink.get()


@contextlib.asynccontextmanager
async def streaming_to(sink: Sink | None) -> AsyncIterator[None]:
    """Calls made inside the block send their reply text to ``sink`` as it is produced (None: they don't)."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


def words(text: str) -> list[str]:
    """``text`` cut after each run of spaces: joined again they are ``text`` exactly."""
    return re.findall(r"\S+\s*|\s+", text)


class ReplyFieldReader:
    """Reads one string field of a JSON object as its text arrives in pieces: ``feed`` returns the part of
    the field's value that is complete so far (escapes decoded), nothing before the field starts."""

    def __init__(self, field: str) -> None:
        self._opening = re.compile(r'"' + re.escape(field) + r'"\s*:\s*"')
        self._raw = ""
        self._start: int | None = None
        self._done = False
        self._sent = 0

    def feed(self, piece: str) -> str:
        if self._done:
            return ""
        self._raw += piece
        if self._start is None:
            found = self._opening.search(self._raw)
            if found is None:
                return ""
            self._start = found.end()
        value, self._done = _string_prefix(self._raw[self._start:])
        new = value[self._sent:]
        self._sent = len(value)
        return new


def _string_prefix(raw: str) -> tuple[str, bool]:
    """The decoded prefix of a JSON string body (after its opening quote) and whether it is closed."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == '"':
            return "".join(out), True
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        size = 6 if raw[i + 1 : i + 2] == "u" else 2
        if i + size > len(raw):
            break  # an escape cut in two: wait for the rest
        try:
            out.append(json.loads(f'"{raw[i:i + size]}"'))
        except json.JSONDecodeError:
            out.append(raw[i + 1 : i + size])
        i += size
    return "".join(out), False


class ReplyChunkWriter:
    """A sink storing each chunk for the chat ``cause_id`` (numbered from 1) on a connection of its own,
    each insert committed at once, so a stream reading them sees the reply grow."""

    def __init__(self, pool: AsyncConnectionPool[Any], cause_id: uuid.UUID, tenant_id: str, world_id: str):
        self._pool, self._cause, self._tenant, self._world = pool, cause_id, tenant_id, world_id
        self._seq = 0
        self._broken = False
        self._conn: AsyncConnection[Any] | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __call__(self, text: str) -> None:
        await self.send_all([text])

    async def send_all(self, texts: Sequence[str]) -> None:
        """Store chunks in order, in one statement (an offline or replayed answer's words: one commit for the
        reply instead of one per word)."""
        texts = [t for t in texts if t]
        if not texts or self._broken:
            return
        first, self._seq = self._seq + 1, self._seq + len(texts)
        try:
            if self._conn is None:
                opened: AsyncConnection[Any] = await self._stack.enter_async_context(self._pool.connection())
                await opened.set_autocommit(True)
                self._conn = opened
            await self._conn.execute(
                "INSERT INTO llm_reply_chunks (cause_id, seq, tenant_id, world_id, text)"
                " SELECT %s, %s + n - 1, %s, %s, t FROM unnest(%s::text[]) WITH ORDINALITY AS c(t, n)"
                " ON CONFLICT (cause_id, seq) DO UPDATE SET text = excluded.text",
                (self._cause, first, self._tenant, self._world, texts),
            )
        except (psycopg.Error, PoolTimeout) as exc:
            # The preview is lost, not the reply: the stream still ends with the validated reply.
            logger.warning("reply chunks of chat %s not stored: %r", self._cause, exc)
            self._broken = True

    async def aclose(self) -> None:
        with contextlib.suppress(psycopg.Error):
            if self._conn is not None:
                await self._conn.set_autocommit(False)
        await self._stack.aclose()
        self._conn = None
