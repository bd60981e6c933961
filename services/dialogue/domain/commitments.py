"""Commitment bookkeeping: what a speaker agreed to, resolved to a place the NPC knows and a world time.

Say/do coherence (Project Sid's cognitive controller): the one decision that produced an utterance also
produced its commitment, and planning puts every commitment of a finished conversation in the plan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from npcworld.contracts import Commitment

__all__ = ["CommitmentDraft", "merge_commitments", "resolve_commitment", "resolve_place", "resolve_start"]

_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")
_DAY = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})\s*$")


@dataclass(frozen=True)
class CommitmentDraft:
    """A commitment as the speaker phrased it: a place name, a clock time ("17:00") and a date
    ("2023-02-14"), all optional."""

    description: str
    place: str | None = None
    clock: str | None = None
    duration_minutes: int = 60
    day: str | None = None


def _date(day: str | None) -> date | None:
    match = _DAY.match(day or "")
    if match is None:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def resolve_start(clock: str | None, now: datetime, day: str | None = None) -> datetime | None:
    """``clock`` ("HH:MM", 24 h) on ``day`` ("YYYY-MM-DD") when that is not past, else the next occurrence
    of ``clock`` at or after ``now``; None if the clock is unreadable."""
    match = _CLOCK.match(clock or "")
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        return None
    on = _date(day)
    if on is not None:
        dated = datetime.combine(on, time(hour, minute), tzinfo=now.tzinfo)
        if dated >= now:
            return dated
    start = datetime.combine(now.date(), time(hour, minute), tzinfo=now.tzinfo)
    return start if start >= now else start + timedelta(days=1)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def resolve_place(place: str | None, known: Iterable[str], fallback: str | None) -> str | None:
    """The known place path (``world:sector:arena[:object]``) the place name refers to.

    A path matches when one of its segments equals the name, or the name contains the segment (so
    "Hobbs Cafe" matches ``town:Hobbs Cafe:counter``); the shortest (most general) match wins, ties by
    name. Without a match the conversation's own location is used: never an invented place.
    """
    if not place:
        return fallback
    wanted = _norm(place)
    if not wanted:
        return fallback
    hits = [
        path
        for path in known
        if any(
            seg and (seg == wanted or seg in wanted.split(" ") or f" {seg} " in f" {wanted} ")
            for seg in (_norm(s) for s in path.split(":")[1:])
        )
    ]
    return min(hits, key=lambda p: (p.count(":"), p)) if hits else fallback


def resolve_commitment(
    npc_id: str, draft: CommitmentDraft, *, now: datetime, known_places: Sequence[str], here: str | None
) -> Commitment:
    """The contract commitment for ``draft``, spoken by ``npc_id`` at world time ``now`` at ``here``."""
    return Commitment(
        npc_id=npc_id,
        description=draft.description,
        location_path=resolve_place(draft.place, known_places, here),
        start=resolve_start(draft.clock, now, draft.day),
        duration_minutes=max(1, min(24 * 60, draft.duration_minutes)),
    )


def merge_commitments(commitments: Iterable[Commitment]) -> tuple[Commitment, ...]:
    """Every distinct commitment of a conversation, in the order they were made (repeats dropped)."""
    seen: dict[tuple[str, str, str | None, datetime | None], Commitment] = {}
    for c in commitments:
        seen.setdefault((c.npc_id, c.description.lower(), c.location_path, c.start), c)
    return tuple(seen.values())
