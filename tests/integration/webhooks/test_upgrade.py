"""Webhooks registered before subscriptions were events keep working after the upgrade (migration 0114):
each live one gets a WebhookRegistered that keeps where it started, the dispatcher's row and claim, and its
secret moves out of the gateway's table; a deleted one stays only in the gateway's log."""

from __future__ import annotations

import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from npcworld.contracts import ObservationMade, WebhookRegistered
from npcworld.db import MIGRATIONS_DIR, apply_migrations, open_pool
from npcworld.eventstore import EventStore
from npcworld.projection import differences
from services.webhooks.repository import DispatchRepository
from services.webhooks.subscriptions import PROJECTION
from tests.infra import PostgresForTests, with_database

pytestmark = pytest.mark.integration

_FIRST_NEW = "0114_webhook_subscriptions.sql"
T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)


def _until(directory: Path) -> Path:
    directory.mkdir()
    for path in sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql")):
        if path.name >= _FIRST_NEW:
            break
        shutil.copy(path, directory / path.name)
    return directory


def _observe(conn: psycopg.Connection, world: str, version: int) -> uuid.UUID:
    event_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,"
        " world_time, recorded_at, correlation_id, payload) VALUES (%s, %s, %s, 'ObservationMade', 1,"
        " 'studio', %s, 'ada', %s, now(), %s, %s)",
        (event_id, f"studio/perception-{world}-ada", version, world, T0, event_id,
         ObservationMade(description=f"seen {version}", source="studio").model_dump_json()),
    )
    return event_id


def _hook(conn: psycopg.Connection, hook: str, *, deleted: bool = False, active: bool = True) -> None:
    conn.execute(
        "INSERT INTO gw_webhooks (webhook_id, tenant_id, world_id, url, event_types, secret, description,"
        " active, from_seq, deleted_at) VALUES (%s, 'studio', 'town', 'https://hooks.example/x',"
        " '{ObservationMade}', %s, 'old', %s, (SELECT coalesce(max(seq), 0) FROM events),"
        " CASE WHEN %s THEN now() END)",
        (hook, f"whsec_{hook}", active, deleted),
    )


async def test_webhooks_from_before_the_events_keep_their_start_secret_and_deliveries(
    postgres: PostgresForTests, tmp_path: Path
) -> None:
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = with_database(postgres.url, name)
    apply_migrations(url, _until(tmp_path / "before"))
    with psycopg.connect(url) as conn:
        _observe(conn, "town", 1)  # before the webhook: not for it
        _hook(conn, "wh-live")
        _hook(conn, "wh-paused", active=False)
        _hook(conn, "wh-gone", deleted=True)
        waiting = _observe(conn, "town", 2)  # stored after it, not yet fanned out at the upgrade

    assert apply_migrations(url)[0] == _FIRST_NEW

    pool = await open_pool(url, min_size=1, max_size=2)
    try:
        async with pool.connection() as aconn:
            rows = await (await aconn.execute(
                "SELECT webhook_id, active, from_seq FROM wh_subscriptions ORDER BY webhook_id")).fetchall()
            secrets = await (await aconn.execute(
                "SELECT owner_id, secret FROM egress_secrets ORDER BY owner_id")).fetchall()
            registered = await EventStore().read_stream(aconn, "studio", "webhook-wh-live")
        assert rows == [("wh-live", True, 1), ("wh-paused", False, 1)]
        assert ("wh-live", "whsec_wh-live") in secrets
        [event] = registered
        payload = event.envelope.payload
        assert isinstance(payload, WebhookRegistered)
        assert payload.after_seq == 1 and payload.subscription.description == "old"

        async with pool.connection() as aconn, aconn.transaction():
            await DispatchRepository(aconn).fan_out(1000)
        async with pool.connection() as aconn:
            cur = await aconn.execute("SELECT webhook_id, event_id FROM wh_deliveries")
            assert await cur.fetchall() == [("wh-live", waiting)]
        assert await differences(pool, PROJECTION) == []  # the backfilled events rebuild the same rows
    finally:
        await pool.close()
