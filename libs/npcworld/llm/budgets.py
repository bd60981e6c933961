"""Budget policy: whether a world's calls must be answered offline because tokens ran out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from npcworld.llm.repository import BudgetUsage

__all__ = ["Exhaustion", "exhausted"]


@dataclass(frozen=True)
class Exhaustion:
    """Which budget ran out, its limit and what was used."""

    scope: Literal["tenant", "world"]
    limit_tokens: int
    used_tokens: int


def exhausted(usage: BudgetUsage, tenant_default: int | None, world_default: int | None) -> Exhaustion | None:
    """The exhausted budget (the world's first), or None while both have tokens left.

    Explicit limits win over the deployment defaults; no limit at all means unlimited. A limit of 0
    keeps the world offline. The check runs before a call, so concurrent calls can overshoot a
    limit by what they spend together (a soft limit).
    """
    world_limit = usage.world_limit if usage.world_limit is not None else world_default
    if world_limit is not None and usage.world_used >= world_limit:
        return Exhaustion("world", world_limit, usage.world_used)
    tenant_limit = usage.tenant_limit if usage.tenant_limit is not None else tenant_default
    if tenant_limit is not None and usage.tenant_used >= tenant_limit:
        return Exhaustion("tenant", tenant_limit, usage.tenant_used)
    return None
