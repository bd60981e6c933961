"""A studio's validator webhook over decided actions (npcworld.world.v1): its registration, and an action
that took effect by the validator's default because it did not answer in time or answered badly.

A validator's vetoes and replacements are ``ActionVetoed`` events naming it (``validator_id``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = ["ActionAcceptedByDefault", "ActionValidator", "ActionValidatorSet", "ValidatorFailure"]

ValidatorFailure = Literal["timeout", "error"]


class ActionValidator(BaseModel):
    """The studio endpoint that sees each decided action of one of ``npc_ids`` (empty: any NPC) at one of
    ``places`` (a place or inside one; empty: anywhere) before it takes effect. Its signing secret is not
    part of the event (the gateway keeps it, the world-state service reads it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    validator_id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    url: str = Field(min_length=1, max_length=2000)
    deadline_ms: int = Field(default=1000, ge=10, le=10000, description="how long an answer is waited for")
    on_failure: Literal["accept", "veto"] = Field(
        default="accept", description="what applies when no valid answer comes in time"
    )
    npc_ids: tuple[str, ...] = Field(default=(), max_length=1000)
    places: tuple[str, ...] = Field(default=(), max_length=100)


class ActionValidatorSet(EventPayload):
    """The world's validator, replacing the previous one (None: the world has none from now on)."""

    event_type: ClassVar[str] = "ActionValidatorSet"
    topic: ClassVar[Topic] = WORLD

    validator: ActionValidator | None = None


class ActionAcceptedByDefault(EventPayload):
    """The validator gave no valid answer (``failure``; ``detail`` says what happened) and its default,
    accept, let the decided action take effect. Caused by the ``ActionDecided``."""

    event_type: ClassVar[str] = "ActionAcceptedByDefault"
    topic: ClassVar[Topic] = WORLD

    validator_id: str
    failure: ValidatorFailure
    detail: str = Field(default="", max_length=1000)
    description: str = Field(max_length=1000)
    location_path: str = Field(max_length=400)
