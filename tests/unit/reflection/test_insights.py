"""Insights to evidence memory ids and reflection-tree depth, with the offline provider and a fake reader."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from npcworld.llm import OfflineLLM
from npcworld.memory_client.testing import FakeMemoryReader
from services.reflection.domain import CitedInsight, ShownMemory, cite_evidence, merge_insights, prompt_order
from services.reflection.job import ReflectionJob
from services.reflection.reflect import compose_reflection
from services.reflection.settings import ReflectionSettings

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def _shown(n: int, depths: dict[int, int] | None = None) -> list[ShownMemory]:
    depths = depths or {}
    return [ShownMemory(f"m{i}", T0 + timedelta(minutes=i), depths.get(i, 0)) for i in range(1, n + 1)]


def test_evidence_numbers_map_to_the_ids_of_the_memories_shown() -> None:
    cited = cite_evidence(2, _shown(5), [("Marta loves the cafe", [1, 3, 3, 5])])
    assert cited == [CitedInsight("Marta loves the cafe", 2, ("m1", "m3", "m5"), 1)]


def test_depth_is_one_more_than_the_deepest_cited_memory() -> None:
    shown = _shown(4, {2: 1, 4: 3})
    cited = cite_evidence(0, shown, [("a", [1]), ("b", [1, 2]), ("c", [2, 4])])
    assert [c.depth for c in cited] == [1, 2, 4]


@pytest.mark.parametrize("numbers", [[0], [6], []])
def test_evidence_outside_the_shown_memories_is_refused(numbers: list[int]) -> None:
    with pytest.raises(ValueError):
        cite_evidence(0, _shown(5), [("x", numbers)])


def test_the_same_insight_from_two_questions_is_kept_once() -> None:
    a = CitedInsight("Marta loves the cafe", 0, ("m1",), 1)
    b = CitedInsight("marta  loves the CAFE", 1, ("m2",), 1)
    c = CitedInsight("Sam runs for mayor", 1, ("m3",), 1)
    assert merge_insights([[a], [b, c]]) == [a, c]


def test_memories_are_shown_oldest_first_whatever_order_they_came_in() -> None:
    shown = _shown(3)
    assert prompt_order([shown[2], shown[0], shown[1]]) == shown


async def test_offline_reflection_asks_3_questions_and_cites_real_memory_ids() -> None:
    reader, ids = FakeMemoryReader(), ("t1", "w1", "marta")
    texts = ["Marta is planning a Valentine's Day party at Hobbs Cafe",
             "Marta asked Sam to come to the Valentine's Day party",
             "Isabella decorated Hobbs Cafe for the party",
             "Marta brewed coffee at Hobbs Cafe", "Sam is running for mayor",
             "Marta talked with Sam about the mayor election"]
    for i, text in enumerate(texts * 3):
        reader.add(*ids, text, created_at=T0 + timedelta(minutes=i), importance=6)
    known = {m.memory_id for m in reader.streams[ids]}
    job = ReflectionJob(tenant_id="t1", world_id="w1", npc_id="marta", run=1,
                        run_key="reflection:t1:w1:marta:1", world_time=T0 + timedelta(hours=2),
                        trigger_event_id=uuid.uuid4(), correlation_id=uuid.uuid4())
    llm = OfflineLLM()
    done = await compose_reflection(job, "Marta Quill", llm=llm, reader=reader, settings=ReflectionSettings())
    assert len(done.questions) == 3 and done.provider == "offline"
    assert [kind for kind, _ in llm.calls] == ["reflection_questions"] + ["reflection_insights"] * 3
    assert [r.k for r in reader.retrievals] == [30, 30, 30]
    assert [r.query for r in reader.retrievals] == list(done.questions)
    assert done.insights and all(set(i.evidence) <= known and i.depth == 1 for i in done.insights)
    assert {i.question for i in done.insights} <= {0, 1, 2}
    assert done.memories_considered == 18
