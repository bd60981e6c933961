"""Which memory kinds an ablated world's NPCs never record (the paper's ablated architectures)."""

from __future__ import annotations

from collections.abc import Iterable

from npcworld.contracts.memory import MemoryKind

__all__ = ["ablated_kinds"]

# What the paper's ablations take away: "no observation" removes everything perceived, conversations
# included (only the seed persona is left); "no reflection" and "no planning" remove those memories.
_KINDS: dict[str, tuple[MemoryKind, ...]] = {
    "observation": ("observation", "dialogue"),
    "reflection": ("reflection",),
    "planning": ("plan",),
}


def ablated_kinds(ablations: Iterable[str]) -> frozenset[MemoryKind]:
    """The memory kinds a world with ``ablations`` (``WorldCreated.ablations``) never records."""
    return frozenset(kind for a in ablations for kind in _KINDS.get(a, ()))
