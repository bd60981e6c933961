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
from npcworld.yielding import run_blocking

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


async def test_nice_zero_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INGEST_NICE", "0")
    with handling_lane("ingest"):
        assert await run_blocking(_nice) == os.getpriority(os.PRIO_PROCESS, 0)


async def test_a_shared_model_run_is_lowered_only_when_it_serves_ingest_alone() -> None:
    seen: list[int] = []

    def embed(texts: list[str]) -> np.ndarray:
        seen.append(_nice())
        return np.zeros((len(texts), 3), dtype=np.float32)

    coalescer = Coalescer(embed)

    async def ask(lane: str, text: str) -> None:
        with handling_lane(lane):
            await coalescer.embed([text])

    await asyncio.gather(ask("ingest", "a"), ask("ingest", "b"))
    await asyncio.gather(ask("ingest", "c"), ask("world", "d"), ask("ingest", "e"))
    process = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen[0] == min(19, process + 10)  # the first run: a lone ingest query
    assert seen[-1] == process  # the last run also served the world's query
