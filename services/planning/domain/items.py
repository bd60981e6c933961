"""Plan items and the arithmetic over them: normalising an outline, hour chunks, action fitting, revisions.

Every function here keeps one invariant (DESIGN.md "Planning"): a plan is a list of items that cover the
waking day end to end, with no gaps, no overlaps and no item repeated in adjacent slots.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

__all__ = [
    "ACTION_MAX_MINUTES",
    "ACTION_MIN_MINUTES",
    "CHUNK_MINUTES",
    "Item",
    "fit_actions",
    "hour_slots",
    "insert_item",
    "item_at",
    "name_chunks",
    "normalise",
    "plan_problems",
    "replace_from",
    "same_activity",
]

# DESIGN.md "Planning": hour-long chunks, then 5-15 minute actions.
CHUNK_MINUTES = 60
ACTION_MIN_MINUTES = 5
ACTION_MAX_MINUTES = 15
_MINUTE = timedelta(minutes=1)
_NOISE = re.compile(r"[^a-z0-9 ]+")
_FILLER = frozenset({"a", "an", "the", "at", "in", "to", "of", "for", "and", "have", "has", "eat", "eats",
                     "her", "his", "their", "some", "go", "goes", "get", "gets", "with"})


@dataclass(frozen=True)
class Item:
    """What an NPC does from ``start`` for ``minutes`` minutes, at ``location`` (a world-tree path)."""

    start: datetime
    minutes: int
    description: str
    location: str

    @property
    def end(self) -> datetime:
        return self.start + self.minutes * _MINUTE


def _key(description: str) -> frozenset[str]:
    words = _NOISE.sub(" ", description.lower()).split()
    return frozenset(w for w in words if w not in _FILLER) or frozenset(words)


def same_activity(a: str, b: str) -> bool:
    """Whether two descriptions name the same activity ("lunch" and "have lunch at the cafe")."""
    ka, kb = _key(a), _key(b)
    return bool(ka) and bool(kb) and (ka <= kb or kb <= ka)


def _minutes(a: datetime, b: datetime) -> int:
    return int((b - a) / _MINUTE)


def normalise(items: Sequence[Item], day_start: datetime, day_end: datetime, idle: Item) -> list[Item]:
    """Turn a proposed outline into items covering ``[day_start, day_end)`` exactly.

    Items are sorted by start and clipped to the day; an item that overlaps the one before starts when
    that one ends; an item repeating the activity of the one before is merged into it (the paper's
    "lunch at 12:00, 12:30 and 1:00" failure); a gap is absorbed by the item before it, or filled by
    ``idle`` (its description and location) at the start of the day.

    Args:
        items: the proposal, in any order, possibly overlapping or repeating.
        day_start, day_end: the waking day (DESIGN.md: outline of the waking day in 5-8 blocks).
        idle: description and location used where nothing is planned before the first item.
    """
    out: list[Item] = []
    cursor = day_start
    for item in sorted(items, key=lambda i: (i.start, -i.minutes)):
        start, end = max(item.start, cursor), min(item.end, day_end)
        if end <= start:
            continue
        if out and same_activity(out[-1].description, item.description):
            out[-1] = replace(out[-1], minutes=_minutes(out[-1].start, end))
        elif start > cursor and out:
            out[-1] = replace(out[-1], minutes=_minutes(out[-1].start, start))
            out.append(replace(item, start=start, minutes=_minutes(start, end)))
        else:
            if start > cursor:
                out.append(replace(idle, start=cursor, minutes=_minutes(cursor, start)))
            out.append(replace(item, start=start, minutes=_minutes(start, end)))
        cursor = end
    if not out:
        return [replace(idle, start=day_start, minutes=_minutes(day_start, day_end))]
    if cursor < day_end:
        out[-1] = replace(out[-1], minutes=_minutes(out[-1].start, day_end))
    return out


def hour_slots(outline: Sequence[Item]) -> list[Item]:
    """Split each outline block into chunks of at most an hour (DESIGN.md: hour-long chunks).

    Chunks end on the hour where they can, so a block from 7:30 to 10:00 gives 7:30-8:00, 8:00-9:00 and
    9:00-10:00; a block shorter than an hour stays one chunk. Descriptions are the block's until the
    hourly decomposition names them.
    """
    chunks: list[Item] = []
    for block in outline:
        start = block.start
        while start < block.end:
            next_hour = start.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
            end = min(next_hour, block.end)
            if _minutes(end, block.end) < ACTION_MIN_MINUTES:
                end = block.end  # no sliver shorter than one action at the end of a block
            chunks.append(replace(block, start=start, minutes=_minutes(start, end)))
            start = end
    return chunks


def _clamp(minutes: float) -> int:
    return min(max(round(minutes), ACTION_MIN_MINUTES), ACTION_MAX_MINUTES)


def fit_actions(chunk: Item, proposals: Sequence[tuple[str, int]]) -> list[tuple[Item, int]]:
    """Lay proposed actions end to end over ``chunk`` so they fill it exactly, each 5-15 minutes.

    Each proposal is (description, minutes). Durations are scaled so the proposals fill the chunk, then
    clamped to 5-15 minutes (DESIGN.md: just-in-time decomposition into 5-15 minute actions); when they
    still run out, the last one goes on as "(part 2)", "(part 3)"; the last action ends with the chunk.
    Returns (item, index of the proposal it came from).
    """
    usable = [(d.strip(), max(m, 1)) for d, m in proposals if d.strip()] or [(chunk.description, 15)]
    factor = chunk.minutes / sum(m for _, m in usable)
    durations = [_clamp(m * factor) for _, m in usable]
    out: list[tuple[Item, int]] = []
    cursor, end, index, part = chunk.start, chunk.end, 0, 1
    while cursor < end:
        source = min(index, len(usable) - 1)
        description, minutes = usable[source][0], durations[source]
        if index >= len(usable) or (out and _text(out[-1][0].description) == _text(description)):
            part += 1
            description = f"{description} (part {part})"
        left = _minutes(cursor, end)
        take = min(minutes, left)
        if 0 < left - take < ACTION_MIN_MINUTES:
            take = left if left <= ACTION_MAX_MINUTES else left - ACTION_MIN_MINUTES
        out.append((Item(cursor, take, description, chunk.location), source))
        cursor += take * _MINUTE
        index += 1
    return out


def item_at(items: Sequence[Item], when: datetime) -> Item | None:
    """The item in progress at ``when`` (start inclusive, end exclusive), if any."""
    for item in items:
        if item.start <= when < item.end:
            return item
    return None


def replace_from(items: Sequence[Item], when: datetime, new: Sequence[Item]) -> list[Item]:
    """The plan with everything from ``when`` on replaced by ``new`` (DESIGN.md: a reaction regenerates
    the plan from now). The item in progress is cut at ``when``; items before it stay."""
    kept = [i if i.end <= when else replace(i, minutes=_minutes(i.start, when))
            for i in items if i.start < when]
    return kept + list(new)


def insert_item(items: Sequence[Item], new: Item) -> list[Item]:
    """Put ``new`` into the plan at its time, cutting what overlaps it (a promise made in dialogue).

    An item spanning ``new`` is split around it; coverage of the day is unchanged.
    """
    out: list[Item] = []
    for item in items:
        if item.end <= new.start or item.start >= new.end:
            out.append(item)
            continue
        if item.start < new.start:
            out.append(replace(item, minutes=_minutes(item.start, new.start)))
        if item.end > new.end:
            out.append(replace(item, start=new.end, minutes=_minutes(new.end, item.end)))
    out.append(new)
    return sorted(out, key=lambda i: i.start)


def _text(description: str) -> str:
    return " ".join(_NOISE.sub(" ", description.lower()).split())


def name_chunks(chunks: Sequence[Item], names: Sequence[str]) -> list[Item]:
    """Give hour chunks their descriptions from the hourly decomposition, never the same text twice in a row.

    A missing or empty name keeps the block's description; a name equal to the chunk before it gets the
    hour's position within the run ("paint the river, hour 2") so no two adjacent items read the same.
    """
    out: list[Item] = []
    run = 1
    for index, chunk in enumerate(chunks):
        name = names[index].strip() if index < len(names) and names[index].strip() else chunk.description
        if out and _text(out[-1].description).startswith(_text(name)):
            run += 1
            name = f"{name}, hour {run}"
        else:
            run = 1
        out.append(replace(chunk, description=name[:1000]))
    return out


def plan_problems(items: Sequence[Item], day_start: datetime, day_end: datetime) -> list[str]:
    """What is wrong with a plan: gaps, overlaps, repeats or items outside the day (empty = sound)."""
    problems: list[str] = []
    cursor = day_start
    for prev, item in zip([None, *items[:-1]], items, strict=True):
        if item.start < cursor:
            problems.append(f"{item.description!r} at {item.start:%H:%M} overlaps the item before")
        elif item.start > cursor:
            problems.append(f"gap from {cursor:%H:%M} to {item.start:%H:%M}")
        if prev is not None and _text(prev.description) == _text(item.description):
            problems.append(f"{item.description!r} at {item.start:%H:%M} repeats the item before")
        cursor = max(cursor, item.end)
    if cursor != day_end:
        problems.append(f"plan ends at {cursor:%H:%M}, the day at {day_end:%H:%M}")
    return problems
