"""Crypto-shredding on the real event store: a player's words are sealed at rest, open on every read while
the player's key exists, and read "[forgotten]" everywhere (copies, forks, the relay's messages, model-call
records) once the player is forgotten; other players and other tenants keep theirs."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from aiokafka import AIOKafkaConsumer
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import (
    Envelope,
    EventPayload,
    MemoriesAccessed,
    MemoryRecorded,
    NpcReplied,
    PlayerSpoke,
    RelationshipChanged,
    WorldCreated,
)
from npcworld.contracts.topics import DIALOGUE
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.forgetting import forget_player_data
from npcworld.fork import fork_world, world_stream
from npcworld.outbox import OutboxRelay
from npcworld.shredding import FORGOTTEN, keys_for
from tests.infra import BrokerForTests

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SECRET = "my locker code is 4711 swordfish"


def _new(payload: EventPayload, tenant: str, world: str, *, npc: str | None = "isabella",
         cause: Envelope | None = None, at: datetime = T0) -> Envelope:
    return Envelope.new(payload, tenant_id=tenant, world_id=world, world_time=at, npc_id=npc, cause=cause)


async def _append(pool: AsyncConnectionPool, stream: str, *events: Envelope) -> None:
    async with pool.connection() as conn, conn.transaction():
        await UnitOfWork(conn, EventStore()).append(stream, list(events))


async def _chat(pool: AsyncConnectionPool, tenant: str, world: str, player: str, text: str) -> Envelope:
    """A chat as the services leave it: the line, the reply, the relationship, a memory and a retrieval."""
    said = _new(PlayerSpoke(player_id=player, text=text), tenant, world)
    await _append(pool, f"chat-{world}-isabella", said)
    replied = _new(NpcReplied(player_id=player, text=f"You said: {text}", in_reply_to=str(said.event_id),
                              provider="offline", heard=text), tenant, world, cause=said)
    rel = _new(RelationshipChanged(other_id=f"player:{player}", familiarity=1, sentiment=5.5,
                                   summary=f'they last said: "{text}"'), tenant, world, cause=said)
    await _append(pool, f"chat-{world}-isabella", replied, rel)
    memory_id = str(uuid.uuid4())
    recorded = MemoryRecorded(memory_id=memory_id, kind="observation", importance=3, created_at=T0,
                              description=f'A player ({player}) said: "{text}"', subject=f"player {player}",
                              embedding_model="m")
    memory = _new(recorded, tenant, world, cause=replied)
    access = _new(MemoriesAccessed(memory_ids=(memory_id,), accessed_at=T0, query=text), tenant, world,
                  cause=said)
    await _append(pool, f"memory-{world}-isabella", memory, access)
    return said


async def _world(pool: AsyncConnectionPool) -> tuple[str, str]:
    tenant, world = f"t-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    await _append(pool, world_stream(world), _new(WorldCreated(name="Town", start_time=T0), tenant, world,
                                                  npc=None))
    return tenant, world


async def _texts(pool: AsyncConnectionPool, tenant: str, world: str) -> dict[str, list[str]]:
    """Every sealed field of the world's events as a reader sees it, by event type."""
    async with pool.connection() as conn:
        stored = await EventStore().read_all(conn, 0, 1000, EventFilter(tenant_id=tenant, world_id=world))
    fields = {"PlayerSpoke": ("text",), "NpcReplied": ("text", "heard"), "RelationshipChanged": ("summary",),
              "MemoryRecorded": ("description",), "MemoriesAccessed": ("query",)}
    out: dict[str, list[str]] = {}
    for s in stored:
        for name in fields.get(s.envelope.type, ()):
            out.setdefault(s.envelope.type, []).append(getattr(s.envelope.payload, name))
    return out


async def _raw(pool: AsyncConnectionPool, tenant: str) -> str:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT string_agg(payload::text, ' ') FROM events WHERE tenant_id = %s",
                                 (tenant,))
        row = await cur.fetchone()
    return str(row[0] if row else "")


async def test_a_players_words_are_sealed_at_rest_and_read_back_while_its_key_exists(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    await _chat(pool, tenant, world, "p1", SECRET)
    assert "swordfish" not in await _raw(pool, tenant)
    texts = await _texts(pool, tenant, world)
    assert texts["PlayerSpoke"] == [SECRET] and texts["MemoriesAccessed"] == [SECRET]
    assert texts["NpcReplied"] == [f"You said: {SECRET}", SECRET]
    assert SECRET in texts["RelationshipChanged"][0] and SECRET in texts["MemoryRecorded"][0]


async def test_forgetting_a_player_leaves_its_words_unreadable_everywhere_and_others_untouched(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    other_tenant, other_world = await _world(pool)
    said = await _chat(pool, tenant, world, "p1", SECRET)
    await _chat(pool, tenant, world, "p2", "the lanterns are lovely")
    await _chat(pool, other_tenant, other_world, "p1", SECRET)  # the same id, another studio's player
    await _call_record(pool, tenant, world, said.event_id)

    async with pool.connection() as conn, conn.transaction():
        done = await forget_player_data(conn, tenant, "p1")
    assert done.first_time and [w for w, _ in done.worlds] == [world] and done.calls_redacted == 1

    texts = await _texts(pool, tenant, world)
    assert texts["PlayerSpoke"] == [FORGOTTEN, "the lanterns are lovely"]
    assert texts["MemoriesAccessed"] == [FORGOTTEN, "the lanterns are lovely"]
    assert texts["NpcReplied"] == [FORGOTTEN, FORGOTTEN, "You said: the lanterns are lovely",
                                   "the lanterns are lovely"]
    assert texts["MemoryRecorded"][0] == FORGOTTEN and "lanterns" in texts["MemoryRecorded"][1]
    assert (await _texts(pool, other_tenant, other_world))["PlayerSpoke"] == [SECRET]
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT request::text, response::text, request_hash FROM llm_calls"
                                 " WHERE tenant_id = %s", (tenant,))
        assert await cur.fetchall() == [("[]", '{"forgotten": true}', "forgotten")]
        assert await keys_for(conn, tenant, ["p1"]) == {"p1": None}  # no new key for a forgotten player

    # A line still on its way when the player was forgotten is stored as forgotten, not under a new key.
    await _chat(pool, tenant, world, "p1", "one more thing about swordfish")
    assert "swordfish" not in json.dumps(await _texts(pool, tenant, world))


async def test_a_fork_inherits_sealed_words_and_is_told_of_a_player_forgotten_after_its_fork_point(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    await _chat(pool, tenant, world, "p1", SECRET)
    async with pool.connection() as conn, conn.transaction():
        await fork_world(conn, tenant_id=tenant, source_world_id=world, at=T0, new_world_id=f"{world}-a")
    # The source world goes on, so it is told of the forgetting after the fork point below.
    later = RelationshipChanged(other_id="sam", familiarity=1, sentiment=6)
    await _append(pool, f"chat-{world}-isabella", _new(later, tenant, world, at=T0 + timedelta(hours=1)))
    inherited = await _texts(pool, tenant, f"{world}-a")
    assert inherited["PlayerSpoke"] == [SECRET] and inherited["MemoriesAccessed"] == [SECRET]
    assert "swordfish" not in await _raw(pool, tenant)  # sealed at rest, the retrieval's included
    async with pool.connection() as conn, conn.transaction():
        done = await forget_player_data(conn, tenant, "p1")
    # Both worlds talked with p1 and are told; what the fork inherits reads forgotten too (the same rows).
    assert sorted(w for w, _ in done.worlds) == [world, f"{world}-a"]
    assert (await _texts(pool, tenant, f"{world}-a"))["PlayerSpoke"] == [FORGOTTEN]
    # A fork made now of the source as it was before the forgetting is told in its own log.
    async with pool.connection() as conn, conn.transaction():
        await fork_world(conn, tenant_id=tenant, source_world_id=world, at=T0, new_world_id=f"{world}-b")
        stored = await EventStore().read_all(conn, 0, 100, EventFilter(
            tenant_id=tenant, world_id=f"{world}-b", types=("PlayerForgotten", "PlayerSpoke")))
    assert [(s.envelope.type, getattr(s.envelope.payload, "text", None)) for s in stored] == [
        ("PlayerSpoke", FORGOTTEN), ("PlayerForgotten", None)]


async def test_the_relay_publishes_words_opened_and_a_forgotten_players_as_forgotten(
    pool: AsyncConnectionPool, broker: BrokerForTests,
) -> None:
    tenant, world = await _world(pool)
    said = await _chat(pool, tenant, world, "p1", SECRET)
    relay = OutboxRelay(pool, broker.bootstrap)
    producer_sent = await _published_text(pool, relay, broker, said.event_id)
    assert producer_sent == SECRET
    async with pool.connection() as conn, conn.transaction():
        await forget_player_data(conn, tenant, "p1")
    # A broker that lost everything is refilled from the store: now without the words.
    assert await _published_text(pool, relay, broker, said.event_id, republish=True) == FORGOTTEN


async def _published_text(pool: AsyncConnectionPool, relay: OutboxRelay, broker: BrokerForTests,
                          event_id: uuid.UUID, *, republish: bool = False) -> str:
    from npcworld.messaging.kafka import ensure_topics, make_producer

    await ensure_topics(broker.bootstrap)
    producer = make_producer(broker.bootstrap, "shredding-test")
    await producer.start()
    try:
        if republish:
            await relay.republish(producer)
        else:
            while await relay.drain_once(producer):
                pass
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(DIALOGUE.name, bootstrap_servers=broker.bootstrap,
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer.seek_to_beginning()
        found: list[str] = []
        for _ in range(50):
            batch = await consumer.getmany(timeout_ms=200)
            found += [json.loads(r.value)["payload"]["text"] for rs in batch.values() for r in rs
                      if json.loads(r.value)["event_id"] == str(event_id)]
            if len(found) == (2 if republish else 1):
                return found[-1]
        raise AssertionError(f"event {event_id} was not published ({found})")
    finally:
        await consumer.stop()


async def _call_record(pool: AsyncConnectionPool, tenant: str, world: str, cause: uuid.UUID) -> None:
    """A model call made while the chat was handled, its prompt holding the player's words."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO llm_calls (tenant_id, world_id, npc_id, prompt_kind, template_version, request_hash,"
            " model, provider, parameters, request, response, outcome, cause_event_id, inputs)"
            " VALUES (%s, %s, 'isabella', 'player_reply', 3, 'abc', 'offline', 'offline', '{}', %s, %s, 'ok',"
            " %s, %s)",
            (tenant, world, json.dumps([{"role": "user", "content": SECRET}]), json.dumps({"reply": "hi"}),
             cause, json.dumps({"text": SECRET})),
        )
