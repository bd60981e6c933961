"""An NPC's ground truth from its world's event log, and the interview questions it gives in the paper's five
categories (pure: the same truth always gives the same questions)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from launcher.evaluation.grading import Category, Knowledge, Question, content_words

__all__ = ["NpcTruth", "Perceived", "PlanStep", "insight_of", "knowledge_of", "questions_for"]

T = TypeVar("T")

_PER_CATEGORY = 2  # questions per category and NPC (self-knowledge asks a fixed pair)
_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d')
_MIN_INSIGHT_WORDS = 2


@dataclass(frozen=True)
class Perceived:
    """Something the NPC perceived (an ObservationMade of its own); ``subject`` names the NPC seen, if any."""

    when: datetime
    description: str
    subject: str | None = None


@dataclass(frozen=True)
class PlanStep:
    """A step of the NPC's latest day plan."""

    start: datetime
    description: str
    place: str


@dataclass(frozen=True)
class NpcTruth:
    """What the event log says about one NPC: persona, perceptions, plan, reflections, conversations."""

    npc_id: str
    name: str
    occupation: str | None = None
    traits: tuple[str, ...] = ()
    seeds: tuple[str, ...] = ()
    perceived: tuple[Perceived, ...] = ()
    plan: tuple[PlanStep, ...] = ()
    reflections: tuple[str, ...] = ()
    heard: tuple[str, ...] = ()  # lines it spoke or heard, and summaries of its conversations
    planned: tuple[str, ...] = ()  # every plan and revision as it would tell it ("07:00 have breakfast")
    known_names: dict[str, str] = field(default_factory=dict)  # npc id → name of the NPCs it perceived
    age: int | None = None


def knowledge_of(truth: NpcTruth) -> Knowledge:
    """Everything the NPC could state without inventing it."""
    age = f"age {truth.age}" if truth.age is not None else None
    persona = " ".join(filter(None, (truth.name, age, truth.occupation, *truth.traits)))
    return Knowledge((persona, *truth.seeds, *(p.description for p in truth.perceived),
                      *(f"{s.description} {s.place}" for s in truth.plan), *truth.planned, *truth.reflections,
                      *truth.heard))


def questions_for(truth: NpcTruth) -> list[Question]:
    """Questions in the five categories, each with the facts a correct answer states; a category the truth
    gives nothing for (no reflections yet) asks nothing."""
    return [*_self_knowledge(truth), *_memory(truth), *_plans(truth), *_reactions(truth),
            *_reflections(truth)]


def _q(truth: NpcTruth, category: Category, text: str, expected: tuple[str, ...]) -> Question:
    return Question(truth.npc_id, category, text, expected)


def _self_knowledge(truth: NpcTruth) -> list[Question]:
    about = tuple(filter(None, (truth.occupation, *truth.seeds)))
    found = [_q(truth, "self_knowledge", "Give an introduction of yourself.", about)] if about else []
    if truth.occupation:
        found.append(_q(truth, "self_knowledge", "What is your occupation?", (truth.occupation,)))
    elif truth.traits:
        found.append(_q(truth, "self_knowledge", "How would you describe your personality?", truth.traits))
    return found


def _memory(truth: NpcTruth) -> list[Question]:
    """"Who is X?" for the people it perceived most (the facts: what it perceived of them and its seeds
    naming them)."""
    counts: dict[str, int] = {}
    for p in truth.perceived:
        if p.subject and p.subject != truth.npc_id and p.subject in truth.known_names:
            counts[p.subject] = counts.get(p.subject, 0) + 1
    found = []
    for other in sorted(counts, key=lambda o: (-counts[o], o))[:_PER_CATEGORY]:
        name = truth.known_names[other]
        first = name.split()[0]
        facts = tuple(dict.fromkeys(
            [p.description for p in truth.perceived if p.subject == other]
            + [s for s in truth.seeds if first in s]))
        found.append(_q(truth, "memory", f"Who is {name}?", facts))
    return found


def _plans(truth: NpcTruth) -> list[Question]:
    steps = _spread(truth.plan, _PER_CATEGORY)
    return [_q(truth, "plans", f"What will you be doing at {s.start:%H:%M} on {s.start:%A}?",
               (s.description,)) for s in steps]


def _reactions(truth: NpcTruth) -> list[Question]:
    """The paper asks how the NPC reacts to a situation; here the situation is one it perceived of someone
    else, and the answer is right when it takes in that situation (the rule-based grader checks relevance,
    not the wisdom of the reaction)."""
    seen = [p for p in truth.perceived
            if p.subject and p.subject != truth.npc_id and not p.description.endswith(" is idle")]
    return [_q(truth, "reactions", f"You notice this: {p.description}. What do you do?", (p.description,))
            for p in _spread(tuple(seen), _PER_CATEGORY)]


def _reflections(truth: NpcTruth) -> list[Question]:
    texts = ("What have you come to realise lately?", "What matters most to you these days?")
    if not truth.reflections:
        return []
    insights = tuple(map(insight_of, truth.reflections))
    return [_q(truth, "reflections", t, insights) for t in texts[:_PER_CATEGORY]]


def insight_of(reflection: str) -> str:
    """What a reflection concludes, without the memories it quotes as evidence: an answer that only repeats
    an observation has not stated the reflection."""
    own = _QUOTED.sub(" ", reflection)
    return own if len(content_words(own)) >= _MIN_INSIGHT_WORDS else reflection


def _spread(items: tuple[T, ...], n: int) -> list[T]:
    """``n`` items evenly spread over ``items`` (first and last included), in order."""
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)] if n > 1 else [items[0]]
