"""The demo tenant and the demo town, created through the public API when ``npcworld run`` starts.

The town is the built-in ``brindle-hollow`` template (25 NPCs); its clock is resumed in stepped mode, so
it runs as fast as the pipeline digests each step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

__all__ = ["DEMO_TEMPLATE", "DEMO_WORLD", "demo_tenant", "seed_demo"]

DEMO_WORLD = "brindle-hollow"
DEMO_TEMPLATE = "brindle-hollow"


def seed_demo(database_url: str, port: int, home: Path = Path(".npcworld")) -> str:
    """Create (once) the demo tenant and town, and start its clock; returns lines to show the user."""
    key_file = home / "demo-api-key"
    if not key_file.exists():
        key_file.write_text(asyncio.run(_create_tenant(database_url)))
        key_file.chmod(0o600)
    key = key_file.read_text().strip()
    (home / "demo-tenant").write_text(asyncio.run(_tenant_of(database_url, key)))
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    _wait_ready(base)
    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        existing = client.get(f"/v1/worlds/{DEMO_WORLD}")
        if existing.status_code == 200 and existing.json().get("template") != DEMO_TEMPLATE:
            return (f"demo world '{DEMO_WORLD}' exists from an older version without the town template; "
                    f"its clock is not started (delete {home} to get the 25-NPC town)")
        if existing.status_code == 404:
            client.post(
                "/v1/worlds",
                json={
                    "world_id": DEMO_WORLD,
                    "name": "Brindle Hollow",
                    "start_time": "2023-02-13T07:00:00+00:00",
                    "template": DEMO_TEMPLATE,
                },
            ).raise_for_status()
        _wait_for(lambda: client.get(f"/v1/worlds/{DEMO_WORLD}/clock").status_code == 200, "the town to load")
        client.post(
            f"/v1/worlds/{DEMO_WORLD}/clock", json={"paused": False, "mode": "stepped"}
        ).raise_for_status()
    return (
        f"demo town '{DEMO_WORLD}' (template {DEMO_TEMPLATE}, 25 NPCs) running; demo API key in {key_file}\n"
        f"  curl -H 'Authorization: Bearer {key}' {base}/v1/worlds/{DEMO_WORLD}/npcs/marta/state"
    )


async def _create_tenant(database_url: str) -> str:
    from services.gateway.repository import GatewayRepository

    async with await psycopg.AsyncConnection.connect(database_url) as conn, conn.transaction():
        _, secret = await GatewayRepository(conn).create_tenant("demo")
    return secret


def demo_tenant(home: Path) -> str | None:
    """The demo tenant's id once ``seed_demo`` has run (world ids are per tenant: another tenant may have a
    world of the same id)."""
    path = home / "demo-tenant"
    return path.read_text().strip() or None if path.exists() else None


async def _tenant_of(database_url: str, key: str) -> str:
    from services.gateway.repository import GatewayRepository

    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        found = await GatewayRepository(conn).find_key(key)
    if found is None:
        raise RuntimeError("the demo API key is unknown to this database (delete the data dir to start over)")
    return found.tenant_id


def _wait_for(ready: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.3)
    raise TimeoutError(f"timed out waiting for {what}")


def _wait_ready(base: str, timeout: float = 60) -> None:
    def ready() -> bool:
        try:
            return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    _wait_for(ready, f"the gateway at {base}", timeout)
