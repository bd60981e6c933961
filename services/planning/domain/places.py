"""Spatial memory for planning: the places an NPC knows, and resolving a named place against them.

DESIGN.md "What the reference implementation actually does": locations are resolved against the NPC's
known places without three LLM calls per action, and an invented place never crashes or leaks through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["KnownPlaces", "Resolution", "place_name", "resolve_place"]

_WORD = re.compile(r"[a-z0-9]+")
_GENERIC = frozenset({"the", "a", "an", "at", "of", "in", "my", "her", "his", "their", "to", "s"})


@dataclass(frozen=True)
class KnownPlaces:
    """World-tree paths (``world:sector:arena[:object]``) the NPC has seen, and its starting place."""

    paths: tuple[str, ...]
    home: str

    def with_paths(self, new: Iterable[str]) -> KnownPlaces:
        """These places plus ``new`` (order kept, no repeats)."""
        return KnownPlaces(tuple(dict.fromkeys((*self.paths, *new))), self.home)

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.home, *self.paths)))

    def arenas(self) -> tuple[str, ...]:
        """Known places without their objects (what an outline chooses between)."""
        return tuple(dict.fromkeys(":".join(p.split(":")[:3]) for p in self.all))

    def objects_in(self, arena: str) -> tuple[str, ...]:
        """Known object paths inside ``arena``."""
        return tuple(p for p in self.all if p.startswith(arena + ":") and p.count(":") >= 3)


@dataclass(frozen=True)
class Resolution:
    """Where an item ends up, and why when it is not the place asked for."""

    path: str
    fallback: str | None = None


def place_name(path: str) -> str:
    """The readable part of a path: "sector: arena" without the world ("Lantern Cafe: kitchen")."""
    parts = path.split(":")
    return ": ".join(parts[1:]) if len(parts) > 1 else path


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _GENERIC)


def resolve_place(requested: str, known: KnownPlaces, near: str | None = None) -> Resolution:
    """The known path ``requested`` names, else the closest known one by shared words, else a fallback.

    Exact paths win; then a known path whose readable name contains every word asked for ("the cafe"
    -> "...:Lantern Cafe:counter"), the shortest such path; then the one sharing the most words.
    With no word in common the item goes to ``near`` (the place of the block it belongs to) or home,
    and the reason is returned for the plan's record.
    """
    candidates = known.all
    if requested in candidates:
        return Resolution(requested)
    asked = _words(requested)
    if asked:
        scored = [(len(asked & _words(place_name(p))), -p.count(":"), -len(p), p) for p in candidates]
        full = [s for s in scored if s[0] == len(asked)]
        best = max(full or scored)
        if best[0] > 0:
            return Resolution(best[3])
    target = near if near in candidates else known.home
    return Resolution(target, f"{requested!r} is not a place the NPC knows; used {target}")
