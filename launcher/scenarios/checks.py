"""Evaluating a scenario's checks against what was read back from the backend (pure: no I/O).

Text matches are case-insensitive substring matches with runs of whitespace folded, so ``contains: "stove
is on fire"`` matches "The stove is on  fire!". A failed check says what was found instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from launcher.scenarios.schema import (
    Check,
    MemoriesCheck,
    PlanCheck,
    RelationshipCheck,
    ReplyCheck,
    RetrievalCheck,
)

__all__ = [
    "MemorySeen", "RelationshipSeen", "Verdict", "check_memories", "check_plan", "check_relationship",
    "check_reply", "check_retrieval", "describe", "matches",
]

_SHOWN = 5  # found items quoted in a failure message


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


@dataclass(frozen=True)
class MemorySeen:
    description: str
    importance: int
    kind: str


@dataclass(frozen=True)
class RelationshipSeen:
    other_id: str
    familiarity: int
    sentiment: float
    summary: str


def matches(text: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``text``, ignoring case and how whitespace runs."""
    return " ".join(needle.split()).casefold() in " ".join(text.split()).casefold()


def describe(check: Check) -> str:
    """A readable name for a check (its ``name:`` when given)."""
    if check.name:
        return check.name
    if isinstance(check, RetrievalCheck):
        return (f"retrieval of {check.retrieval} for {check.query!r} ranks {check.memory!r} "
                f"at most {check.rank_at_most}")
    if isinstance(check, MemoriesCheck):
        subject = f"{check.kind + ' ' if check.kind else ''}memories of {check.memories}"
    elif isinstance(check, ReplyCheck):
        subject = f"reply {check.reply}"
    elif isinstance(check, PlanCheck):
        subject = f"plan of {check.plan}"
    else:
        subject = f"relationship of {check.relationship} with {check.with_}"
    parts = [f"contains {t!r}" for t in check.contains] + [f"not {t!r}" for t in check.not_contains]
    if isinstance(check, MemoriesCheck) and check.importance_at_least is not None:
        parts.append(f"importance >= {check.importance_at_least}")
    if isinstance(check, RelationshipCheck):
        parts += [f"{label} {op} {v:g}" for label, op, v in (
            ("familiarity", ">=", check.familiarity_at_least), ("sentiment", ">=", check.sentiment_at_least),
            ("sentiment", "<=", check.sentiment_at_most)) if v is not None]
    return f"{subject}: {', '.join(parts)}" if parts else subject


def _texts(check: ReplyCheck | PlanCheck | RelationshipCheck, texts: Sequence[str], what: str) -> Verdict:
    missing = [t for t in check.contains if not any(matches(x, t) for x in texts)]
    present = [t for t in check.not_contains if any(matches(x, t) for x in texts)]
    if not missing and not present:
        return Verdict(True, "")
    said = "; ".join([*(f"nothing contains {t!r}" for t in missing),
                      *(f"found {t!r}" for t in present)])
    return Verdict(False, f"{said}. {what}: {_quote(texts)}")


def _quote(texts: Sequence[str]) -> str:
    shown = " | ".join(repr(t) for t in texts[:_SHOWN])
    return (shown + f" (and {len(texts) - _SHOWN} more)") if len(texts) > _SHOWN else (shown or "(none)")


def check_memories(check: MemoriesCheck, memories: Sequence[MemorySeen]) -> Verdict:
    """``memories`` is the NPC's whole stream; the check's ``kind`` narrows it."""
    pool = [m for m in memories if check.kind is None or m.kind == check.kind]
    texts = [m.description for m in pool]
    missing = [t for t in check.contains if not any(matches(x, t) for x in texts)]
    present = [t for t in check.not_contains if any(matches(x, t) for x in texts)]
    problems = [*(f"no memory contains {t!r}" for t in missing),
                *(f"a memory contains {t!r}: {_quote([x for x in texts if matches(x, t)])}" for t in present)]
    if check.importance_at_least is not None and not missing:
        for t in check.contains:
            found = [m for m in pool if matches(m.description, t)]
            if max(m.importance for m in found) < check.importance_at_least:
                problems.append(f"memories containing {t!r} have importance "
                                f"{', '.join(str(m.importance) for m in found)} "
                                f"(expected at least {check.importance_at_least})")
    if not problems:
        return Verdict(True, "")
    return Verdict(False, "; ".join(problems) + f". {len(pool)} memories, newest first: {_quote(texts)}")


def check_retrieval(check: RetrievalCheck, ranked: Sequence[str]) -> Verdict:
    """``ranked``: the descriptions retrieved for the query, best first."""
    rank = next((i + 1 for i, text in enumerate(ranked) if matches(text, check.memory)), None)
    if rank is not None and rank <= check.rank_at_most:
        return Verdict(True, f"rank {rank}")
    where = "not retrieved" if rank is None else f"ranked {rank}"
    return Verdict(False, f"{check.memory!r} {where} (expected at most {check.rank_at_most}); "
                          f"retrieved: {_quote(ranked)}")


def check_reply(check: ReplyCheck, reply: str | None) -> Verdict:
    """``reply`` is None when the chat got no reply."""
    if reply is None:
        return Verdict(False, f"chat {check.reply!r} got no reply")
    return _texts(check, [reply], "reply")


def check_plan(check: PlanCheck, texts: Sequence[str] | None) -> Verdict:
    """``texts``: the plan's outline, items, goals and current action (None: the NPC has no plan)."""
    if texts is None:
        return Verdict(False, f"{check.plan} has no plan")
    return _texts(check, texts, "plan")


def check_relationship(check: RelationshipCheck, seen: RelationshipSeen | None) -> Verdict:
    """``seen`` is None when the NPC has no relationship with the other."""
    if seen is None:
        return Verdict(False, f"{check.relationship} has no relationship with {check.with_}")
    problems = []
    if check.familiarity_at_least is not None and seen.familiarity < check.familiarity_at_least:
        problems.append(f"familiarity {seen.familiarity} < {check.familiarity_at_least}")
    if check.sentiment_at_least is not None and seen.sentiment < check.sentiment_at_least:
        problems.append(f"sentiment {seen.sentiment:g} < {check.sentiment_at_least:g}")
    if check.sentiment_at_most is not None and seen.sentiment > check.sentiment_at_most:
        problems.append(f"sentiment {seen.sentiment:g} > {check.sentiment_at_most:g}")
    text = _texts(check, [seen.summary], "summary")
    if not text.passed:
        problems.append(text.message)
    return Verdict(not problems, "; ".join(problems))
