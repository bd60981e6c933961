"""Dialogue events (topic npcworld.dialogue.v1, keyed by NPC): conversations, player chat, inner voice."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import DIALOGUE, Topic

__all__ = [
    "Commitment",
    "ConversationEnded",
    "InnerVoiceGiven",
    "NpcReplied",
    "PlayerSpoke",
    "RelationshipChanged",
    "UtteranceSpoken",
]


class Commitment(BaseModel):
    """Something a participant agreed to do in a conversation ("meet Sam at the cafe at 5 pm").

    Planning puts it in the NPC's plan, so what the NPC said and what it then does agree.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    npc_id: str = Field(min_length=1, max_length=100)
    description: str = Field(min_length=1, max_length=1000)
    location_path: str | None = Field(default=None, max_length=400, description="world:sector:arena[:object]")
    start: datetime | None = None
    duration_minutes: int = Field(default=60, ge=1, le=24 * 60)


class UtteranceSpoken(EventPayload):
    """One turn of an NPC-to-NPC conversation; the speaker is the envelope's ``npc_id``.

    The listener hears it as an observation and replies with the next turn, unless ``ends`` is set.
    """

    event_type: ClassVar[str] = "UtteranceSpoken"
    topic: ClassVar[Topic] = DIALOGUE

    conversation_id: str = Field(min_length=1, max_length=100)
    listener_id: str = Field(min_length=1, max_length=100)
    text: str = Field(min_length=1, max_length=2000)
    turn: int = Field(ge=1, description="1 for the opening line, counting every utterance")
    ends: bool = Field(default=False, description="the speaker ends the conversation with this utterance")
    commitment: Commitment | None = Field(default=None, description="what the speaker agreed to")
    location_path: str | None = Field(default=None, max_length=400)


class ConversationEnded(EventPayload):
    """A conversation is over; emitted once per participant (envelope ``npc_id``)."""

    event_type: ClassVar[str] = "ConversationEnded"
    topic: ClassVar[Topic] = DIALOGUE

    conversation_id: str = Field(min_length=1, max_length=100)
    participants: tuple[str, ...] = Field(min_length=2)
    summary: str = Field(min_length=1, max_length=4000)
    commitments: tuple[Commitment, ...] = ()
    turns: int = Field(default=0, ge=0)
    ended_by: str | None = Field(default=None, description="npc that ended it; None: turn cap")


class RelationshipChanged(EventPayload):
    """How the envelope's NPC now regards ``other_id`` (social awareness: sentiment 0-10): another NPC, or a
    player as ``player:<player_id>`` (the studio's id; a chat counts as one exchange)."""

    event_type: ClassVar[str] = "RelationshipChanged"
    topic: ClassVar[Topic] = DIALOGUE

    other_id: str = Field(min_length=1, max_length=120)
    familiarity: int = Field(ge=0, description="conversations (with a player: chats) held so far")
    sentiment: float = Field(ge=0, le=10, description="0 hostile, 5 neutral, 10 devoted")
    summary: str = Field(default="", max_length=2000)


class PlayerSpoke(EventPayload):
    """A player said something to the envelope's NPC; it is something the NPC heard, never an instruction."""

    event_type: ClassVar[str] = "PlayerSpoke"
    topic: ClassVar[Topic] = DIALOGUE

    player_id: str = Field(min_length=1, max_length=100)
    text: str = Field(min_length=1, max_length=2000)
    mode: Literal["chat", "interview"] = "chat"
    interviewer: str | None = Field(default=None, max_length=1000, description="persona asking (interviews)")


class NpcReplied(EventPayload):
    """The NPC's reply to a ``PlayerSpoke`` (its event id in ``in_reply_to``, also the causation id)."""

    event_type: ClassVar[str] = "NpcReplied"
    topic: ClassVar[Topic] = DIALOGUE

    player_id: str = Field(min_length=1, max_length=100)
    text: str = Field(min_length=1, max_length=2000)
    in_reply_to: str = Field(min_length=1, max_length=100)
    provider: str = Field(min_length=1, max_length=100, description="model label, 'offline' offline")
    mode: Literal["chat", "interview"] = "chat"
    memory_ids: tuple[str, ...] = Field(default=(), description="memories the reply was grounded in")
    heard: str = Field(default="", max_length=2000, description="the player's words (stored once replied)")


class InnerVoiceGiven(EventPayload):
    """A privileged directive the envelope's NPC adopts as its own thought ("you will run for mayor")."""

    event_type: ClassVar[str] = "InnerVoiceGiven"
    topic: ClassVar[Topic] = DIALOGUE

    directive: str = Field(min_length=1, max_length=2000)
