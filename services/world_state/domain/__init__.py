"""Pure world-state domain objects."""

from services.world_state.domain.world import NpcView, WorldView

__all__ = ["NpcView", "WorldView"]
