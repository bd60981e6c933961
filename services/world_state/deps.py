"""What the world_state reactions need besides the unit of work, built once by the entrypoint."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from services.world_state.trees import TreeCache
from services.world_state.validator_client import Consulted, ValidatorClient

__all__ = ["WorldStateDeps"]


@dataclass(frozen=True)
class WorldStateDeps:
    """The tree cache, and the validator client (None: validators are not called, their defaults apply)."""

    trees: TreeCache
    validators: ValidatorClient | None = None
    validator_concurrency: int = 32
    # Validator answers got before a poll's transaction (validation.prepare_validations), by event id.
    consulted: dict[uuid.UUID, Consulted] = field(default_factory=dict)
