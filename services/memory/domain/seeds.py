"""Seed memories: the persona paragraph split on semicolons, as in the paper's agent set-up."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_SEED_LENGTH", "persona_summary", "split_seed"]

MAX_SEED_LENGTH = 4000  # MemoryRecorded.description limit


def split_seed(seed: str) -> list[str]:
    """Each non-empty, stripped ';'-separated part once, in order (over-long parts are cut)."""
    seen: set[str] = set()
    parts: list[str] = []
    for raw in seed.split(";"):
        part = raw.strip()[:MAX_SEED_LENGTH].strip()
        if part and part not in seen:
            seen.add(part)
            parts.append(part)
    return parts


def persona_summary(name: str, age: int | None, traits: Sequence[str], occupation: str | None) -> str:
    """The identity line importance prompts are given ("Name (age 34), cafe owner; friendly, warm")."""
    head = name if age is None else f"{name} (age {age})"
    if occupation:
        head = f"{head}, {occupation}"
    return f"{head}; {', '.join(traits)}" if traits else head
