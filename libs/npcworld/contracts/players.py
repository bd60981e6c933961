"""Player-level events (topic npcworld.world.v1, keyed by world): a player the studio asked to forget."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = ["PlayerForgotten"]


class PlayerForgotten(EventPayload):
    """The studio asked to forget a player: the player's data key is erased, so what the player said reads
    ``[forgotten]`` everywhere in the log, and each service drops what it holds of the player in this world
    (memories of the player's chats, the NPCs' relationships with the player)."""

    event_type: ClassVar[str] = "PlayerForgotten"
    topic: ClassVar[Topic] = WORLD

    player_id: str = Field(min_length=1, max_length=100)
