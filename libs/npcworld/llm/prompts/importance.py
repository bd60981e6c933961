"""Prompts ``importance`` and ``importance_batch``: rate the poignancy (1-10) of memories in one call, of one
NPC or of several NPCs of a world at the same moment (a step's new memories)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from npcworld.llm.prompts.template import PromptTemplate

__all__ = ["IMPORTANCE", "IMPORTANCE_BATCH", "MAX_BATCH_MEMORIES", "MAX_MEMORIES", "ImportanceBatchInput",
           "ImportanceBatchOutput", "ImportanceInput", "ImportanceOutput"]

MAX_MEMORIES = 50  # of one NPC in one call
MAX_BATCH_MEMORIES = 100  # of all NPCs of an importance_batch call together


class ImportanceInput(BaseModel):
    """Memories of one NPC to rate, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    npc_name: str = Field(min_length=1, max_length=200)
    memories: tuple[Annotated[str, Field(min_length=1, max_length=4000)], ...] = Field(
        min_length=1, max_length=MAX_MEMORIES
    )


class ImportanceOutput(BaseModel):
    """One score per memory, in the same order."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    scores: tuple[Annotated[int, Field(ge=1, le=10)], ...] = Field(min_length=1)


class ImportanceBatchInput(BaseModel):
    """Memories of several NPCs to rate (each NPC's in order): at least two NPCs, each named once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Each character brings at least one memory, so the memory bound below bounds the characters too.
    people: tuple[ImportanceInput, ...] = Field(min_length=2, max_length=MAX_BATCH_MEMORIES)

    @model_validator(mode="after")
    def _bounded(self) -> ImportanceBatchInput:
        names = [p.npc_name for p in self.people]
        if len(set(names)) != len(names):
            raise ValueError("each character appears once")
        if sum(len(p.memories) for p in self.people) > MAX_BATCH_MEMORIES:
            raise ValueError(f"at most {MAX_BATCH_MEMORIES} memories in one call")
        return self


class ImportanceBatchOutput(BaseModel):
    """One list of scores per character, in the order given, each with one score per memory."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    scores: tuple[tuple[Annotated[int, Field(ge=1, le=10)], ...], ...] = Field(min_length=1)


def _fields(inputs: ImportanceInput) -> dict[str, str]:
    lines = "\n".join(f"{i}. {text}" for i, text in enumerate(inputs.memories, start=1))
    return {"npc_name": inputs.npc_name, "memories": lines, "count": str(len(inputs.memories))}


def _check(inputs: ImportanceInput, output: ImportanceOutput) -> None:
    if len(output.scores) != len(inputs.memories):
        raise ValueError(f"expected {len(inputs.memories)} scores, got {len(output.scores)}")


def _batch_fields(inputs: ImportanceBatchInput) -> dict[str, str]:
    parts = []
    for p in inputs.people:
        lines = "\n".join(f"{i}. {text}" for i, text in enumerate(p.memories, start=1))
        parts.append(f"Character: {p.npc_name}\nMemories ({len(p.memories)}):\n{lines}")
    return {"people": "\n\n".join(parts), "count": str(len(inputs.people))}


def _check_batch(inputs: ImportanceBatchInput, output: ImportanceBatchOutput) -> None:
    if len(output.scores) != len(inputs.people):
        raise ValueError(f"expected {len(inputs.people)} lists of scores, got {len(output.scores)}")
    for person, scores in zip(inputs.people, output.scores, strict=True):
        if len(scores) != len(person.memories):
            raise ValueError(
                f"expected {len(person.memories)} scores for {person.npc_name}, got {len(scores)}"
            )


# Scale anchors are the Generative Agents paper's (brushing teeth 1, a break-up 10).
IMPORTANCE: PromptTemplate[ImportanceInput, ImportanceOutput] = PromptTemplate(
    kind="importance",
    version=1,
    system=(
        "You rate memories of a character in a simulated town. On a scale of 1 to 10, where 1 is purely "
        "mundane (e.g. brushing teeth, making the bed) and 10 is extremely poignant (e.g. a break-up, a "
        "college acceptance), rate the likely poignancy of each memory for the character.\n"
        'Answer with one JSON object only: {"scores": [<integer 1-10>, ...]} with exactly one score per '
        "memory, in the order given."
    ),
    user="Character: {npc_name}\nMemories ({count}):\n{memories}",
    input_model=ImportanceInput,
    output_model=ImportanceOutput,
    fields=_fields,
    check=_check,
    temperature=0.0,
    max_tokens=300,
)

# The same rating for several characters at once: a stepped world's new memories of one moment in one call
# instead of one call per NPC (each memory is still rated for its own character).
IMPORTANCE_BATCH: PromptTemplate[ImportanceBatchInput, ImportanceBatchOutput] = PromptTemplate(
    kind="importance_batch",
    version=1,
    system=(
        "You rate memories of characters in a simulated town. On a scale of 1 to 10, where 1 is purely "
        "mundane (e.g. brushing teeth, making the bed) and 10 is extremely poignant (e.g. a break-up, a "
        "college acceptance), rate the likely poignancy of each memory for the character whose memory "
        "it is.\n"
        'Answer with one JSON object only: {"scores": [[<integer 1-10>, ...], ...]} with one list per '
        "character, in the order given, and exactly one score per memory of that character, in its order."
    ),
    user="Characters: {count}\n\n{people}",
    input_model=ImportanceBatchInput,
    output_model=ImportanceBatchOutput,
    fields=_batch_fields,
    check=_check_batch,
    temperature=0.0,
    max_tokens=600,
)
