"""A database written before ids became each tenant's own upgrades with nothing lost: its streams become their
tenant's (and keep their versions), its world_state and perception rows their tenant, and work held
for a step or a job is recorded as held work."""

from __future__ import annotations

import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from npcworld.contracts import NpcCreated, WorldCreated
from npcworld.db import MIGRATIONS_DIR, apply_migrations
from npcworld.eventstore.store import EventStore
from tests.infra import PostgresForTests, with_database

pytestmark = pytest.mark.integration

_FIRST_NEW = "0095_tenant_scoped_worlds.sql"
T0 = datetime(2023, 2, 13, 7, 0, tzinfo=UTC)


def _until(directory: Path, first_new: str) -> Path:
    """A copy of the migrations before ``first_new``: the schema of the release before it."""
    directory.mkdir()
    for path in sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql")):
        if path.name >= first_new:
            break
        shutil.copy(path, directory / path.name)
    return directory


def _database_before(postgres: PostgresForTests, tmp_path: Path, first_new: str) -> str:
    """A new database with the schema of the release before ``first_new``; its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = with_database(postgres.url, name)
    apply_migrations(url, _until(tmp_path / "before", first_new))
    return url


def _old_world(conn: psycopg.Connection, tenant: str, world: str) -> list[uuid.UUID]:
    """What the release before wrote for a world with one NPC: stream names without the tenant, read-model
    rows keyed by world alone, a held step write and a pending reflection run."""
    created = WorldCreated(name="Town", start_time=T0)
    npc = NpcCreated(npc_id="ada", name="Ada")
    ids = [uuid.uuid4(), uuid.uuid4()]
    for version, (event_id, payload) in enumerate(zip(ids, (created, npc), strict=True), start=1):
        conn.execute(
            "INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id,"
            " npc_id, world_time, recorded_at, correlation_id, payload)"
            " VALUES (%s, %s, %s, %s, 1, %s, %s, %s, %s, now(), %s, %s)",
            (event_id, f"world-{world}", version, payload.event_type, tenant, world,
             "ada" if version == 2 else None, T0, event_id, payload.model_dump_json()),
        )
    conn.execute("INSERT INTO pc_worlds (world_id, tenant_id, definition, defined_by)"
                 " VALUES (%s, %s, '{}', %s)", (world, tenant, ids[0]))
    conn.execute("INSERT INTO pc_npcs (world_id, npc_id, tenant_id, name) VALUES (%s, 'ada', %s, 'Ada')",
                 (world, tenant))
    conn.execute("INSERT INTO pc_objects (world_id, path, state) VALUES (%s, %s, 'idle')",
                 (world, f"{world}:a:b:c"))
    conn.execute("INSERT INTO pc_seen (world_id, npc_id, entity, description) VALUES (%s, 'ada', 'x', 'y')",
                 (world,))
    conn.execute("INSERT INTO pc_known_places (world_id, npc_id, path) VALUES (%s, 'ada', %s)",
                 (world, f"{world}:a:b"))
    conn.execute(
        "INSERT INTO memory_held (event_id, tenant_id, world_id, world_time, npc_id, type, envelope)"
        " VALUES (%s, %s, %s, %s, 'ada', 'ObservationMade', '{}')", (uuid.uuid4(), tenant, world, T0))
    conn.execute("INSERT INTO reflection_npcs (tenant_id, world_id, npc_id, pending_run)"
                 " VALUES (%s, %s, 'ada', 1)", (tenant, world))
    return ids


async def test_an_older_database_upgrades_with_nothing_lost(
    postgres: PostgresForTests, tmp_path: Path
) -> None:
    url = _database_before(postgres, tmp_path, _FIRST_NEW)
    tenant, world = "studio-a", "town"
    with psycopg.connect(url) as conn:
        ids = _old_world(conn, tenant, world)

    applied = apply_migrations(url)
    assert applied[0] == _FIRST_NEW

    with psycopg.connect(url) as conn:
        streams = conn.execute("SELECT stream_id, version FROM events ORDER BY seq").fetchall()
        keyed = {t: conn.execute(f"SELECT count(*) FROM {t} WHERE tenant_id = %s AND world_id = %s",
                                 (tenant, world)).fetchone()[0]  # type: ignore[index]
                 for t in ("pc_worlds", "pc_npcs", "pc_objects", "pc_seen", "pc_known_places")}
        held = conn.execute("SELECT consumer, until FROM held_work WHERE tenant_id = %s ORDER BY consumer",
                            (tenant,)).fetchall()
    # Migration 0095 gave stream names their tenant's prefix; 0124 keys a stream by tenant and name instead.
    assert streams == [(f"world-{world}", 1), (f"world-{world}", 2)]
    assert keyed == dict.fromkeys(keyed, 1)
    assert held == [("memory", "step"), ("reflection", "job")]

    # The store reads the renamed stream under its old name, and appends continue its versions.
    async with await psycopg.AsyncConnection.connect(url) as conn:
        stored = await EventStore().read_stream(conn, tenant, f"world-{world}")
        assert [s.envelope.event_id for s in stored] == ids and stored[0].stream_id == f"world-{world}"
        assert await EventStore().stream_version(conn, tenant, f"world-{world}") == 2


async def test_streams_stored_under_their_tenants_prefix_upgrade_to_keyed_streams(
    postgres: PostgresForTests, tmp_path: Path
) -> None:
    """Migration 0124: names lose the tenant prefix (and an NPC's memory stream the tenant inside it), keep
    their versions, and appends continue them; an event's trace reads back as it was stored (0125)."""
    url = _database_before(postgres, tmp_path, "0124_events_world_key.sql")
    tenant, world = "studio-a", "town"
    parent = "00-4ea421c4b51b0be50b47a3fdeb570c0c-8bdf0db28eea2777-01"
    written = {f"{tenant}/world-{world}": WorldCreated(name="Town", start_time=T0),
               f"{tenant}/memory:{tenant}:{world}:ada": NpcCreated(npc_id="ada", name="Ada")}
    with psycopg.connect(url) as conn:
        for stream, payload in written.items():
            conn.execute(
                "INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id,"
                " world_time, recorded_at, correlation_id, trace, payload)"
                " VALUES (%s, %s, 1, %s, 1, %s, %s, %s, now(), %s, %s, %s)",
                (uuid.uuid4(), stream, payload.event_type, tenant, world, T0, uuid.uuid4(),
                 f'{{"traceparent": "{parent}"}}', payload.model_dump_json()))

    applied = apply_migrations(url)
    assert applied[0] == "0124_events_world_key.sql"

    with psycopg.connect(url) as conn:
        streams = conn.execute("SELECT stream_id, version FROM events ORDER BY seq").fetchall()
    assert streams == [(f"world-{world}", 1), (f"memory:{world}:ada", 1)]
    async with await psycopg.AsyncConnection.connect(url) as conn:
        store = EventStore()
        [stored] = await store.read_stream(conn, tenant, f"memory:{world}:ada")
        assert stored.envelope.trace.traceparent == parent
        assert await store.stream_version(conn, tenant, f"world-{world}") == 1
        assert await store.stream_version(conn, "studio-b", f"world-{world}") == 0
        more = stored.envelope.model_copy(update={"event_id": uuid.uuid4()})
        await store.append(conn, f"memory:{world}:ada", [more], expected_version=1)
        again = await store.read_stream(conn, tenant, f"memory:{world}:ada")
        assert [s.version for s in again] == [1, 2]
        assert again[1].envelope.trace.traceparent == parent
        cur = await conn.execute(
            "SELECT trace::text, length(traceparent) FROM events ORDER BY seq DESC LIMIT 1")
        assert await cur.fetchone() == ("{}", 26)


async def test_memories_written_with_their_vectors_upgrade_to_one_vector_per_text_of_a_world(
    postgres: PostgresForTests, tmp_path: Path
) -> None:
    """Migration 0128: a world's vectors move to memory_vectors, one per text; the rows keep theirs only in a
    stream with an index of its own."""
    url = _database_before(postgres, tmp_path, "0128_memory_vectors_by_text.sql")
    rows = [("ada", False, "the oven is hot", "[1,0,0]"), ("bo", False, "the oven is hot", "[1,0,0]"),
            ("bo", False, "it rains", "[0,1,0]"), ("cy", True, "the oven is hot", "[1,0,0]")]
    with psycopg.connect(url) as conn:
        for key, (npc, own, text, vector) in enumerate(rows, start=1):
            conn.execute(
                "INSERT INTO memory_npcs (npc_key, tenant_id, world_id, npc_id, embedding_model,"
                " embedding_dims, memory_count, own_index) VALUES (%s, 'studio', 'town', %s, 'm', 3, 0, %s)"
                " ON CONFLICT (tenant_id, world_id, npc_id) DO NOTHING",
                (key, npc, own),
            )
            conn.execute(
                "INSERT INTO memories (memory_id, npc_key, kind, description, importance, created_at,"
                " embedding_model, embedding_dims, embedding, source_event_id)"
                " SELECT %s, npc_key, 'observation', %s, 3, %s, 'm', 3, %s::halfvec, %s FROM memory_npcs"
                " WHERE npc_id = %s",
                (uuid.uuid4(), text, T0, vector, uuid.uuid4(), npc),
            )

    assert apply_migrations(url)[0] == "0128_memory_vectors_by_text.sql"

    with psycopg.connect(url) as conn:
        shared = conn.execute(
            "SELECT text_key = memory_text_key('the oven is hot'), embedding::text FROM memory_vectors"
            " WHERE world_key = world_key('studio', 'town') AND model_key = memory_model_key('m')"
            " ORDER BY 2").fetchall()
        in_rows = conn.execute(
            "SELECT n.npc_id, n.in_row_vectors, m.embedding::text FROM memories AS m JOIN memory_npcs AS n"
            " USING (npc_key) ORDER BY 1, 3").fetchall()
    assert shared == [(False, "[0,1,0]"), (True, "[1,0,0]")]
    assert in_rows == [
        ("ada", False, None), ("bo", False, None), ("bo", False, None), ("cy", True, "[1,0,0]")
    ]


async def test_memory_access_indexes_become_those_of_the_streams_with_an_index_of_their_own(
    postgres: PostgresForTests, tmp_path: Path
) -> None:
    """Migration 0130: the access indexes over every stream go; a stream that already has its own HNSW index
    gets its own access indexes with it."""
    url = _database_before(postgres, tmp_path, "0130_memory_access_indexes_per_stream.sql")
    with psycopg.connect(url) as conn:
        for key, (npc, own) in enumerate((("ada", False), ("bo", True)), start=1):
            conn.execute(
                "INSERT INTO memory_npcs (npc_key, tenant_id, world_id, npc_id, embedding_model,"
                " embedding_dims, memory_count, own_index) VALUES (%s, 'studio', 'town', %s, 'm', 3, 0, %s)",
                (key, npc, own),
            )

    assert apply_migrations(url)[0] == "0130_memory_access_indexes_per_stream.sql"

    with psycopg.connect(url) as conn:
        indexes = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memory_access'"
                               " ORDER BY 1").fetchall()
    assert [i[0] for i in indexes] == [
        "memory_access_pkey", "memory_access_prior_npc_2", "memory_access_recency_npc_2"
    ]
