"""Versioned prompt templates, all in one place, with their input and output models."""

from npcworld.llm.prompts.importance import (
    IMPORTANCE,
    IMPORTANCE_BATCH,
    MAX_BATCH_MEMORIES,
    MAX_MEMORIES,
    ImportanceBatchInput,
    ImportanceBatchOutput,
    ImportanceInput,
    ImportanceOutput,
)
from npcworld.llm.prompts.reflection import (
    REFLECTION_INSIGHTS,
    REFLECTION_QUESTIONS,
    Insight,
    MemoryItem,
    ReflectionInsightsInput,
    ReflectionInsightsOutput,
    ReflectionQuestionsInput,
    ReflectionQuestionsOutput,
    insight_evidence_ids,
)
from npcworld.llm.prompts.registry import PROMPTS, get_prompt, render_recorded
from npcworld.llm.prompts.template import Message, PromptTemplate

__all__ = [
    "IMPORTANCE",
    "IMPORTANCE_BATCH",
    "MAX_BATCH_MEMORIES",
    "MAX_MEMORIES",
    "PROMPTS",
    "REFLECTION_INSIGHTS",
    "REFLECTION_QUESTIONS",
    "ImportanceBatchInput",
    "ImportanceBatchOutput",
    "ImportanceInput",
    "ImportanceOutput",
    "Insight",
    "MemoryItem",
    "Message",
    "PromptTemplate",
    "ReflectionInsightsInput",
    "ReflectionInsightsOutput",
    "ReflectionQuestionsInput",
    "ReflectionQuestionsOutput",
    "get_prompt",
    "insight_evidence_ids",
    "render_recorded",
]
