"""Prompt ``importance``: rate the poignancy (1-10) of a batch of memories in one call."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from npcworld.llm.prompts.template import PromptTemplate

__all__ = ["IMPORTANCE", "ImportanceInput", "ImportanceOutput"]


class ImportanceInput(BaseModel):
    """Memories of one NPC to rate, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    npc_name: str = Field(min_length=1, max_length=200)
    memories: tuple[Annotated[str, Field(min_length=1, max_length=4000)], ...] = Field(
        min_length=1, max_length=50
    )


class ImportanceOutput(BaseModel):
    """One score per memory, in the same order."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    scores: tuple[Annotated[int, Field(ge=1, le=10)], ...] = Field(min_length=1)


def _fields(inputs: ImportanceInput) -> dict[str, str]:
    lines = "\n".join(f"{i}. {text}" for i, text in enumerate(inputs.memories, start=1))
    return {"npc_name": inputs.npc_name, "memories": lines, "count": str(len(inputs.memories))}


def _check(inputs: ImportanceInput, output: ImportanceOutput) -> None:
    if len(output.scores) != len(inputs.memories):
        raise ValueError(f"expected {len(inputs.memories)} scores, got {len(output.scores)}")


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
