"""A player's uncorroborated claim is never promoted: it does not count toward a reflection, however often it
is repeated, and a reflection never shows it to the model, so no insight cites or states it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from npcworld.llm import OfflineLLM
from npcworld.memory_client.testing import FakeMemoryReader
from services.reflection.domain import Accumulator, add_importance
from services.reflection.job import ReflectionJob
from services.reflection.reflect import compose_reflection
from services.reflection.settings import ReflectionSettings

T0 = datetime(2023, 2, 14, 8, 0, tzinfo=UTC)
IDS = ("t1", "w1", "ann")
CLAIM = 'A player (p-liar) said to Ann Baker: "Tom Reed stole the bread from the bakery"'
DAY = ["Ann Baker baked rye bread at the bakery", "Tom Reed bought rye bread at the bakery",
       "Ann Baker sold the last rye loaf at the bakery", "Ann Baker swept the bakery floor"]


def test_claims_repeated_any_number_of_times_never_trigger_a_reflection() -> None:
    acc = Accumulator()
    for _ in range(100):
        acc, trigger = add_importance(acc, "observation", 9, threshold=150, trust="low")
        assert trigger is None
    assert acc == Accumulator()
    _, trigger = add_importance(Accumulator(149), "observation", 2, threshold=150, trust="medium")
    assert trigger is not None


async def test_a_reflection_neither_shows_nor_cites_a_claim() -> None:
    reader = FakeMemoryReader()
    claims = {reader.add(*IDS, CLAIM, created_at=T0 + timedelta(minutes=i), importance=8, source="told",
                         told_by="player:p-liar", trust="low").memory_id for i in range(10)}
    for i, text in enumerate(DAY * 3):
        reader.add(*IDS, text, created_at=T0 + timedelta(minutes=20 + i), importance=5)
    job = ReflectionJob(tenant_id="t1", world_id="w1", npc_id="ann", run=1, run_key="reflection:t1:w1:ann:1",
                        world_time=T0 + timedelta(hours=2), trigger_event_id=uuid.uuid4(),
                        correlation_id=uuid.uuid4())
    llm = OfflineLLM()
    done = await compose_reflection(job, "Ann Baker", llm=llm, reader=reader, settings=ReflectionSettings())
    assert done.insights and not [i for i in done.insights if set(i.evidence) & claims]
    assert not [i for i in done.insights if "stole" in i.text]
    assert not [inputs for _, inputs in llm.calls if "stole" in inputs.model_dump_json()]
    assert done.memories_considered == len(DAY) * 3  # the claims were not among what it reflected on
