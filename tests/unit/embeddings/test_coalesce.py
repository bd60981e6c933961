"""Concurrent embedding calls share model runs, each still gets its own vectors (and its own error)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from npcworld.embeddings.coalesce import Coalescer


class _Model:
    """Vectors that encode the text (its length), recording each run's batch; the first run is held until
    released, so calls made meanwhile queue up."""

    def __init__(self) -> None:
        self.runs: list[list[str]] = []
        self.release = threading.Event()

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.runs.append(list(texts))
        if len(self.runs) == 1:
            self.release.wait(5)
        if any(t == "boom" for t in texts):
            raise RuntimeError("model failed")
        return np.array([[len(t), 0.0] for t in texts], dtype=np.float32)


async def test_calls_made_while_a_run_is_in_flight_go_together_in_the_next_run() -> None:
    model = _Model()
    coalescer = Coalescer(model)
    first = asyncio.create_task(coalescer.embed(["a"]))
    await asyncio.sleep(0.05)  # the first run is in flight
    rest = [asyncio.create_task(coalescer.embed([t * 2, t * 3])) for t in "bcd"]
    await asyncio.sleep(0.05)
    model.release.set()
    assert (await first)[:, 0].tolist() == [1]
    assert [(await r)[:, 0].tolist() for r in rest] == [[2, 3]] * 3
    assert model.runs == [["a"], ["bb", "bbb", "cc", "ccc", "dd", "ddd"]]


async def test_a_failed_run_fails_its_callers_only_and_a_lone_call_runs_at_once() -> None:
    model = _Model()
    model.release.set()
    coalescer = Coalescer(model, max_texts=2, small=2)
    assert (await coalescer.embed(["x"]))[:, 0].tolist() == [1]
    calls = [coalescer.embed(t) for t in (["boom"], ["ab", "cd"], ["efg"])]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[0], RuntimeError)
    assert [r[:, 0].tolist() for r in results[1:]] == [[2, 2], [3]]  # type: ignore[index]
    assert all(len(run) <= 2 for run in model.runs)  # max_texts splits runs


async def test_an_empty_queue_is_not_left_running() -> None:
    model = _Model()
    model.release.set()
    coalescer = Coalescer(model)
    await asyncio.gather(*(coalescer.embed([str(i)]) for i in range(5)))
    with pytest.raises(RuntimeError):
        await coalescer.embed(["boom"])
    assert (await coalescer.embed(["ok"]))[:, 0].tolist() == [2]


async def test_a_large_call_runs_on_its_own_and_never_holds_back_small_ones() -> None:
    model = _Model()
    coalescer = Coalescer(model, small=2)
    big = asyncio.create_task(coalescer.embed(["p"] * 5))  # held in the model
    await asyncio.sleep(0.05)
    assert (await asyncio.wait_for(coalescer.embed(["q"]), 2))[:, 0].tolist() == [1]
    model.release.set()
    assert len(await big) == 5
