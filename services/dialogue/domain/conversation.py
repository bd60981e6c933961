"""Conversation rules: who may start talking, whose turn it is and when a conversation ends.

DESIGN.md: a conversation goes on until one side ends it or 16 utterances have been spoken, and the
same pair waits a cooldown (800 steps of 10 s, about 2 h 13 min of world time) before talking again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from npcworld.contracts import Commitment

__all__ = [
    "DEFAULT_COOLDOWN",
    "DEFAULT_MAX_UTTERANCES",
    "Conversation",
    "Line",
    "StartRefusal",
    "TurnRules",
    "ends_after",
    "finish",
    "may_start",
    "record_line",
]

DEFAULT_MAX_UTTERANCES = 16
DEFAULT_COOLDOWN = timedelta(seconds=800 * 10)
# A conversation nobody finished (its last turn never came back) stops blocking its pair after this.
STALE_AFTER = timedelta(hours=1)

StartRefusal = Literal["same_npc", "busy", "cooldown"]


@dataclass(frozen=True)
class TurnRules:
    """The end-of-conversation settings (turn cap, per-pair cooldown)."""

    max_utterances: int = DEFAULT_MAX_UTTERANCES
    cooldown: timedelta = DEFAULT_COOLDOWN

    def __post_init__(self) -> None:
        if self.max_utterances < 2:
            raise ValueError("a conversation needs at least 2 utterances")


@dataclass(frozen=True)
class Line:
    """One utterance of the transcript."""

    speaker: str
    text: str
    warmth: int = 0
    commitment: Commitment | None = None


@dataclass(frozen=True)
class Conversation:
    """A conversation between an initiator and a target, and what has been said so far."""

    conversation_id: str
    initiator: str
    target: str
    started_at: datetime
    location_path: str | None = None
    reason: str = ""
    lines: tuple[Line, ...] = ()
    ended_at: datetime | None = None
    ended_by: str | None = None

    @property
    def participants(self) -> tuple[str, str]:
        return (self.initiator, self.target)

    @property
    def turns(self) -> int:
        return len(self.lines)

    def warmth_of(self, npc_id: str) -> tuple[int, ...]:
        """The warmth of each of ``npc_id``'s lines."""
        return tuple(line.warmth for line in self.lines if line.speaker == npc_id)

    @property
    def commitments(self) -> tuple[Commitment, ...]:
        """Every commitment made in the conversation, in order."""
        return tuple(line.commitment for line in self.lines if line.commitment is not None)

    def other(self, npc_id: str) -> str:
        """The participant who is not ``npc_id``."""
        if npc_id not in self.participants:
            raise ValueError(f"{npc_id!r} is not in conversation {self.conversation_id!r}")
        return self.target if npc_id == self.initiator else self.initiator

    def is_open(self, now: datetime) -> bool:
        """Still going (not ended, not abandoned long ago)."""
        return self.ended_at is None and now - self.started_at < STALE_AFTER


def may_start(
    initiator: str,
    target: str,
    now: datetime,
    *,
    open_conversations: tuple[Conversation, ...],
    last_ended: datetime | None,
    rules: TurnRules,
) -> StartRefusal | None:
    """Why a new conversation between the two may not start now, or None when it may.

    Args:
        open_conversations: conversations either NPC is part of that have not ended.
        last_ended: when the pair's previous conversation ended (world time), if ever.
    """
    if initiator == target:
        return "same_npc"
    if any(c.is_open(now) for c in open_conversations):
        return "busy"
    if last_ended is not None and now - last_ended < rules.cooldown:
        return "cooldown"
    return None


def ends_after(conversation: Conversation, *, speaker_ends: bool, rules: TurnRules) -> bool:
    """Whether the conversation is over once its latest line has been spoken: the speaker ended it, or
    the turn cap (DESIGN.md: 16 utterances by default) is reached."""
    return speaker_ends or conversation.turns >= rules.max_utterances


def record_line(conversation: Conversation, line: Line, rules: TurnRules) -> Conversation:
    """The conversation with ``line`` appended.

    Raises:
        ValueError: the speaker is not a participant, speaks twice in a row, or the cap was reached.
    """
    if line.speaker not in conversation.participants:
        raise ValueError(f"{line.speaker!r} is not in conversation {conversation.conversation_id!r}")
    expected = conversation.initiator if conversation.turns % 2 == 0 else conversation.target
    if line.speaker != expected:
        raise ValueError(f"it is {expected!r}'s turn, not {line.speaker!r}'s")
    if conversation.ended_at is not None or conversation.turns >= rules.max_utterances:
        raise ValueError(f"conversation {conversation.conversation_id!r} is over")
    return replace(conversation, lines=(*conversation.lines, line))


def finish(conversation: Conversation, at: datetime, ended_by: str | None) -> Conversation:
    """The conversation, ended at ``at`` by ``ended_by`` (None: the turn cap ended it)."""
    return replace(conversation, ended_at=at, ended_by=ended_by)
