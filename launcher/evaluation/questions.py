"""An NPC's ground truth from its world's event log, and the interview questions it gives in the paper's five
categories (pure: the same truth always gives the same questions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from launcher.evaluation.grading import Category, Knowledge, Question

__all__ = ["NpcTruth", "Perceived", "PlanStep", "knowledge_of", "questions_for"]

T = TypeVar("T")

_PER_CATEGORY = 2  # questions per category and NPC (self-knowledge asks a fixed pair)


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


def knowledge_of(truth: NpcTruth) -> Knowledge:
    """Everything the NPC could state without inventing it."""
    persona = " ".join(filter(None, (truth.name, truth.occupation, *truth.traits)))
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
    return [_q(truth, "reflections", t, truth.reflections) for t in texts[:_PER_CATEGORY]]


def _spread(items: tuple[T, ...], n: int) -> list[T]:
    """``n`` items evenly spread over ``items`` (first and last included), in order."""
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)] if n > 1 else [items[0]]
