"""Pure world-state domain: the world tree, tile map and paths, NPC movement and the world clock."""

from services.world_state.domain.clock import ClockState, apply_change, in_focus, is_due, next_tick
from services.world_state.domain.movement import (
    NpcState,
    StepResult,
    action_started,
    start_action,
    step_npcs,
)
from services.world_state.domain.tilemap import Grid, Tile, find_path
from services.world_state.domain.tree import WorldTree, arena_of
from services.world_state.domain.world import NpcView, WorldView

__all__ = [
    "ClockState",
    "Grid",
    "NpcState",
    "NpcView",
    "StepResult",
    "Tile",
    "WorldTree",
    "WorldView",
    "action_started",
    "apply_change",
    "arena_of",
    "find_path",
    "in_focus",
    "is_due",
    "next_tick",
    "start_action",
    "step_npcs",
]
