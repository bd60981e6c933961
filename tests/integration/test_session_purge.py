"""Expired player session tokens are deleted by the gateway's periodic purge; expired API keys stay listed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from services.gateway.repository import KeyRepository

pytestmark = pytest.mark.integration


async def test_expired_sessions_are_purged_and_live_ones_and_expired_keys_are_kept(
    pool: AsyncConnectionPool,
) -> None:
    past, future = datetime.now(UTC) - timedelta(minutes=1), datetime.now(UTC) + timedelta(hours=1)
    async with pool.connection() as conn:
        keys = KeyRepository(conn)
        tenant = await keys.create_tenant("purge")
        made = {
            "expired session": await keys.create_key(tenant.tenant_id, "s1", ("chat",), worlds=("w",),
                                                     expires_at=past, player_id="p1"),
            "live session": await keys.create_key(tenant.tenant_id, "s2", ("chat",), worlds=("w",),
                                                  expires_at=future, player_id="p2"),
            "expired key": await keys.create_key(tenant.tenant_id, "k", ("read",), expires_at=past),
        }
        assert await keys.find_key(made["expired session"][1]) is None  # it no longer authenticates

        await keys.purge_expired_sessions()

        cur = await conn.execute("SELECT name FROM gw_api_keys WHERE tenant_id = %s ORDER BY name",
                                 (tenant.tenant_id,))
        assert [r[0] for r in await cur.fetchall()] == ["k", "s2"]
        assert await keys.find_key(made["live session"][1]) is not None
