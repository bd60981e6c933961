"""The paper's end-to-end metrics as pure functions over facts taken from the event log.

Information diffusion (who knows of the party / the candidacy, by provenance through conversation chains),
relationship network density η = 2|E| / (|V|(|V|-1)) with an edge when both NPCs know each other,
attendance at a place during a time window, and LLM usage per NPC per simulated day by prompt kind
(DESIGN.md, "Seed world (paper)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "Conversation",
    "Diffusion",
    "LlmCall",
    "Sighting",
    "acquaintances_from_seeds",
    "attendance",
    "density",
    "diffusion",
    "llm_usage",
    "mentions",
    "mutual_edges",
    "prompt_tokens",
]


@dataclass(frozen=True)
class Conversation:
    """A finished conversation: when, who took part, and everything said (summary and utterances)."""

    at: datetime
    participants: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Sighting:
    """An NPC was at ``place`` (a world-tree path) from world time ``at``."""

    at: datetime
    npc_id: str
    place: str


@dataclass(frozen=True)
class LlmCall:
    """One recorded LLM call."""

    npc_id: str | None
    prompt_kind: str
    tokens_in: int
    tokens_out: int
    prompt_chars: int = 0  # the rendered prompt's length (0: not recorded)


@dataclass(frozen=True)
class Diffusion:
    """Who knew a fact at the start, who knows it at the end, and the chain that brought it to each."""

    start: frozenset[str]
    end: frozenset[str]
    chains: dict[str, tuple[str, ...]] = field(default_factory=dict)


def mentions(text: str, keywords: Iterable[str]) -> bool:
    """Whether ``text`` names any keyword as a word prefix ("party" matches "party's", not "counterparty")."""
    lowered = text.lower()
    return any(re.search(rf"\b{re.escape(k.lower())}", lowered) for k in keywords)


def diffusion(
    seeds: Mapping[str, str], conversations: Iterable[Conversation], keywords: Iterable[str]
) -> Diffusion:
    """Spread a fact through conversations in time order.

    An NPC knows the fact at the start when its seed memories mention it; it learns the fact when it takes
    part in a conversation that mentions it together with someone who already knows (provenance: the chain
    of NPCs the fact passed through, shortest first).

    Args:
        seeds: npc id → seed memory text.
        conversations: finished conversations (any order).
        keywords: words that name the fact.
    """
    words = tuple(keywords)
    chains: dict[str, tuple[str, ...]] = {
        npc: (npc,) for npc, text in sorted(seeds.items()) if mentions(text, words)
    }
    start = frozenset(chains)
    for conv in sorted(conversations, key=lambda c: (c.at, c.participants)):
        tellers = sorted((p for p in conv.participants if p in chains), key=lambda p: (len(chains[p]), p))
        if not tellers or not mentions(conv.text, words):
            continue
        for listener in conv.participants:
            chains.setdefault(listener, (*chains[tellers[0]], listener))
    return Diffusion(start, frozenset(chains), chains)


def acquaintances_from_seeds(names: Mapping[str, str], seeds: Mapping[str, str]) -> set[tuple[str, str]]:
    """(a, b) when a's seed memories name b (full name or first name): who knows whom at the start."""
    known: set[tuple[str, str]] = set()
    for a, text in seeds.items():
        for b, name in names.items():
            if a != b and (mentions(text, [name]) or mentions(text, [name.split()[0]])):
                known.add((a, b))
    return known


def mutual_edges(npcs: Iterable[str], knows: Iterable[tuple[str, str]]) -> set[frozenset[str]]:
    """Undirected edges between NPCs that both know each other."""
    members, directed = set(npcs), set(knows)
    return {
        frozenset((a, b))
        for a, b in directed
        if a != b and a in members and b in members and (b, a) in directed
    }


def density(npcs: Iterable[str], knows: Iterable[tuple[str, str]]) -> float:
    """η = 2|E| / (|V|(|V|-1)); 0 for fewer than two NPCs."""
    members = set(npcs)
    n = len(members)
    if n < 2:
        return 0.0
    return 2 * len(mutual_edges(members, knows)) / (n * (n - 1))


def attendance(
    sightings: Iterable[Sighting], start: datetime, end: datetime, place_prefix: str
) -> frozenset[str]:
    """NPCs that were inside ``place_prefix`` at any moment of [start, end)."""
    last: dict[str, str] = {}
    present: set[str] = set()
    for s in sorted(sightings, key=lambda s: (s.at, s.npc_id)):
        if s.at >= end:
            break
        if s.at < start:
            last[s.npc_id] = s.place
            continue
        if s.place.startswith(place_prefix):
            present.add(s.npc_id)
    present |= {npc for npc, place in last.items() if place.startswith(place_prefix)}
    return frozenset(present)


CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text and BPE tokenizers


def prompt_tokens(call: LlmCall) -> tuple[int, bool]:
    """The call's prompt tokens and whether they are an estimate: the provider's count when it gave one,
    else the prompt's length over CHARS_PER_TOKEN (the offline provider counts no tokens)."""
    if call.tokens_in or not call.prompt_chars:
        return call.tokens_in, False
    return -(-call.prompt_chars // CHARS_PER_TOKEN), True


def llm_usage(calls: Iterable[LlmCall], npc_count: int, days: float) -> dict[str, dict[str, Any]]:
    """Calls, tokens and prompt tokens by prompt kind, in total and per NPC per simulated day (kind ``all``
    sums them). ``tokens`` are what providers counted; ``prompt_tokens`` fill in an estimate from the prompt
    text where none was counted, and ``prompt_tokens_estimated`` says so."""
    totals: dict[str, list[int]] = {}
    for call in calls:
        prompt, estimated = prompt_tokens(call)
        for kind in (call.prompt_kind, "all"):
            row = totals.setdefault(kind, [0, 0, 0, 0])
            row[0] += 1
            row[1] += call.tokens_in + call.tokens_out
            row[2] += prompt
            row[3] += estimated
    scale = max(npc_count, 1) * max(days, 1e-9)
    return {
        kind: {
            "calls": c,
            "tokens": t,
            "calls_per_npc_day": round(c / scale, 2),
            "tokens_per_npc_day": round(t / scale, 1),
            "prompt_tokens_per_npc_day": round(p / scale, 1),
            "prompt_tokens_estimated": e > 0,
        }
        for kind, (c, t, p, e) in sorted(totals.items())
    }
