"""Pure gateway domain: the world aggregate that commands are decided against, and the rate-limit bucket."""

from services.gateway.domain.ratelimit import Bucket, take
from services.gateway.domain.world import WorldState, decide_add_npc, decide_delete, evolve, fold

__all__ = ["Bucket", "WorldState", "decide_add_npc", "decide_delete", "evolve", "fold", "take"]
