"""Model work done for ingest traffic runs on threads scheduled below the rest; any other lane's work, or a
shared run that serves another lane too, runs on ordinary threads."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import numpy as np
import pytest

from npcworld.embeddings.coalesce import Coalescer
from npcworld.lanes import handling_lane
from npcworld.slow_calls import in_transaction
from npcworld.yielding import run_blocking, unawaited

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


async def test_ingest_work_runs_on_a_lowered_thread_and_the_world_s_does_not() -> None:
    process = os.getpriority(os.PRIO_PROCESS, 0)
    with handling_lane("ingest"):
        ingest = await run_blocking(_nice)
    with handling_lane("world"):
        world = await run_blocking(_nice)
    chat = await run_blocking(_nice, lane="interactive")
    assert ingest == min(19, process + 10)
    assert world == chat == process


async def test_work_a_consumer_transaction_waits_for_is_never_lowered() -> None:
    with handling_lane("ingest"), in_transaction("memory"):
        assert await run_blocking(_nice) == os.getpriority(os.PRIO_PROCESS, 0)


async def test_work_nobody_waits_for_is_lowered_whatever_its_lane_unless_a_transaction_waits() -> None:
    """The memory service records a chat's memories after the reply went out: a chat's lane, nobody
    waiting (``unawaited``)."""
    process = os.getpriority(os.PRIO_PROCESS, 0)
    with handling_lane("interactive"), unawaited():
        background = await run_blocking(_nice)
        with in_transaction("memory"):
            written = await run_blocking(_nice)
    assert background == min(19, process + 10)
    assert written == process


async def test_nice_zero_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INGEST_NICE", "0")
    with handling_lane("ingest"):
        assert await run_blocking(_nice) == os.getpriority(os.PRIO_PROCESS, 0)


async def test_ingest_queries_share_runs_of_their_own_so_another_lane_never_waits_for_a_lowered_run() -> None:
    seen: list[tuple[list[str], int]] = []

    def embed(texts: list[str]) -> np.ndarray:
        seen.append((texts, _nice()))
        return np.zeros((len(texts), 3), dtype=np.float32)

    coalescer = Coalescer(embed)

    async def ask(lane: str, text: str) -> None:
        with handling_lane(lane):
            await coalescer.embed([text])

    await asyncio.gather(ask("ingest", "a"), ask("world", "b"), ask("ingest", "c"), ask("interactive", "d"))
    process = os.getpriority(os.PRIO_PROCESS, 0)
    lowered = min(19, process + 10)
    # the calls that arrived together share a run within their class, never across
    runs = sorted((tuple(texts), nice) for texts, nice in seen)
    assert runs == [(("a", "c"), lowered), (("b", "d"), process)]


async def test_an_ingest_query_a_writer_waits_for_joins_the_runs_that_are_not_lowered() -> None:
    """A retrieval made inside a consumer's transaction (the memory API marks it so) holds the writer, and its
    locks, until it is answered."""
    seen: list[tuple[list[str], int]] = []

    def embed(texts: list[str]) -> np.ndarray:
        seen.append((texts, _nice()))
        return np.zeros((len(texts), 3), dtype=np.float32)

    coalescer = Coalescer(embed)
    with handling_lane("ingest"), in_transaction("planning"):
        await coalescer.embed(["waited for"])
    assert seen == [(["waited for"], os.getpriority(os.PRIO_PROCESS, 0))]
