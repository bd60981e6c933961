"""Pure dialogue domain: conversation rules, relationship arithmetic and commitment bookkeeping."""

from services.dialogue.domain.commitments import (
    CommitmentDraft,
    merge_commitments,
    resolve_commitment,
    resolve_place,
    resolve_start,
)
from services.dialogue.domain.conversation import (
    DEFAULT_COOLDOWN,
    DEFAULT_MAX_UTTERANCES,
    Conversation,
    Line,
    StartRefusal,
    TurnRules,
    ends_after,
    finish,
    may_start,
    record_line,
)
from services.dialogue.domain.relationship import NEUTRAL, Relationship, after_conversation

__all__ = [
    "DEFAULT_COOLDOWN",
    "DEFAULT_MAX_UTTERANCES",
    "NEUTRAL",
    "CommitmentDraft",
    "Conversation",
    "Line",
    "Relationship",
    "StartRefusal",
    "TurnRules",
    "after_conversation",
    "ends_after",
    "finish",
    "may_start",
    "merge_commitments",
    "record_line",
    "resolve_commitment",
    "resolve_place",
    "resolve_start",
]
