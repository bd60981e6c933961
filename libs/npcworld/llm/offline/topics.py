"""Recurring subjects of a set of memories: the names and content words that come up again and again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npcworld.llm.offline.text import content_terms, entities

__all__ = ["Term", "recurring_terms"]

_DEFAULT_WEIGHT = 3
# Words of form, not of content: greetings and farewells of conversation lines, and the step names of a
# decomposed task ("have lunch: getting started", "begin: …", "finish: …", "(hour 2)"). They recur in every
# day and say nothing about it, so they are never a subject of reflection.
_FORM = frozenset([
    "goodbye", "hello", "thanks", "thank", "bye", "nice", "good", "sorry", "did", "would", "well", "really",
    "see", "hi", "hey", "begin", "finish", "started", "start", "progress", "thick", "nearly", "wrapp",
    "wrapping", "hour",
])


@dataclass(frozen=True)
class Term:
    """A subject and the positions (0-based) of the memories that mention it."""

    key: str
    label: str
    is_entity: bool
    mentions: tuple[int, ...]
    weight: int


def recurring_terms(
    texts: Sequence[str],
    weights: Sequence[int | None],
    exclude: Sequence[str] = (),
    focus: Sequence[str] = (),
) -> list[Term]:
    """Subjects ranked by how much they recur: terms named in ``focus`` first, then by the summed
    weight (importance) of the memories mentioning them, then names before words, then alphabetically.

    ``exclude`` (e.g. the NPC's own name) is never a subject, nor are words of form (greetings, task steps).
    """
    found: dict[str, tuple[str, bool, list[int]]] = {}
    for i, text in enumerate(texts):
        names = entities(text, exclude=exclude)
        for name in names:
            found.setdefault(name.lower(), (name, True, []))[2].append(i)
        for key, surface in content_terms(text, skip=[*exclude, *names]).items():
            if key not in found:
                found[key] = (surface, False, [])
            mentions = found[key][2]
            if not mentions or mentions[-1] != i:
                mentions.append(i)
    focus_keys = {k.lower() for k in focus}
    terms = [
        Term(key, label, is_entity, tuple(m), sum(weights[j] or _DEFAULT_WEIGHT for j in m))
        for key, (label, is_entity, m) in found.items() if key not in _FORM
    ]
    terms.sort(key=lambda t: (t.key not in focus_keys, -t.weight, not t.is_entity, t.key))
    return terms
