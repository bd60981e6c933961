"""A world's validator webhook on the real stack, with a real local HTTP validator: each decided action is
POSTed (signed) before it takes effect; the validator accepts, vetoes or replaces it; a timeout or a bad
answer gets the validator's default and the event says so; a veto names the validator in the why view;
a validator that hangs does not stop the stepped clock."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from launcher.why import explain, render
from npcworld.contracts import (
    ActionAcceptedByDefault,
    ActionDecided,
    ActionStarted,
    ActionValidator,
    ActionValidatorSet,
    ActionVetoed,
    Envelope,
    NpcCreated,
)
from npcworld.egress import parse_allow_list, store_secret
from services.webhooks.domain import verify
from services.world_state.validator_client import ValidatorClient
from tests.infra import BrokerForTests
from tests.integration.world_state.support import T0, Pipeline, running_pipeline
from tests.integration.world_state.test_movement import two_rooms_and_a_street
from tests.integration.world_state.validator_server import ValidatorServer

pytestmark = pytest.mark.integration
SECRET = "vsec_test"


@pytest.fixture
async def validator() -> AsyncIterator[ValidatorServer]:
    server = ValidatorServer().start()
    yield server
    server.stop()


@pytest.fixture
async def client() -> AsyncIterator[ValidatorClient]:
    async with ValidatorClient.open(parse_allow_list("127.0.0.1")) as c:
        yield c


async def _register(p: Pipeline, url: str, on_failure: str) -> str:
    validator_id = f"val_{uuid.uuid4().hex[:8]}"
    v = ActionValidator.model_validate(
        {"validator_id": validator_id, "url": url, "deadline_ms": 300, "on_failure": on_failure}
    )
    async with p.pool.connection() as conn:
        await store_secret(conn, p.tenant_id, validator_id, SECRET)
    await p.digested(await p.append(f"validator-{p.world_id}", [ActionValidatorSet(validator=v)]))
    return validator_id


async def _decide(p: Pipeline, what: str, where: str) -> Envelope:
    action = ActionDecided(description=what, location_path=where, start=T0, duration_minutes=30)
    (event,) = await p.append(f"planning-{p.world_id}-ada", [action], npc_id="ada")
    await p.digested([event])
    return event


def _caused_by(events: list[Envelope], cause: Envelope) -> list[Any]:
    return [e.payload for e in events if e.causation_id == cause.event_id]


async def test_the_validator_accepts_vetoes_or_replaces_each_decided_action_before_it_takes_effect(
    pool: AsyncConnectionPool, broker: BrokerForTests, validator: ValidatorServer, client: ValidatorClient,
    database_url: str,
) -> None:
    async with running_pipeline(pool, broker.bootstrap, client) as p:
        w = p.world_id
        validator.home = f"{w}:Home:bedroom"
        ada = NpcCreated(npc_id="ada", name="Ada", location=validator.home)
        await p.create(two_rooms_and_a_street(), [ada])
        validator_id = await _register(p, validator.url, "accept")
        start = await p.last_seq()
        coffee = await _decide(p, "make coffee", f"{w}:Cafe:counter")
        dig = await _decide(p, "dig for silver", f"{w}:Street:road")
        burn = await _decide(p, "burn the bed", f"{w}:Home:bedroom:bed")
        teleport = await _decide(p, "teleport to the moon", f"{w}:Street:road")
        events = await p.events("ActionVetoed", "ActionStarted", "ActionAcceptedByDefault", after=start)

    (took,) = _caused_by(events, coffee)
    assert isinstance(took, ActionStarted) and took.description == "make coffee"
    (vetoed,) = _caused_by(events, dig)  # nothing started
    assert isinstance(vetoed, ActionVetoed) and vetoed.validator_id == validator_id
    assert (vetoed.reason, vetoed.rule_id, vetoed.failure) == ("the mine collapsed in 1891", None, None)
    replaced, instead = _caused_by(events, burn)
    assert isinstance(replaced, ActionVetoed) and replaced.replaced_by == "sweep the floor"
    assert isinstance(instead, ActionStarted) and instead.description == "sweep the floor"
    bad, stood = _caused_by(events, teleport)  # a replacement at a place the world lacks: the default
    assert isinstance(bad, ActionAcceptedByDefault) and bad.failure == "error" and "x:Moon:c" in bad.detail
    assert isinstance(stood, ActionStarted) and stood.description == "teleport to the moon"

    sent = {c.json["event_id"]: c for c in validator.calls}
    assert set(sent) == {str(e.event_id) for e in (coffee, dig, burn, teleport)}
    call = sent[str(dig.event_id)]
    assert call.json["npc_id"] == "ada" and call.json["action"]["description"] == "dig for silver"
    stamp = int(call.headers["Npcworld-Timestamp"])
    assert verify(SECRET, call.headers["Npcworld-Signature"], call.body, now=stamp)
    with psycopg.connect(database_url) as conn:  # the why view: the veto, the validator, the decision
        x = explain(conn, next(e.event_id for e in events if e.causation_id == dig.event_id))
    shown = render(x) if x is not None else ""
    assert validator_id in shown and "the mine collapsed in 1891" in shown
    assert f"ActionDecided {dig.event_id}" in shown and "dig for silver" in shown


async def test_without_a_usable_answer_the_default_applies_and_a_hanging_validator_does_not_stop_the_clock(
    pool: AsyncConnectionPool, broker: BrokerForTests, validator: ValidatorServer, client: ValidatorClient,
) -> None:
    async with running_pipeline(pool, broker.bootstrap, client) as p:
        w = p.world_id
        ada = NpcCreated(npc_id="ada", name="Ada", location=f"{w}:Home:bedroom")
        await p.create(two_rooms_and_a_street(), [ada])
        lenient = await _register(p, validator.url, "accept")
        start = await p.last_seq()
        wait = await _decide(p, "wait by the road", f"{w}:Street:road")
        garble = await _decide(p, "garble the news", f"{w}:Street:road")
        strict = await _register(p, validator.url, "veto")
        wait_again = await _decide(p, "wait at the counter", f"{w}:Cafe:counter")
        crash = await _decide(p, "crash the party", f"{w}:Cafe:counter")
        stepped = await asyncio.wait_for(p.step(), 60)  # the clock still steps
        events = await p.events("ActionVetoed", "ActionStarted", "ActionAcceptedByDefault", after=start)

    assert stepped.type == "WorldTicked"
    timed_out, took = _caused_by(events, wait)
    assert isinstance(timed_out, ActionAcceptedByDefault) and timed_out.validator_id == lenient
    assert (timed_out.failure, timed_out.detail) == ("timeout", "no answer within 300 ms")
    assert isinstance(took, ActionStarted) and took.description == "wait by the road"
    garbled, _ = _caused_by(events, garble)
    assert isinstance(garbled, ActionAcceptedByDefault) and garbled.failure == "error"
    assert "bad answer" in garbled.detail
    (vetoed,) = _caused_by(events, wait_again)
    assert isinstance(vetoed, ActionVetoed) and (vetoed.validator_id, vetoed.failure) == (strict, "timeout")
    assert "default is veto" in vetoed.reason
    (crashed,) = _caused_by(events, crash)
    assert isinstance(crashed, ActionVetoed) and crashed.failure == "error" and "HTTP 500" in crashed.reason
