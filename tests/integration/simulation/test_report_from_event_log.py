"""The report comes from the event store: a planted conversation chain yields its diffusion and density."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from launcher.simulation import build_report
from launcher.simulation.eventlog import read_facts
from npcworld.contracts import (
    ConversationEnded,
    EventPayload,
    NpcCreated,
    NpcMove,
    NpcsMoved,
    RelationshipChanged,
    UtteranceSpoken,
    WorldTicked,
)
from npcworld.eventstore import EventStore, UnitOfWork

pytestmark = pytest.mark.integration

T0 = datetime(2023, 2, 14, 12, 0, tzinfo=UTC)
STORIES = {
    "party": {
        "keywords": ["party"],
        "host": "ana",
        "place": "Cafe",
        "start": "2023-02-14T17:00:00+00:00",
        "end": "2023-02-14T19:00:00+00:00",
    }
}


async def test_a_planted_conversation_chain_in_the_event_log_yields_its_diffusion_and_density(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = f"t-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    seeds = {"ana": "Ana plans a party at the cafe", "ben": "Ben bakes", "cy": "Cy reads", "dee": "Dee walks"}
    planted: list[tuple[timedelta, str | None, EventPayload]] = [
        (
            timedelta(0),
            npc,
            NpcCreated(npc_id=npc, name=npc.title(), seed=seed, location=f"{world}:Home:room"),
        )
        for npc, seed in seeds.items()
    ]
    planted += [
        (
            timedelta(hours=1),
            "ana",
            UtteranceSpoken(
                conversation_id="c1", listener_id="ben", turn=1, text="Come to my party tonight!"
            ),
        ),
        (
            timedelta(hours=1),
            "ana",
            ConversationEnded(conversation_id="c1", participants=("ana", "ben"), summary="Ana invited Ben"),
        ),
        (
            timedelta(hours=2),
            "ben",
            ConversationEnded(
                conversation_id="c2", participants=("ben", "cy"), summary="Ben told Cy about Ana's party"
            ),
        ),
        (
            timedelta(hours=3),
            "cy",
            ConversationEnded(
                conversation_id="c3", participants=("cy", "dee"), summary="They talked about books"
            ),
        ),
        (timedelta(hours=3), "dee", RelationshipChanged(other_id="cy", familiarity=1, sentiment=6)),
        (
            timedelta(hours=5, minutes=30),
            None,
            NpcsMoved(moves=(NpcMove(npc_id="ben", path=f"{world}:Cafe:floor"),)),
        ),
        (timedelta(hours=8), None, WorldTicked(step=2880, step_seconds=10)),
    ]
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        events = [
            uow.new_event(p, tenant_id=tenant, world_id=world, world_time=T0 + dt, npc_id=npc)
            for dt, npc, p in planted
        ]
        await uow.append(f"planted-{world}", events)
    async with pool.connection() as conn:
        facts = await read_facts(conn, tenant, world)
    report = build_report(
        facts, STORIES, {"template": "planted", "seed": 0, "days": 1, "step_seconds": 10}, 1.0
    )

    party = report["information_diffusion"]["party"]
    assert (party["start"], party["end"]) == (1, 3)  # ana → ben → cy; dee heard only of books
    assert party["chains"]["cy"] == "ana → ben → cy"
    # no one knows anyone from the seeds; the three conversations make three mutual pairs of six possible
    assert report["network_density"] == {"start": 0.0, "end": 0.5, "edges_start": 0, "edges_end": 3}
    assert report["party"]["attended"] == ["ben"] and report["party"]["window_simulated"]
    assert report["run"]["steps"] == 2880
