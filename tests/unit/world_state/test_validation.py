"""A world's validator over decided actions: which actions it sees, what it is sent, how its answer is read,
and what becomes of the action (the answer, or the validator's default when there is none)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from npcworld.contracts import (
    ActionAcceptedByDefault,
    ActionDecided,
    ActionValidator,
    ActionVetoed,
    SectorDef,
    WorldDefined,
)
from npcworld.egress import signature_header
from services.webhooks.domain import verify
from services.world_state.domain import WorldTree
from services.world_state.domain.validation import (
    Answer,
    Failure,
    applies,
    parse_answer,
    request_body,
    settle,
)

T0 = datetime(2023, 2, 13, 9, tzinfo=UTC)
TREE = WorldTree.from_definition("w", WorldDefined(sectors=(
    SectorDef.model_validate({"name": "Town", "arenas": [{"name": "Mine"}, {"name": "Inn"}]}),
)))
GUARD = ActionValidator(validator_id="val_1", url="https://studio.example/v", deadline_ms=300)
STRICT = GUARD.model_copy(update={"on_failure": "veto"})


def act(description: str, place: str = "w:Town:Mine") -> ActionDecided:
    return ActionDecided(description=description, location_path=place, start=T0, duration_minutes=15)


def answer(body: object, status: int = 200) -> Answer | Failure:
    return parse_answer(status, json.dumps(body).encode())


def test_a_validator_sees_only_the_npcs_and_places_it_names() -> None:
    picky = GUARD.model_copy(update={"npc_ids": ("ada",), "places": ("w:Town:Mine",)})
    assert applies(picky, "ada", act("dig")) and applies(GUARD, "bob", act("dig", "w:Town:Inn"))
    assert not applies(picky, "bob", act("dig")) and not applies(picky, "ada", act("dig", "w:Town:Inn"))


def test_the_request_names_the_decision_and_is_signed_as_webhooks_are() -> None:
    body = request_body(GUARD, "e-1", ("w", "ada"), T0, act("dig for silver"))
    sent = json.loads(body)
    assert (sent["event_id"], sent["world_id"], sent["npc_id"]) == ("e-1", "w", "ada")
    assert sent["deadline_ms"] == 300
    assert sent["action"]["description"] == "dig for silver" and sent["validator_id"] == "val_1"
    assert verify("s3cret", signature_header("s3cret", 1_700_000_000, body), body, now=1_700_000_000)


def test_an_accept_lets_the_action_stand_and_records_nothing() -> None:
    settled = settle(GUARD, answer({"verdict": "accept"}), act("dig"), TREE)
    assert settled.events == () and settled.takes_effect == act("dig")


def test_a_veto_names_the_validator_and_its_reason() -> None:
    settled = settle(GUARD, answer({"verdict": "veto", "reason": "the mine collapsed"}), act("dig"), TREE)
    assert settled.takes_effect is None
    (vetoed,) = settled.events
    assert isinstance(vetoed, ActionVetoed)
    assert (vetoed.validator_id, vetoed.rule_id, vetoed.reason, vetoed.failure) == (
        "val_1", None, "the mine collapsed", None)


def test_a_replacement_takes_effect_at_its_place_and_the_veto_says_what_replaced_the_action() -> None:
    said = {"verdict": "replace", "reason": "no digging",
            "action": {"description": "have a drink", "location_path": "w:Town:Inn", "duration_minutes": 5}}
    settled = settle(GUARD, answer(said), act("dig"), TREE)
    instead = settled.takes_effect
    assert instead is not None
    assert (instead.description, instead.location_path, instead.duration_minutes) == ("have a drink",
                                                                                      "w:Town:Inn", 5)
    assert instead.start == T0
    (vetoed,) = settled.events
    assert isinstance(vetoed, ActionVetoed) and vetoed.replaced_by == "have a drink"


def test_a_replacement_at_a_place_the_world_does_not_have_is_a_bad_answer_and_the_default_applies() -> None:
    said = {"verdict": "replace", "action": {"description": "fly", "location_path": "w:Moon:Crater"}}
    settled = settle(STRICT, answer(said), act("dig"), TREE)
    (vetoed,) = settled.events
    assert isinstance(vetoed, ActionVetoed) and vetoed.failure == "error" and "w:Moon:Crater" in vetoed.reason
    assert settled.takes_effect is None


def test_answers_that_cannot_be_used_are_errors() -> None:
    assert parse_answer(500, b"") == Failure("error", "HTTP 500")
    assert isinstance(parse_answer(200, b"not json"), Failure)
    assert isinstance(answer({"verdict": "maybe"}), Failure)
    assert answer({"verdict": "replace"}) == Failure("error", "a bad answer: replace without an action")
    assert isinstance(answer({"verdict": "replace", "action": {"description": ""}}), Failure)
    assert isinstance(parse_answer(200, b"{" + b" " * 70000 + b"}"), Failure)


def test_with_no_answer_the_default_accept_lets_the_action_stand_and_says_so() -> None:
    settled = settle(GUARD, Failure("timeout", "no answer within 300 ms"), act("dig"), TREE)
    assert settled.takes_effect == act("dig")
    (accepted,) = settled.events
    assert isinstance(accepted, ActionAcceptedByDefault)
    assert (accepted.validator_id, accepted.failure, accepted.detail) == ("val_1", "timeout",
                                                                         "no answer within 300 ms")


def test_with_no_answer_the_default_veto_vetoes_and_says_it_was_the_default() -> None:
    settled = settle(STRICT, Failure("timeout", "no answer within 300 ms"), act("dig"), TREE)
    assert settled.takes_effect is None
    (vetoed,) = settled.events
    assert isinstance(vetoed, ActionVetoed) and vetoed.failure == "timeout"
    assert "no answer within 300 ms" in vetoed.reason and "default is veto" in vetoed.reason
