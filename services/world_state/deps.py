"""What the world_state reactions need besides the unit of work, built once by the entrypoint."""

from __future__ import annotations

from dataclasses import dataclass

from services.world_state.trees import TreeCache
from services.world_state.validator_client import ValidatorClient

__all__ = ["WorldStateDeps"]


@dataclass(frozen=True)
class WorldStateDeps:
    """The tree cache, and the validator client (None: validators are not called, their defaults apply)."""

    trees: TreeCache
    validators: ValidatorClient | None = None
    validator_concurrency: int = 32
