"""Pure gateway domain: the world aggregate that commands are decided against, and the rate-limit bucket."""

from services.gateway.domain.ratelimit import Bucket, take
from services.gateway.domain.world import (
    WorldState,
    decide_add_npc,
    decide_change_persona,
    decide_delete,
    decide_retire,
    evolve,
    fold,
    require_active,
)

__all__ = ["Bucket", "WorldState", "decide_add_npc", "decide_change_persona", "decide_delete",
           "decide_retire", "evolve", "fold", "require_active", "take"]
