"""Concurrent embedding calls of one event loop share model runs.

A service embeds a query per retrieval request; under load many requests embed at once. Run separately,
each is a model call of its own (MiniLM on two cores: 3.8 ms a sentence alone, 1.7 ms in a batch of 16) and
the calls contend for the same cores. Here small calls (a query or two) run one model run at a time per
event loop; those that arrive meanwhile wait and go together in the next run. Nothing waits for a batch to
fill: an idle service embeds a lone call at once. Large calls (a poll's or a step's texts, batched already)
run on their own, so a query never queues behind them. Vectors do not depend on the batch (padding is
masked), so results are unchanged. Calls made for ingest traffic share runs of their own, on a lowered
thread (``npcworld.yielding``): another lane's query never waits for a run that yields the CPU.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from npcworld.yielding import lowered, run_blocking

__all__ = ["Coalescer"]

Vectors = npt.NDArray[np.float32]


@dataclass
class _Queue:
    lane: str  # the lane the runs are made for ("ingest": lowered)
    waiting: list[tuple[list[str], asyncio.Future[Vectors]]] = field(default_factory=list)
    running: bool = False
    task: asyncio.Task[None] | None = None  # held so the running drain is not garbage-collected


class Coalescer:
    """Runs ``embed_sync`` in a worker thread, one run at a time per event loop, for every call waiting."""

    def __init__(
        self, embed_sync: Callable[[list[str]], Vectors], max_texts: int = 64, small: int = 4
    ) -> None:
        self._embed_sync = embed_sync
        self._max_texts = max_texts
        self._small = small
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, _Queue]] = (
            weakref.WeakKeyDictionary()
        )

    async def embed(self, texts: list[str]) -> Vectors:
        if len(texts) > self._small:
            return await run_blocking(self._embed_sync, texts)
        loop = asyncio.get_running_loop()
        lower = lowered()  # ingest that no writer waits for
        queues = self._queues.setdefault(loop, {})
        if (queue := queues.get(lower)) is None:
            queue = queues[lower] = _Queue("ingest" if lower else "world")
        future: asyncio.Future[Vectors] = loop.create_future()
        queue.waiting.append((texts, future))
        if not queue.running:
            queue.running = True
            queue.task = loop.create_task(self._drain(queue))
        return await future

    async def _drain(self, queue: _Queue) -> None:
        try:
            while queue.waiting:
                batch: list[tuple[list[str], asyncio.Future[Vectors]]] = []
                count = 0
                while queue.waiting and (not batch or count + len(queue.waiting[0][0]) <= self._max_texts):
                    texts, future = queue.waiting.pop(0)
                    batch.append((texts, future))
                    count += len(texts)
                await self._run(batch, queue.lane)
        finally:
            queue.running = False

    async def _run(self, batch: list[tuple[list[str], asyncio.Future[Vectors]]], lane: str) -> None:
        texts = [t for texts, _ in batch for t in texts]
        try:
            vectors = await run_blocking(self._embed_sync, texts, lane=lane)
        except Exception as exc:  # every caller of this run gets the error it would have met alone
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        start = 0
        for texts, future in batch:
            if not future.done():  # a caller that gave up (cancelled) is skipped
                future.set_result(vectors[start : start + len(texts)])
            start += len(texts)
