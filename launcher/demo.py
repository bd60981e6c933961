"""The demo tenant and the demo town, created through the public API when ``npcworld run`` starts.

The town is the built-in ``brindle-hollow`` template (25 NPCs) unless ``npcworld run --template`` names
another (a generated town's world is named after its template); its clock is resumed in stepped mode, so it
runs as fast as the pipeline digests each step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

__all__ = ["DEMO_TEMPLATE", "DEMO_WORLD", "demo_tenant", "demo_world", "seed_demo"]

DEMO_WORLD = "brindle-hollow"
DEMO_TEMPLATE = "brindle-hollow"


def demo_world(template: str) -> str:
    """The demo world's id: ``brindle-hollow`` for the demo town, else the template's name."""
    return DEMO_WORLD if template == DEMO_TEMPLATE else template


def seed_demo(
    database_url: str, port: int, home: Path = Path(".npcworld"), template: str = DEMO_TEMPLATE
) -> str:
    """Create (once) the demo tenant and town, and start its clock; returns lines to show the user."""
    from npcworld.templates import load_template

    town, world = load_template(template), demo_world(template)
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
        existing = client.get(f"/v1/worlds/{world}")
        if existing.status_code == 200 and existing.json().get("template") != template:
            return (f"demo world '{world}' exists from an older version without the town template; "
                    f"its clock is not started (delete {home} to get the 25-NPC town)")
        if existing.status_code == 404:
            client.post(
                "/v1/worlds",
                json={
                    "world_id": world,
                    "name": town.name,
                    "start_time": town.start_time.isoformat(),
                    "template": template,
                },
            ).raise_for_status()
        _wait_for(lambda: client.get(f"/v1/worlds/{world}/clock").status_code == 200, "the town to load", 600)
        client.post(
            f"/v1/worlds/{world}/clock", json={"paused": False, "mode": "stepped"}
        ).raise_for_status()
    return (
        f"demo town '{world}' (template {template}, {len(town.npcs)} NPCs) running; "
        f"demo API key in {key_file}\n"
        f"  curl -H 'Authorization: Bearer {key}' {base}/v1/worlds/{world}/npcs/{town.npcs[0].npc_id}/state"
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


def _wait_ready(base: str, timeout: float = 600) -> None:
    """Until the gateway answers /readyz: it is supervised (restarted if it exits), so a busy machine that
    starts it slowly only delays the demo town (giving up after a minute left a backend with no town)."""

    def ready() -> bool:
        try:
            return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    _wait_for(ready, f"the gateway at {base}", timeout)
