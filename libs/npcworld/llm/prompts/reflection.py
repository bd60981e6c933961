"""Prompts ``reflection_questions`` and ``reflection_insights``: the two LLM steps of a reflection."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.memory import MemoryKind
from npcworld.llm.prompts.template import PromptTemplate

__all__ = [
    "REFLECTION_INSIGHTS",
    "REFLECTION_QUESTIONS",
    "Insight",
    "MemoryItem",
    "ReflectionInsightsInput",
    "ReflectionInsightsOutput",
    "ReflectionQuestionsInput",
    "ReflectionQuestionsOutput",
    "insight_evidence_ids",
]

_Text = Annotated[str, Field(min_length=3, max_length=500)]


class MemoryItem(BaseModel):
    """A memory shown to the model; the prompt numbers them 1..N and the model cites those numbers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=100)
    description: str = Field(min_length=1, max_length=4000)
    importance: int | None = Field(default=None, ge=1, le=10)
    kind: MemoryKind | None = Field(default=None, description="what it is (not shown in the prompt text)")


class ReflectionQuestionsInput(BaseModel):
    """The NPC's most recent memories (the paper uses the 100 most recent)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    npc_name: str = Field(min_length=1, max_length=200)
    memories: tuple[MemoryItem, ...] = Field(min_length=1, max_length=200)


class ReflectionQuestionsOutput(BaseModel):
    """The 3 most salient high-level questions."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    questions: tuple[_Text, ...] = Field(min_length=3, max_length=3)


class ReflectionInsightsInput(BaseModel):
    """One question and the memories retrieved for it (reflections included)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    npc_name: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=500)
    memories: tuple[MemoryItem, ...] = Field(min_length=1, max_length=200)


class Insight(BaseModel):
    """A high-level statement and the numbers (1-based, as shown) of the memories supporting it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    text: _Text
    evidence: tuple[Annotated[int, Field(ge=1)], ...] = Field(min_length=1, max_length=20)


class ReflectionInsightsOutput(BaseModel):
    """Up to 5 insights (the prompt asks for 5)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    insights: tuple[Insight, ...] = Field(min_length=1, max_length=5)


def _numbered(memories: tuple[MemoryItem, ...]) -> str:
    return "\n".join(f"{i}. {m.description}" for i, m in enumerate(memories, start=1))


def _check_evidence(inputs: ReflectionInsightsInput, output: ReflectionInsightsOutput) -> None:
    n = len(inputs.memories)
    for insight in output.insights:
        bad = [i for i in insight.evidence if i > n]
        if bad:
            raise ValueError(f"evidence {bad} cites memories that were not shown (1..{n})")


def insight_evidence_ids(
    inputs: ReflectionInsightsInput, output: ReflectionInsightsOutput
) -> list[tuple[str, tuple[str, ...]]]:
    """Each insight's text with the memory ids its evidence numbers point to (duplicates dropped)."""
    ids = [m.id for m in inputs.memories]
    return [(ins.text, tuple(dict.fromkeys(ids[i - 1] for i in ins.evidence))) for ins in output.insights]


REFLECTION_QUESTIONS: PromptTemplate[ReflectionQuestionsInput, ReflectionQuestionsOutput] = PromptTemplate(
    kind="reflection_questions",
    version=1,
    system=(
        "You help a character in a simulated town reflect on recent experience. Given the character's "
        "recent memories, name the 3 most salient high-level questions that can be answered about the "
        "subjects in them.\n"
        'Answer with one JSON object only: {"questions": ["...", "...", "..."]} (exactly 3 questions).'
    ),
    user="Character: {npc_name}\nRecent memories:\n{memories}",
    input_model=ReflectionQuestionsInput,
    output_model=ReflectionQuestionsOutput,
    fields=lambda i: {"npc_name": i.npc_name, "memories": _numbered(i.memories)},
    temperature=0.3,
    max_tokens=300,
)

REFLECTION_INSIGHTS: PromptTemplate[ReflectionInsightsInput, ReflectionInsightsOutput] = PromptTemplate(
    kind="reflection_insights",
    version=1,
    system=(
        "You help a character in a simulated town reflect. From the numbered statements, infer 5 high-level "
        "insights that answer the question, each citing the numbers of the statements that support it.\n"
        'Answer with one JSON object only: {"insights": [{"text": "...", "evidence": [1, 5, 3]}, ...]} '
        "(5 insights; evidence numbers refer to the statements shown)."
    ),
    user="Character: {npc_name}\nQuestion: {question}\nStatements:\n{memories}",
    input_model=ReflectionInsightsInput,
    output_model=ReflectionInsightsOutput,
    fields=lambda i: {"npc_name": i.npc_name, "question": i.question, "memories": _numbered(i.memories)},
    check=_check_evidence,
    temperature=0.3,
    max_tokens=900,
)
