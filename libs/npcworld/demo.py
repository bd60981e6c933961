"""The demo tenant and a small demo world, created through the public API when ``npcworld run`` starts."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import psycopg

__all__ = ["DEMO_NPCS", "seed_demo"]

DEMO_NPCS = (
    {"npc_id": "marta", "name": "Marta Quill", "age": 34, "traits": ["warm", "organised"],
     "occupation": "owner of the Lantern Cafe", "location": "Lantern Cafe",
     "seed": "Marta Quill runs the Lantern Cafe on Mill Street; Marta wants to host a party for the town on "
             "February 14 from 5 to 7 pm at the cafe; Marta is friends with Tobias"},
    {"npc_id": "tobias", "name": "Tobias Wren", "age": 52, "traits": ["earnest", "talkative"],
     "occupation": "pharmacist", "location": "Wren Pharmacy",
     "seed": "Tobias Wren keeps the pharmacy; Tobias is running for mayor of Brindle Hollow; "
             "Tobias buys coffee from Marta every morning"},
    {"npc_id": "ines", "name": "Ines Varga", "age": 27, "traits": ["curious", "shy"],
     "occupation": "painter", "location": "Varga Studio",
     "seed": "Ines Varga paints the river in the mornings; Ines is new in Brindle Hollow and knows nobody yet"},
)


def seed_demo(database_url: str, port: int, home: Path = Path(".npcworld")) -> str:
    """Create (once) the demo tenant and world; returns lines to show the user."""
    key_file = home / "demo-api-key"
    if not key_file.exists():
        key_file.write_text(asyncio.run(_create_tenant(database_url)))
        key_file.chmod(0o600)
    key = key_file.read_text().strip()
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    _wait_ready(base)
    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        if client.get("/v1/worlds/brindle-hollow").status_code == 404:
            client.post("/v1/worlds", json={"world_id": "brindle-hollow", "name": "Brindle Hollow",
                                            "start_time": "2023-02-13T07:00:00+00:00"}).raise_for_status()
            for npc in DEMO_NPCS:
                client.post("/v1/worlds/brindle-hollow/npcs", json=npc).raise_for_status()
    return (f"demo world 'brindle-hollow' with {len(DEMO_NPCS)} NPCs; demo API key in {key_file}\n"
            f"  curl -H 'Authorization: Bearer {key}' {base}/v1/worlds/brindle-hollow/events")


async def _create_tenant(database_url: str) -> str:
    from services.gateway.repository import GatewayRepository

    async with await psycopg.AsyncConnection.connect(database_url) as conn, conn.transaction():
        _, secret = await GatewayRepository(conn).create_tenant("demo")
    return secret


def _wait_ready(base: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"the gateway did not become ready at {base} within {timeout:.0f}s")
