"""Offline reflection: questions about the subjects that recur in the memories, and insights that cite
the memories mentioning each subject."""

from __future__ import annotations

from npcworld.llm.offline.text import content_terms, entities
from npcworld.llm.offline.topics import Term, recurring_terms
from npcworld.llm.prompts import (
    Insight,
    ReflectionInsightsInput,
    ReflectionInsightsOutput,
    ReflectionQuestionsInput,
    ReflectionQuestionsOutput,
)

__all__ = ["answer_insights", "answer_questions"]

_FALLBACK_QUESTIONS = (
    "What has {npc} been spending most of the time on?",
    "What matters most to {npc} right now?",
    "How have things been going for {npc} lately?",
)
_MAX_EVIDENCE = 8
_QUOTE_CHARS = 160


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _question(term: Term, npc: str) -> str:
    label = _clip(term.label, 120)
    if term.is_entity:
        return _clip(f"What does {npc} think and feel about {label}?", 500)
    return _clip(f"Why does {label} keep coming up for {npc}, and what does it mean to {npc}?", 500)


def answer_questions(inputs: ReflectionQuestionsInput) -> ReflectionQuestionsOutput:
    """Answer ``reflection_questions``: one question per top recurring subject (3 in all)."""
    npc = inputs.npc_name
    texts = [m.description for m in inputs.memories]
    terms = recurring_terms(texts, [m.importance for m in inputs.memories], exclude=npc.split())
    recurring = [t for t in terms if len(t.mentions) > 1] or terms
    questions = [_question(t, npc) for t in recurring[:3]]
    questions += [q.format(npc=npc) for q in _FALLBACK_QUESTIONS][: 3 - len(questions)]
    return ReflectionQuestionsOutput(questions=tuple(questions))


def _quote(text: str) -> str:
    return _clip(text, _QUOTE_CHARS)


def _insight(term: Term, inputs: ReflectionInsightsInput) -> Insight:
    importance = [m.importance or 0 for m in inputs.memories]
    ranked = sorted(term.mentions, key=lambda i: (-importance[i], i))[:_MAX_EVIDENCE]
    top = inputs.memories[ranked[0]].description
    count = len(term.mentions)
    if count == 1:
        text = f'{inputs.npc_name} remembers {term.label}: "{_quote(top)}"'
    else:
        where = f"{count} of {inputs.npc_name}'s memories"
        text = f'{term.label} comes up in {where}, most notably: "{_quote(top)}"'
    return Insight(text=_clip(text, 500), evidence=tuple(i + 1 for i in sorted(ranked)))


def answer_insights(inputs: ReflectionInsightsInput) -> ReflectionInsightsOutput:
    """Answer ``reflection_insights``: up to 5 subjects, those named in the question first, each with
    the numbers of the memories that mention it as evidence."""
    npc = inputs.npc_name.split()
    focus = [*entities(inputs.question, exclude=npc), *content_terms(inputs.question, skip=npc)]
    texts = [m.description for m in inputs.memories]
    terms = recurring_terms(texts, [m.importance for m in inputs.memories], exclude=npc, focus=focus)
    insights = [_insight(t, inputs) for t in terms[:5]]
    if not insights:
        best = max(range(len(inputs.memories)), key=lambda i: (inputs.memories[i].importance or 0, -i))
        quote = _quote(inputs.memories[best].description)
        insights = [Insight(text=_clip(f'{inputs.npc_name} remembers: "{quote}"', 500), evidence=(best + 1,))]
    return ReflectionInsightsOutput(insights=tuple(insights))
