"""The conversation flow: open one on request, speak the next line, close it with summaries and relationships.

Each line is one ``UtteranceSpoken`` event; the listener's reply is handled when that event comes back,
so every handler run is one LLM call and the conversation's events stay in order on its stream.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import (
    Commitment,
    ConversationEnded,
    ConversationRequested,
    Envelope,
    EventPayload,
    RelationshipChanged,
    UtteranceSpoken,
)
from npcworld.eventstore import UnitOfWork
from npcworld.ids import new_id
from services.dialogue.deps import DialogueDeps
from services.dialogue.domain import (
    Conversation,
    Line,
    Relationship,
    after_conversation,
    finish,
    may_start,
    merge_commitments,
    record_line,
)
from services.dialogue.speaking import Scene, next_line, summarise

__all__ = [
    "LineInputs",
    "PreparedLine",
    "PreparedSummary",
    "close_conversation",
    "closing_scene",
    "line_inputs",
    "open_conversation",
    "opening",
    "prepare_line",
    "prepare_summary",
    "speak_next",
    "stream_of",
]

logger = logging.getLogger(__name__)


def stream_of(conversation_id: str) -> str:
    return f"conversation-{conversation_id}"


async def _scene(
    conn: AsyncConnection[Any], deps: DialogueDeps, event: Envelope, speaker: str, listener: str
) -> Scene:
    repo = deps.repository
    return Scene(
        event.tenant_id,
        event.world_id,
        event.world_time,
        await repo.profile(conn, event.tenant_id, event.world_id, speaker),
        await repo.profile(conn, event.tenant_id, event.world_id, listener),
    )


async def opening(
    conn: AsyncConnection[Any], deps: DialogueDeps, event: Envelope, request: ConversationRequested, *,
    conversation_id: str | None = None, also_open: Sequence[Conversation] = (),
) -> Conversation | str:
    """The conversation ``event.npc_id`` would open on ``request`` now, or why the rules refuse it; reads
    only. ``also_open``: conversations opened meanwhile that are not stored yet (a gather step's own)."""
    assert event.npc_id is not None
    t, w, now, pair = event.tenant_id, event.world_id, event.world_time, (event.npc_id, request.target_npc_id)
    repo = deps.repository
    busy = await repo.open_conversations(conn, t, w, pair)
    busy += tuple(c for c in also_open if set(c.participants) & set(pair))
    last = await repo.last_ended(conn, t, w, pair)
    refusal: str | None = may_start(*pair, now, open_conversations=busy, last_ended=last, rules=deps.rules)
    if refusal is None and await repo.any_retired(conn, t, w, pair):
        refusal = "retired"
    if refusal is not None:
        return refusal
    return Conversation(conversation_id or new_id(), *pair, now, request.location_path, request.reason)


async def open_conversation(
    uow: UnitOfWork, deps: DialogueDeps, event: Envelope[ConversationRequested], *,
    conversation_id: str | None = None,
) -> Conversation | None:
    """Start the conversation ``event`` requests unless the rules refuse (then None); ``conversation_id``:
    the id its opening line was gathered for."""
    conversation = await opening(uow.conn, deps, event, event.payload, conversation_id=conversation_id)
    if isinstance(conversation, str):
        logger.info("conversation %s -> %s in world %s not started: %s", event.npc_id,
                    event.payload.target_npc_id, event.world_id, conversation)
        return None
    await deps.repository.add_conversation(uow.conn, event.tenant_id, event.world_id, conversation)
    return conversation


@dataclass(frozen=True)
class LineInputs:
    """Everything the next line of a conversation is made from (besides the speaker's memories)."""

    conversation: Conversation
    scene: Scene
    relationship: Relationship
    places: tuple[str, ...]
    agreed: tuple[Commitment, ...] = ()


@dataclass(frozen=True)
class PreparedLine:
    """A line computed before the poll's transaction, valid while its inputs are unchanged."""

    inputs: LineInputs
    line: Line
    ends: bool


@dataclass(frozen=True)
class PreparedSummary:
    """A closing summary computed before the poll's transaction, valid for that state of the conversation."""

    conversation: Conversation
    scene: Scene
    summary: str


async def line_inputs(
    conn: AsyncConnection[Any], deps: DialogueDeps, event: Envelope, conversation: Conversation
) -> LineInputs:
    """Read what the next line depends on: the speaker is the participant whose turn it is."""
    speaker = conversation.initiator if conversation.turns % 2 == 0 else conversation.target
    listener = conversation.other(speaker)
    repo, t, w = deps.repository, event.tenant_id, event.world_id
    scene = await _scene(conn, deps, event, speaker, listener)
    rel = await repo.relationship(conn, t, w, speaker, listener)
    places = tuple(await repo.known_places(conn, t, w, speaker))
    agreed = tuple(await repo.commitments_of(conn, t, w, speaker, event.world_time))
    return LineInputs(conversation, scene, rel, places, agreed)


async def prepare_line(deps: DialogueDeps, inputs: LineInputs) -> PreparedLine:
    """The next line from ``inputs`` (read by ``line_inputs``), made outside any transaction; ``speak_next``
    uses it while the inputs are unchanged."""
    conversation = inputs.conversation
    line, ends = await next_line(
        deps, inputs.scene, conversation, inputs.relationship, list(inputs.places), inputs.agreed
    )
    return PreparedLine(inputs, line, ends)


async def closing_scene(
    conn: AsyncConnection[Any], deps: DialogueDeps, event: Envelope, conversation: Conversation
) -> Scene:
    """The scene a conversation's summary is made in."""
    return await _scene(conn, deps, event, conversation.initiator, conversation.target)


async def prepare_summary(deps: DialogueDeps, conversation: Conversation, scene: Scene) -> PreparedSummary:
    """The closing summary, made outside any transaction; ``close_conversation`` uses it if still current."""
    return PreparedSummary(conversation, scene, await summarise(deps, scene, conversation))


async def speak_next(
    uow: UnitOfWork, deps: DialogueDeps, event: Envelope, conversation: Conversation,
    prepared: PreparedLine | None = None,
) -> None:
    """The participant whose turn it is speaks; the line is stored and emitted as ``UtteranceSpoken``.

    ``prepared`` (from ``prepare_line``, before the transaction) is used when what it was made from is
    still what the transaction reads; otherwise the line is made here, as it would have been. A
    conversation one of whose participants has been retired ends instead (retirement ends it too, but a
    line may be handled before the retirement is)."""
    t, w = event.tenant_id, event.world_id
    if await deps.repository.any_retired(uow.conn, t, w, conversation.participants):
        await close_conversation(uow, deps, event, conversation, None)
        return
    inputs = await line_inputs(uow.conn, deps, event, conversation)
    if prepared is not None and prepared.inputs == inputs:
        line, ends = prepared.line, prepared.ends
    else:
        line, ends = await next_line(
            deps, inputs.scene, conversation, inputs.relationship, list(inputs.places), inputs.agreed
        )
    speaker, listener = inputs.scene.speaker.npc_id, inputs.scene.listener.npc_id
    repo, t, w = deps.repository, event.tenant_id, event.world_id
    updated = record_line(conversation, line, deps.rules)
    await repo.save_conversation(uow.conn, updated)
    spoken = UtteranceSpoken(
        conversation_id=conversation.conversation_id,
        listener_id=listener,
        text=line.text,
        turn=updated.turns,
        ends=ends or updated.turns >= deps.rules.max_utterances,
        commitment=line.commitment,
        location_path=conversation.location_path,
    )
    await uow.append(
        stream_of(conversation.conversation_id),
        [uow.new_event(spoken, npc_id=speaker, tenant_id=t, world_id=w)],
    )


async def close_conversation(
    uow: UnitOfWork, deps: DialogueDeps, event: Envelope, conversation: Conversation, ended_by: str | None,
    prepared: PreparedSummary | None = None,
) -> None:
    """End the conversation: one summary, ``ConversationEnded`` and ``RelationshipChanged`` for each side."""
    t, w, now = event.tenant_id, event.world_id, event.world_time
    scene = await closing_scene(uow.conn, deps, event, conversation)
    if prepared is not None and (prepared.conversation, prepared.scene) == (conversation, scene):
        summary = prepared.summary
    else:
        summary = await summarise(deps, scene, conversation)
    ended = finish(conversation, now, ended_by)
    await deps.repository.save_conversation(uow.conn, ended)
    events: list[Envelope] = []
    for npc, other in (ended.participants, ended.participants[::-1]):
        payloads = await _close_for(uow, deps, event, ended, (npc, other), summary)
        events += [uow.new_event(p, npc_id=npc, tenant_id=t, world_id=w) for p in payloads]
    await uow.append(stream_of(conversation.conversation_id), events)


async def _close_for(
    uow: UnitOfWork, deps: DialogueDeps, event: Envelope, c: Conversation, pair: tuple[str, str], summary: str
) -> list[EventPayload]:
    npc, other = pair
    repo, t, w = deps.repository, event.tenant_id, event.world_id
    current = await repo.relationship(uow.conn, t, w, npc, other)
    rel = after_conversation(
        current, own_warmth=c.warmth_of(npc), other_warmth=c.warmth_of(other), summary=summary
    )
    await repo.save_relationship(uow.conn, t, w, rel, _at(c, event.world_time))
    ended = ConversationEnded(
        conversation_id=c.conversation_id,
        participants=c.participants,
        summary=summary,
        commitments=merge_commitments(c.commitments),
        turns=c.turns,
        ended_by=c.ended_by,
    )
    changed = RelationshipChanged(
        other_id=other, familiarity=rel.familiarity, sentiment=rel.sentiment, summary=summary[:2000]
    )
    return [ended, changed]


def _at(c: Conversation, fallback: datetime) -> datetime:
    return c.ended_at or fallback
