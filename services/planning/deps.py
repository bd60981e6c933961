"""What the planning handlers need, built once by the entrypoint and passed down."""

from __future__ import annotations

from dataclasses import dataclass, field

from npcworld.llm import LLM
from npcworld.memory_client import MemoryReader
from services.planning.repository import PlanningRepository

__all__ = ["PlanningDeps"]


@dataclass(frozen=True)
class PlanningDeps:
    """The planning service's ports and tuning."""

    llm: LLM
    memory: MemoryReader
    repository: PlanningRepository = field(default_factory=PlanningRepository)
    max_npcs_per_tick: int = 50
    prepare_concurrency: int = 8
