"""The registry of prompt templates: every prompt the project sends is listed here, by kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from pydantic import BaseModel

from npcworld.llm.prompts.dialogue import DIALOGUE_SUMMARY, DIALOGUE_TURN, INTERVIEW_ANSWER, PLAYER_REPLY
from npcworld.llm.prompts.importance import IMPORTANCE, IMPORTANCE_BATCH
from npcworld.llm.prompts.planning import PLAN_ACTIONS, PLAN_DAY, PLAN_HOURS, PLAN_REACTION
from npcworld.llm.prompts.reflection import REFLECTION_INSIGHTS, REFLECTION_QUESTIONS
from npcworld.llm.prompts.template import Message, PromptTemplate

__all__ = ["PROMPTS", "get_prompt", "render_recorded"]

PROMPTS: Mapping[str, PromptTemplate[Any, Any]] = {
    t.kind: t for t in (PLAN_DAY, PLAN_HOURS, PLAN_ACTIONS, PLAN_REACTION,
                        IMPORTANCE, IMPORTANCE_BATCH, REFLECTION_QUESTIONS, REFLECTION_INSIGHTS,
                        DIALOGUE_TURN, DIALOGUE_SUMMARY, PLAYER_REPLY, INTERVIEW_ANSWER)
}


def get_prompt(kind: str, output_model: type[BaseModel] | None = None) -> PromptTemplate[Any, Any]:
    """The current template of ``kind``.

    Raises:
        KeyError: no such prompt kind.
        TypeError: ``output_model`` is not the template's output model (a programming error).
    """
    try:
        template = PROMPTS[kind]
    except KeyError:
        raise KeyError(f"unknown prompt kind {kind!r}; known: {sorted(PROMPTS)}") from None
    if output_model is not None and output_model is not template.output_model:
        raise TypeError(
            f"prompt {template.key} answers {template.output_model.__name__}, not {output_model.__name__}"
        )
    return template


def render_recorded(kind: str, version: int, inputs: Mapping[str, Any] | None) -> list[Message] | None:
    """The messages of a recorded call rendered again from its template inputs (call records keep the
    kind, version and inputs, not the rendered text); None when the inputs are gone or the template has
    changed version since (its text is no longer known)."""
    template = PROMPTS.get(kind)
    if inputs is None or template is None or template.version != version:
        return None
    try:
        return template.render(template.input_model.model_validate(inputs))
    except pydantic.ValidationError:
        return None
