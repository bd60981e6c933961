"""What an NPC says: retrieve its relevant memories, then one structured LLM call per line.

One call decides the utterance, whether it ends the conversation, its warmth and any commitment, so
what the NPC says and what it then does come from one decision (Project Sid's cognitive controller).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from npcworld.contracts import Commitment
from npcworld.errors import NotFoundError
from npcworld.llm.prompts import MemoryItem
from npcworld.llm.prompts.dialogue import (
    CommitmentOut,
    DialogueSummaryInput,
    DialogueSummaryOutput,
    DialogueTurnInput,
    DialogueTurnOutput,
    PlayerLineInput,
    SpokenReply,
    TranscriptLine,
)
from npcworld.memory_client import RetrievalRequest
from services.dialogue.deps import DialogueDeps
from services.dialogue.domain import CommitmentDraft, Conversation, Line, Relationship, resolve_commitment
from services.dialogue.repository import NpcProfile

__all__ = ["Reply", "Scene", "clock_text", "next_line", "plan_lines", "player_subject", "reply_to_player",
           "summarise"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scene:
    """Where and when a line is spoken, and who speaks to whom."""

    tenant_id: str
    world_id: str
    now: datetime
    speaker: NpcProfile
    listener: NpcProfile


@dataclass(frozen=True)
class Reply:
    """An NPC's reply to a player, the model that produced it and the memories it was grounded in."""

    text: str
    provider: str
    memory_ids: tuple[str, ...]
    warmth: int = 0


def clock_text(now: datetime) -> str:
    return now.strftime("%A %d %B %Y, %H:%M")


# A conversation line also recalls the speaker's own news: retrieval for the listener and the line heard
# alone rarely brings up what the speaker has to tell (an event it plans, what it heard elsewhere).
NEWS_K = 4
# A returning player: at most this many of its earlier lines are recalled beside the relevant memories.
PLAYER_K = 3


def news_query(speaker: str) -> str:
    """The retrieval query for what ``speaker`` has to tell."""
    return f"news {speaker} has to tell: an event {speaker} is planning, an invitation, what {speaker} heard"


async def _memories(
    deps: DialogueDeps, scene: Scene, npc_id: str, query: str, k: int | None = None
) -> tuple[MemoryItem, ...]:
    request = RetrievalRequest(
        tenant_id=scene.tenant_id,
        world_id=scene.world_id,
        npc_id=npc_id,
        query=query[:2000],
        k=k or deps.retrieve_k,
        now=scene.now,
    )
    try:
        found = await deps.memory.retrieve(request)
    except NotFoundError:
        logger.info("no memory stream yet for npc %s in world %s", npc_id, scene.world_id)
        return ()
    return tuple(
        MemoryItem(id=m.memory_id, description=m.description, importance=m.importance, kind=m.kind)
        for m in found
    )


def _transcript(c: Conversation, names: dict[str, str]) -> tuple[TranscriptLine, ...]:
    return tuple(TranscriptLine(speaker=names.get(x.speaker, x.speaker), text=x.text) for x in c.lines)


def _draft(c: CommitmentOut) -> CommitmentDraft:
    return CommitmentDraft(c.description, c.place, c.time, c.duration_minutes, c.date)


def plan_lines(commitments: Sequence[Commitment]) -> tuple[str, ...]:
    """What an NPC has agreed to, as the dialogue prompt shows it ("17:00 on 2023-02-14 for 120 min at
    <place>: <what>"), soonest first; at most 10."""
    timed = sorted((c for c in commitments if c.start is not None), key=lambda c: (c.start, c.description))
    return tuple(
        f"{c.start:%H:%M on %Y-%m-%d} for {c.duration_minutes} min at {c.location_path or 'somewhere'}: "
        f"{c.description}"[:1000]
        for c in timed
        if c.start is not None
    )[:10]


def _turn_input(
    scene: Scene,
    conversation: Conversation,
    rel: Relationship,
    memories: tuple[MemoryItem, ...],
    cap: int,
    plans: tuple[str, ...] = (),
) -> DialogueTurnInput:
    speaker, listener = scene.speaker, scene.listener
    return DialogueTurnInput(
        speaker=speaker.name,
        persona=speaker.persona,
        listener=listener.name,
        familiarity=rel.familiarity,
        sentiment=rel.sentiment,
        relationship=rel.summary,
        reason=conversation.reason if speaker.npc_id == conversation.initiator else "",
        intentions=speaker.intentions[-5:],
        plans=plans,
        location=conversation.location_path or "",
        now=clock_text(scene.now),
        transcript=_transcript(conversation, {speaker.npc_id: speaker.name, listener.npc_id: listener.name}),
        memories=memories,
        canon=speaker.canon,
        turn=conversation.turns + 1,
        max_turns=cap,
    )


async def next_line(
    deps: DialogueDeps,
    scene: Scene,
    conversation: Conversation,
    rel: Relationship,
    known_places: list[str],
    agreed: Sequence[Commitment] = (),
) -> tuple[Line, bool]:
    """The speaker's next line of ``conversation`` and whether the speaker ends it with that line."""
    speaker, listener = scene.speaker, scene.listener
    heard = conversation.lines[-1].text if conversation.lines else conversation.reason
    query = f"{listener.name}. {heard}" if heard else listener.name
    memories = await _memories(deps, scene, speaker.npc_id, query)
    news = await _memories(deps, scene, speaker.npc_id, news_query(speaker.name), NEWS_K)
    memories += tuple(m for m in news if m.id not in {n.id for n in memories})
    inputs = _turn_input(scene, conversation, rel, memories, deps.rules.max_utterances, plan_lines(agreed))
    result = await deps.llm.complete(
        "dialogue_turn",
        inputs,
        DialogueTurnOutput,
        tenant_id=scene.tenant_id,
        world_id=scene.world_id,
        npc_id=speaker.npc_id,
        world_time=scene.now,
    )
    out = result.value
    commitment = None
    if out.commitment is not None:
        draft = _draft(out.commitment)
        here = conversation.location_path
        commitment = resolve_commitment(
            speaker.npc_id, draft, now=scene.now, known_places=known_places, here=here
        )
    return Line(speaker.npc_id, out.utterance, out.warmth, commitment), out.end


async def summarise(deps: DialogueDeps, scene: Scene, conversation: Conversation) -> str:
    """One or two sentences both participants remember the conversation by."""
    names = {scene.speaker.npc_id: scene.speaker.name, scene.listener.npc_id: scene.listener.name}
    inputs = DialogueSummaryInput(
        participants=(names[conversation.initiator], names[conversation.target]),
        location=conversation.location_path or "",
        transcript=_transcript(conversation, names),
        commitments=tuple(
            f"{names.get(c.npc_id, c.npc_id)}: {c.description}" for c in conversation.commitments
        ),
    )
    result = await deps.llm.complete(
        "dialogue_summary",
        inputs,
        DialogueSummaryOutput,
        tenant_id=scene.tenant_id,
        world_id=scene.world_id,
        world_time=scene.now,
    )
    return result.value.summary


def player_subject(player_id: str) -> str:
    """The ``subject`` of the memories a chat leaves (services/memory: ``player <id>``)."""
    return f"player {player_id}"


async def _player_memories(deps: DialogueDeps, scene: Scene) -> tuple[MemoryItem, ...]:
    """What the NPC remembers of this player from earlier chats: a retrieval for the player's own lines,
    keeping only memories whose subject is this player (a player is recognised by the studio's id)."""
    player, npc = scene.listener.npc_id, scene.speaker
    request = RetrievalRequest(tenant_id=scene.tenant_id, world_id=scene.world_id, npc_id=npc.npc_id,
                               query=f"A player ({player}) said to {npc.name}"[:2000], k=deps.retrieve_k,
                               now=scene.now)
    try:
        found = await deps.memory.retrieve(request)
    except NotFoundError:
        return ()
    return tuple(MemoryItem(id=m.memory_id, description=m.description, importance=m.importance)
                 for m in found if m.subject == player_subject(player))[:PLAYER_K]


async def reply_to_player(
    deps: DialogueDeps, scene: Scene, text: str, *, interview: bool, familiarity: int = 0
) -> Reply:
    """The NPC (``scene.speaker``) answers what ``scene.listener`` (the player or interviewer) said.

    The player's words are only the retrieval query and quoted speech in the prompt. A player the NPC has
    talked with (``familiarity`` chats) is recognised: its earlier lines are recalled beside the memories
    relevant to what it says now.
    """
    # The two retrievals are independent: made together, a chat waits for the slower one, not their sum.
    if familiarity and not interview:
        memories, known = await asyncio.gather(
            _memories(deps, scene, scene.speaker.npc_id, text), _player_memories(deps, scene))
        memories += tuple(m for m in known if m.id not in {n.id for n in memories})
    else:
        memories = await _memories(deps, scene, scene.speaker.npc_id, text)
    inputs = PlayerLineInput(
        npc=scene.speaker.name,
        persona=scene.speaker.persona,
        speaker=scene.listener.name,
        text=text,
        now=clock_text(scene.now),
        memories=memories,
        canon=scene.speaker.canon,
        familiarity=familiarity,
    )
    result = await deps.llm.complete(
        "interview_answer" if interview else "player_reply",
        inputs,
        SpokenReply,
        tenant_id=scene.tenant_id,
        world_id=scene.world_id,
        npc_id=scene.speaker.npc_id,
        world_time=scene.now,
    )
    return Reply(result.value.reply, result.provider, tuple(m.id for m in memories), result.value.warmth)
