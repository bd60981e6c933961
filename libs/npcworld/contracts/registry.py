"""Registry of event types and decoding of raw envelopes into typed ones."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pydantic

from npcworld.contracts.base import EventPayload
from npcworld.contracts.canon import CanonSet
from npcworld.contracts.dialogue import (
    ConversationEnded,
    InnerVoiceGiven,
    NpcReplied,
    PlayerSpoke,
    RelationshipChanged,
    UtteranceSpoken,
)
from npcworld.contracts.envelope import Envelope
from npcworld.contracts.llm import LLMBudgetExhausted
from npcworld.contracts.memory import MemoriesAccessed, MemoryCorrected, MemoryForgotten, MemoryRecorded
from npcworld.contracts.npcs import NpcPersonaChanged, NpcRetired
from npcworld.contracts.perception import ObservationMade, PlacesDiscovered
from npcworld.contracts.planning import ActionDecided, ConversationRequested, DayPlanned, PlanRevised
from npcworld.contracts.players import PlayerForgotten
from npcworld.contracts.reflection import ReflectionCompleted, ReflectionFailed, ReflectionTriggered
from npcworld.contracts.validation import ActionAcceptedByDefault, ActionValidatorSet
from npcworld.contracts.webhooks import WebhookChanged, WebhookDeleted, WebhookRegistered
from npcworld.contracts.world import (
    ActionRulesSet,
    ActionStarted,
    ActionVetoed,
    ClockChanged,
    NpcCreated,
    NpcsMoved,
    ObjectStateChanged,
    StepCompleted,
    WorldCreated,
    WorldDefined,
    WorldDeleted,
    WorldForked,
    WorldTicked,
)
from npcworld.errors import PermanentError, UnknownEventError

__all__ = ["EVENT_TYPES", "decode_envelope", "envelope_from_dict"]

EVENT_TYPES: Mapping[str, type[EventPayload]] = {
    cls.event_type: cls
    for cls in (
        WorldCreated,
        WorldForked,
        WorldDeleted,
        NpcCreated,
        NpcPersonaChanged,
        NpcRetired,
        ObservationMade,
        MemoryRecorded,
        MemoriesAccessed,
        MemoryCorrected,
        MemoryForgotten,
        LLMBudgetExhausted,
        StepCompleted,
        WorldTicked,
        ActionRulesSet,
        ActionVetoed,
        ActionValidatorSet,
        ActionAcceptedByDefault,
        CanonSet,
        PlacesDiscovered,
        ActionDecided,
        DayPlanned,
        PlanRevised,
        ConversationRequested,
        ReflectionTriggered,
        ReflectionCompleted,
        ReflectionFailed,
        UtteranceSpoken,
        ConversationEnded,
        RelationshipChanged,
        PlayerSpoke,
        NpcReplied,
        PlayerForgotten,
        InnerVoiceGiven,
        WorldDefined,
        NpcsMoved,
        ObjectStateChanged,
        ClockChanged,
        ActionStarted,
        WebhookRegistered,
        WebhookChanged,
        WebhookDeleted,
    )
}


def envelope_from_dict(data: Mapping[str, Any]) -> Envelope:
    """Validate a decoded envelope, typing its payload by ``type`` and ``schema_version``.

    Raises:
        UnknownEventError: the type or schema version is not known to this build.
        PermanentError: the envelope or payload fails validation.
    """
    event_type = data.get("type")
    payload_cls = EVENT_TYPES.get(str(event_type))
    if payload_cls is None:
        raise UnknownEventError(f"unknown event type {event_type!r}")
    version = data.get("schema_version")
    if version != payload_cls.schema_version:
        raise UnknownEventError(
            f"{event_type} schema_version {version!r} is not supported (this build reads "
            f"{payload_cls.schema_version})"
        )
    try:
        payload = payload_cls.model_validate(data.get("payload"))
        return Envelope.model_validate({**data, "payload": payload})
    except pydantic.ValidationError as exc:
        raise PermanentError(f"invalid {event_type} event: {exc}") from exc


def decode_envelope(raw: bytes) -> Envelope:
    """Decode a Kafka message value into a typed envelope (raises PermanentError if it cannot)."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PermanentError(f"message is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise PermanentError("message is not a JSON object")
    return envelope_from_dict(data)
