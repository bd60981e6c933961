"""The offline provider: answers every prompt kind with deterministic, schema-valid output derived
from the inputs. It is labelled ``offline`` wherever it shows and does not imitate a language model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from npcworld.llm.errors import LLMRequestError
from npcworld.llm.offline.dialogue import answer_interview, answer_player, answer_summary, answer_turn
from npcworld.llm.offline.importance import rate_importance, rate_importance_batch
from npcworld.llm.offline.planning import answer_actions, answer_day, answer_hours, answer_reaction
from npcworld.llm.offline.reflection import answer_insights, answer_questions
from npcworld.llm.prompts import PromptTemplate
from npcworld.llm.types import OFFLINE_MODEL

__all__ = ["OFFLINE_ANSWERS", "OfflineCognition"]

OFFLINE_ANSWERS: Mapping[str, Callable[[Any], BaseModel]] = {
    "importance": rate_importance,
    "importance_batch": rate_importance_batch,
    "plan_day": answer_day,
    "plan_hours": answer_hours,
    "plan_actions": answer_actions,
    "plan_reaction": answer_reaction,
    "reflection_questions": answer_questions,
    "reflection_insights": answer_insights,
    "dialogue_turn": answer_turn,
    "dialogue_summary": answer_summary,
    "player_reply": answer_player,
    "interview_answer": answer_interview,
}


class OfflineCognition:
    """Rule-based answers for each prompt kind (see docs/llm.md for what they do and do not do)."""

    name = "offline"
    model = OFFLINE_MODEL

    def answer(self, template: PromptTemplate[Any, Any], inputs: BaseModel) -> BaseModel:
        """The offline answer to ``template`` for validated ``inputs``, checked like a model's answer.

        Raises:
            LLMRequestError: the prompt kind has no offline answer.
        """
        rule = OFFLINE_ANSWERS.get(template.kind)
        if rule is None:
            raise LLMRequestError(f"the offline provider cannot answer {template.key}")
        value = rule(inputs)
        checked: BaseModel = template.validate_output(inputs, value.model_dump())
        return checked
