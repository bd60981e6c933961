"""Pure gateway domain: the world aggregate that commands are decided against."""

from services.gateway.domain.world import WorldState, decide_add_npc, decide_delete, evolve, fold

__all__ = ["WorldState", "decide_add_npc", "decide_delete", "evolve", "fold"]
