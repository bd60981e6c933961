"""The terminal's ops questions: why an event happened, what was dead-lettered, sending it back."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from launcher.cli import main
from npcworld.contracts import ActionDecided, Envelope, MemoriesAccessed, ObservationMade, WorldTicked
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.llm.prompts import IMPORTANCE, ImportanceInput

pytestmark = pytest.mark.integration

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)


def _run(database_url: str, *args: str) -> Any:
    result = CliRunner().invoke(main, list(args), env={"DATABASE_URL": database_url}, catch_exceptions=False)
    return result


async def _chain(pool: AsyncConnectionPool) -> tuple[Envelope, Envelope, Envelope]:
    """A tick, planning's decision for marta while handling it (with a retrieval and a model call), and an
    unrelated decision of another NPC in the same tick."""
    tenant, world = f"t-{uuid.uuid4().hex[:6]}", f"w-{uuid.uuid4().hex[:6]}"
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        tick = uow.new_event(WorldTicked(step=7, step_seconds=10.0), tenant_id=tenant, world_id=world,
                             world_time=T0)
        await uow.append(f"clock-{world}", [tick])
        handling = UnitOfWork(conn, EventStore(), cause=tick)
        looked = handling.new_event(MemoriesAccessed(memory_ids=(str(uuid.uuid4()),), accessed_at=T0,
                                                     query="what should marta do now"), npc_id="marta")
        decided = handling.new_event(ActionDecided(description="open the cafe", duration_minutes=30,
                                                   location_path=f"{world}:town:cafe", start=T0),
                                     npc_id="marta")
        other = handling.new_event(ActionDecided(description="sleep", duration_minutes=60,
                                                 location_path=f"{world}:town:home", start=T0), npc_id="tom")
        await handling.append(f"plans-{world}", [looked, decided, other])
        await conn.execute(
            "INSERT INTO llm_calls (tenant_id, world_id, npc_id, prompt_kind, template_version, request_hash,"
            " model, provider, parameters, request, response, outcome, cause_event_id)"
            " VALUES (%s, %s, %s, 'action_decision', 3, 'h', 'npcworld-offline-1', 'offline', '{}', %s, %s,"
            " 'ok', %s)",
            (tenant, world, "marta", Jsonb([{"role": "user", "content": "It is 8:00. What next?"}]),
             Jsonb({"description": "open the cafe"}), tick.event_id),
        )
    return tick, decided, other


async def test_why_shows_the_cause_chain_the_model_call_and_the_retrieval(
    pool: AsyncConnectionPool, database_url: str
) -> None:
    tick, decided, _ = await _chain(pool)
    result = _run(database_url, "why", str(decided.event_id), "--prompts")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith(f"ActionDecided {decided.event_id}") and "open the cafe" in out
    assert f"WorldTicked {tick.event_id}" in out and "started the chain" in out
    assert "action_decision v3, offline/npcworld-offline-1, ok" in out
    assert "It is 8:00. What next?" in out
    assert "query 'what should marta do now'" in out
    assert out.count("ActionDecided") == 1  # tom's decision of the same tick is not marta's why


async def test_why_renders_the_prompt_of_a_call_recorded_with_its_inputs_instead_of_its_text(
    pool: AsyncConnectionPool, database_url: str
) -> None:
    """Call records keep the template's kind, version and inputs, not the rendered messages: ``why`` renders
    them again, and says nothing it cannot know for a template version no longer in the code."""
    tick, decided, _ = await _chain(pool)
    inputs = ImportanceInput(npc_name="Marta Quill", memories=("the cafe oven caught fire",))
    async with pool.connection() as conn:
        for version in (IMPORTANCE.version, IMPORTANCE.version + 100):
            await conn.execute(
                "INSERT INTO llm_calls (tenant_id, world_id, npc_id, prompt_kind, template_version,"
                " request_hash, model, provider, parameters, request, response, outcome, cause_event_id,"
                " inputs) VALUES (%s, %s, 'marta', 'importance', %s, 'h2', 'npcworld-offline-1', 'offline',"
                " '{}', NULL, '{\"scores\": [9]}', 'ok', %s, %s)",
                (tick.tenant_id, tick.world_id, version, tick.event_id,
                 Jsonb(inputs.model_dump(mode="json"))),
            )
    out = _run(database_url, "why", str(decided.event_id), "--prompts").output
    rendered = IMPORTANCE.render(inputs)
    assert rendered[1]["content"] in out and "the cafe oven caught fire" in rendered[1]["content"]
    assert out.count("the cafe oven caught fire") == 1  # the unknown version shows no invented prompt


async def test_why_of_an_unknown_event_says_so(database_url: str) -> None:
    result = _run(database_url, "why", str(uuid.uuid4()))
    assert result.exit_code != 0 and "no event" in result.output
    assert _run(database_url, "why", "not-an-id").exit_code != 0


async def test_a_dead_letter_is_listed_and_redriven_to_its_consumer_only(
    pool: AsyncConnectionPool, database_url: str
) -> None:
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        seen = uow.new_event(ObservationMade(description="a fire"), tenant_id="t", world_id="w",
                             world_time=T0, npc_id="ada")
        await uow.append("perception-w-ada", [seen])
        await conn.execute("DELETE FROM outbox")  # published
        for consumer in ("memory", "planning"):
            await conn.execute("INSERT INTO processed_events (consumer, event_id) VALUES (%s, %s)",
                               (consumer, seen.event_id))
        cur = await conn.execute(
            "INSERT INTO dead_letters (consumer, topic, partition, \"offset\", event_id, event_type, reason,"
            " value) VALUES ('memory', 'npcworld.perception.v1', 3, 9, %s, 'ObservationMade', 'boom', '')"
            " RETURNING id", (seen.event_id,))
        dead_id = (await cur.fetchone())[0]  # type: ignore[index]
        await conn.execute(
            "INSERT INTO dead_letters (consumer, topic, partition, \"offset\", reason, value)"
            " VALUES ('planning', 'npcworld.perception.v1', 1, 2, 'not JSON', '\\x00')")

    listed = _run(database_url, "dlq", "list")
    assert listed.exit_code == 0 and "boom" in listed.output and "not JSON" in listed.output
    only = _run(database_url, "dlq", "list", "--consumer", "planning")
    assert "boom" not in only.output

    redriven = _run(database_url, "dlq", "redrive", str(dead_id))
    assert redriven.exit_code == 0, redriven.output
    with psycopg.connect(database_url) as conn:
        claims = conn.execute("SELECT consumer FROM processed_events WHERE event_id = %s",
                              (seen.event_id,)).fetchall()
        outbox = conn.execute("SELECT topic, key FROM outbox JOIN events e USING (seq) WHERE e.event_id = %s",
                              (seen.event_id,)).fetchall()
        left = conn.execute("SELECT reason FROM dead_letters").fetchall()
    assert claims == [("planning",)]  # memory handles it again; planning skips it
    assert outbox == [("npcworld.perception.v1", "ada")]
    assert left == [("not JSON",)]
    poison = _run(database_url, "dlq", "list").output.split("\n")[1].split()[0]
    refused = _run(database_url, "dlq", "redrive", poison)
    assert refused.exit_code != 0 and "not a stored event" in refused.output


async def test_events_tail_prints_the_newest_matching_events_one_line_each(
    pool: AsyncConnectionPool, database_url: str
) -> None:
    _, decided, other = await _chain(pool)
    result = _run(database_url, "events", "tail", "--world", decided.world_id, "--type", "ActionDecided",
                  "--no-follow", "--last", "5")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert [line.split()[-1] for line in lines] == [str(decided.event_id), str(other.event_id)]
    assert f"{decided.world_id}/marta" in lines[0] and "open the cafe" in lines[0]
    one = _run(database_url, "events", "tail", "--world", decided.world_id, "--npc", "tom", "--no-follow")
    assert one.output.strip().split()[-1] == str(other.event_id)
