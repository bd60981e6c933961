"""The offline provider: deterministic, schema-valid answers derived from the inputs."""

from __future__ import annotations

import re

import pytest

from npcworld.llm import OfflineCognition, OfflineLLM
from npcworld.llm.offline import OFFLINE_ANSWERS, score_memory
from npcworld.llm.prompts import (
    PROMPTS,
    ImportanceBatchOutput,
    ImportanceOutput,
    MemoryItem,
    ReflectionInsightsInput,
    ReflectionInsightsOutput,
    ReflectionQuestionsInput,
    ReflectionQuestionsOutput,
    get_prompt,
    insight_evidence_ids,
)

NPC = "Klaus Mueller"
MEMORIES = tuple(
    MemoryItem(id=f"mem-{i}", description=text, importance=imp)
    for i, (text, imp) in enumerate(
        [
            ("Klaus Mueller is writing a research paper about gentrification", 4),
            ("Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe", 7),
            ("Klaus Mueller talked with Maria Lopez about the research paper", 5),
            ("Maria Lopez has a crush on Klaus Mueller", 8),
            ("Klaus Mueller is reading a book at the library", 4),
            ("the library is quiet", 2),
            ("Klaus Mueller is eating breakfast", 2),
            ("Maria Lopez invited Klaus Mueller to the Valentine's Day party", 6),
            ("Sam Moore is running for mayor", 8),
        ]
    )
)


def test_every_registered_prompt_kind_has_an_offline_answer() -> None:
    assert set(OFFLINE_ANSWERS) == set(PROMPTS)


@pytest.mark.parametrize(
    ("mundane", "poignant"),
    [
        ("Isabella Rodriguez is brushing her teeth", "Isabella Rodriguez broke up with her partner"),
        ("Klaus Mueller is cleaning his room", "Klaus Mueller asked her out on a first date"),
        ("the bed is idle", "Sam Moore announced he is running for mayor"),
        ("Maria is eating breakfast", "Maria's grandfather died last night"),
    ],
)
def test_importance_rates_life_events_above_routine(mundane: str, poignant: str) -> None:
    assert score_memory(mundane) < score_memory(poignant)


def test_importance_follows_the_papers_anchors() -> None:
    assert score_memory("Isabella is brushing her teeth") == 1
    assert score_memory("Isabella broke up with her partner") == 10
    assert score_memory("Klaus is cleaning the kitchen") == 2
    assert score_memory("Klaus asked his crush out") == 8


def test_importance_of_an_unremarkable_sight_is_low() -> None:
    assert score_memory("the lamp is on the table") <= 2
    assert score_memory("Klaus noticed Ayesha Khan near the window", npc_name="Klaus Mueller") <= 4


async def test_offline_rating_of_several_characters_at_once_equals_rating_each_alone() -> None:
    llm = OfflineLLM()
    people = [{"npc_name": NPC, "memories": ["brushing teeth", "broke up with partner"]},
              {"npc_name": "Isabella Rodriguez",
               "memories": ["cooking lunch", "a dragon burned the watchtower"]}]
    together = await llm.complete("importance_batch", {"people": people}, ImportanceBatchOutput,
                                  tenant_id="t", world_id="w")
    alone = [await llm.complete("importance", p, ImportanceOutput, tenant_id="t", world_id="w")
             for p in people]
    assert together.value.scores == tuple(a.value.scores for a in alone)


async def test_offline_llm_rates_a_batch_deterministically_in_order() -> None:
    llm = OfflineLLM()
    inputs = {"npc_name": NPC, "memories": ["brushing teeth", "broke up with partner", "cooking lunch"]}
    first = await llm.complete("importance", inputs, ImportanceOutput, tenant_id="t", world_id="w")
    again = await llm.complete("importance", inputs, ImportanceOutput, tenant_id="t", world_id="w")
    assert first.value == again.value
    assert first.request_hash == again.request_hash
    assert first.provider == "offline"
    assert len(first.value.scores) == 3
    assert first.value.scores[0] < first.value.scores[2] < first.value.scores[1]


def test_questions_are_about_the_subjects_that_recur() -> None:
    template = get_prompt("reflection_questions")
    inputs = ReflectionQuestionsInput(npc_name=NPC, memories=MEMORIES)
    answer = OfflineCognition().answer(template, inputs)
    assert isinstance(answer, ReflectionQuestionsOutput)
    assert len(answer.questions) == 3
    assert "Maria Lopez" in answer.questions[0]
    assert all(NPC in q for q in answer.questions)
    assert not any("Sam Moore" in q for q in answer.questions)  # mentioned once: not recurring


def test_greetings_and_task_steps_are_never_a_subject_however_often_they_recur() -> None:
    chatter = tuple(MemoryItem(id=f"m{k}", importance=2, description=text) for k, text in enumerate([
        'Ann Baker said to Klaus Mueller: "Hi Klaus! Good talking to you. Goodbye!"',
        'Tom Reed said to Klaus Mueller: "Thanks for telling me! Goodbye!"',
        "Tom Reed is begin: morning: work as baker: getting started",
        "Ann Baker is finish: morning: work as baker: getting started",
        'Ann Baker said to Klaus Mueller: "Hello Klaus. Goodbye!"',
    ]))
    answer = OfflineCognition().answer(get_prompt("reflection_questions"),
                                       ReflectionQuestionsInput(npc_name=NPC, memories=chatter))
    assert isinstance(answer, ReflectionQuestionsOutput)
    asked = " ".join(answer.questions).lower()
    assert "ann baker" in asked
    assert not {"goodbye", "hello", "thanks", "begin", "started"} & set(re.findall(r"[a-z]+", asked))


def test_questions_fall_back_to_general_ones_when_little_recurs() -> None:
    inputs = ReflectionQuestionsInput(npc_name=NPC, memories=(MemoryItem(id="m1", description="it rains"),))
    answer = OfflineCognition().answer(get_prompt("reflection_questions"), inputs)
    assert isinstance(answer, ReflectionQuestionsOutput)
    assert len(set(answer.questions)) == 3


def test_insights_cite_the_real_ids_of_memories_that_mention_their_subject() -> None:
    inputs = ReflectionInsightsInput(
        npc_name=NPC, question="What does Klaus Mueller think about Maria Lopez?", memories=MEMORIES
    )
    answer = OfflineCognition().answer(get_prompt("reflection_insights"), inputs)
    assert isinstance(answer, ReflectionInsightsOutput)
    assert 1 <= len(answer.insights) <= 5
    pairs = insight_evidence_ids(inputs, answer)
    text, evidence = pairs[0]
    assert "Maria Lopez" in text
    assert set(evidence) == {"mem-2", "mem-3", "mem-7"}
    by_id = {m.id: m.description for m in MEMORIES}
    for _, evidence in pairs:
        assert evidence and all(i in by_id for i in evidence)


def test_insights_are_deterministic() -> None:
    inputs = ReflectionInsightsInput(
        npc_name=NPC, question="What is going on at the library?", memories=MEMORIES
    )
    cognition = OfflineCognition()
    template = get_prompt("reflection_insights")
    assert cognition.answer(template, inputs) == cognition.answer(template, inputs)


def test_insights_come_from_the_best_memory_when_no_subject_is_found() -> None:
    memories = (
        MemoryItem(id="a", description="it is", importance=2),
        MemoryItem(id="b", description="ok", importance=6),
    )
    inputs = ReflectionInsightsInput(npc_name=NPC, question="Why?", memories=memories)
    answer = OfflineCognition().answer(get_prompt("reflection_insights"), inputs)
    assert isinstance(answer, ReflectionInsightsOutput)
    assert insight_evidence_ids(inputs, answer) == [(answer.insights[0].text, ("b",))]
