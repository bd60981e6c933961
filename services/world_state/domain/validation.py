"""A world's validator webhook over decided actions: which actions it sees, what it is sent, what its answer
means, and the events that record the outcome.

Pure: the validator, the action, the answer (or why there is none) and the world tree are arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from npcworld.contracts import (
    ActionAcceptedByDefault,
    ActionDecided,
    ActionValidator,
    ActionVetoed,
    ValidatorFailure,
)
from services.world_state.domain.clock import in_focus
from services.world_state.domain.tree import WorldTree

__all__ = [
    "MAX_ANSWER_BYTES", "Answer", "Failure", "Settled", "applies", "parse_answer", "request_body", "settle",
]

MAX_ANSWER_BYTES = 64 * 1024


class _Replacement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1, max_length=1000)
    location_path: str | None = Field(default=None, min_length=1, max_length=400)
    duration_minutes: int | None = Field(default=None, ge=1, le=24 * 60)


class Answer(BaseModel):
    """A validator's answer: ``accept``, ``veto`` (with a ``reason``) or ``replace`` (with an ``action``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    verdict: Literal["accept", "veto", "replace"]
    reason: str = Field(default="", max_length=1000)
    action: _Replacement | None = None


@dataclass(frozen=True)
class Failure:
    """No usable answer: ``timeout`` (none within the deadline) or ``error`` (``detail`` says which)."""

    kind: ValidatorFailure
    detail: str


@dataclass(frozen=True)
class Settled:
    """What becomes of the action: the events that say so, and the action that takes effect (None: none)."""

    events: tuple[ActionVetoed | ActionAcceptedByDefault, ...]
    takes_effect: ActionDecided | None


def applies(validator: ActionValidator, npc_id: str, action: ActionDecided) -> bool:
    """Whether ``validator`` sees ``action`` of ``npc_id``: its NPCs and places, as rules filter them."""
    if validator.npc_ids and npc_id not in validator.npc_ids:
        return False
    return not validator.places or in_focus(action.location_path, validator.places)


def request_body(
    validator: ActionValidator, decided_id: str, where: tuple[str, str], world_time: datetime,
    action: ActionDecided,
) -> bytes:
    """The JSON a validator is POSTed for ``action`` (``where``: world and NPC), as signed and sent."""
    world_id, npc_id = where
    return json.dumps({
        "validator_id": validator.validator_id,
        "event_id": decided_id,
        "world_id": world_id,
        "npc_id": npc_id,
        "world_time": world_time.isoformat(),
        "deadline_ms": validator.deadline_ms,
        "action": action.model_dump(mode="json", exclude={"reaction_to"}),
    }, separators=(",", ":"), ensure_ascii=False).encode()


def parse_answer(status: int, body: bytes) -> Answer | Failure:
    """The validator's answer, or the ``error`` that makes it unusable (a non-2xx status, no JSON, a
    verdict it does not know, a ``replace`` without an action)."""
    if not 200 <= status < 300:
        return Failure("error", f"HTTP {status}")
    if len(body) > MAX_ANSWER_BYTES:
        return Failure("error", f"an answer of {len(body)} bytes (at most {MAX_ANSWER_BYTES})")
    try:
        answer = Answer.model_validate_json(body)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        return Failure("error", f"a bad answer: {where}: {first['msg']}"[:1000])
    if answer.verdict == "replace" and answer.action is None:
        return Failure("error", "a bad answer: replace without an action")
    return answer


def settle(
    validator: ActionValidator, outcome: Answer | Failure, action: ActionDecided, tree: WorldTree
) -> Settled:
    """The outcome of ``action`` given the validator's answer, or its default when there is none.

    A replacement is validated: its place, when given, must be one the world's tree knows; one that is not
    makes the answer an ``error`` and the default applies.
    """
    if isinstance(outcome, Failure):
        return _default(validator, outcome, action)
    if outcome.verdict == "accept":
        return Settled((), action)
    vetoed = _vetoed(validator, outcome.reason, action)
    if outcome.verdict == "veto":
        return Settled((vetoed,), None)
    instead = _replacement(outcome, action, tree)
    if isinstance(instead, Failure):
        return _default(validator, instead, action)
    return Settled((vetoed.model_copy(update={"replaced_by": instead.description}),), instead)


def _replacement(answer: Answer, action: ActionDecided, tree: WorldTree) -> ActionDecided | Failure:
    wanted = answer.action
    assert wanted is not None
    place = action.location_path
    if wanted.location_path is not None:
        known = tree.resolve(wanted.location_path)
        if known is None:
            return Failure("error", f"a bad answer: action.location_path: {wanted.location_path!r} is not a"
                                    " place of this world")
        place = known
    return action.model_copy(update={
        "description": wanted.description,
        "location_path": place,
        "duration_minutes": wanted.duration_minutes or action.duration_minutes,
        "object_state": None,
        "emoji": "",
    })


def _vetoed(validator: ActionValidator, reason: str, action: ActionDecided) -> ActionVetoed:
    return ActionVetoed(validator_id=validator.validator_id, reason=reason,
                        description=action.description, location_path=action.location_path)


def _default(validator: ActionValidator, failure: Failure, action: ActionDecided) -> Settled:
    if validator.on_failure == "accept":
        accepted = ActionAcceptedByDefault(
            validator_id=validator.validator_id, failure=failure.kind, detail=failure.detail[:1000],
            description=action.description, location_path=action.location_path,
        )
        return Settled((accepted,), action)
    why = f"the validator gave no valid answer ({failure.detail}); its default is veto"
    vetoed = _vetoed(validator, why[:1000], action).model_copy(update={"failure": failure.kind})
    return Settled((vetoed,), None)
