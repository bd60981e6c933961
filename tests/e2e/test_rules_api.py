"""The rules API: a world's rule set is stored whole, read back, checked on the way in, and another
tenant's key can neither read nor set it."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import httpx

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


async def test_rules_are_set_read_back_validated_and_private(
    client_factory: MakeClient, gateway_url: str
) -> None:
    client, stranger = await client_factory(), await client_factory()
    secret = (await client.post("/v1/keys", json={"name": "viewer", "scopes": ["read"]})).json()["secret"]
    auth = {"Authorization": f"Bearer {secret}"}
    reader = httpx.AsyncClient(base_url=gateway_url, timeout=10, headers=auth)
    w = f"rules-{uuid.uuid4().hex[:8]}"
    created = await client.post("/v1/worlds", json={"world_id": w, "name": "Mine", "start_time": T0})
    assert created.status_code == 201
    assert (await client.get(f"/v1/worlds/{w}/rules")).json() == {"rules": []}

    rules = [
        {"rule_id": "mine-closed", "places": [f"{w}:Mine"], "reason": "the mine collapsed in 1891"},
        {"rule_id": "no-arson", "words": ["burn"], "verdict": "replace", "replacement": "sweep the floor"},
    ]
    put = await client.put(f"/v1/worlds/{w}/rules", json={"rules": rules})
    assert put.status_code == 202 and put.json()["event_id"]
    got = (await reader.get(f"/v1/worlds/{w}/rules")).json()["rules"]
    assert [(r["rule_id"], r["verdict"]) for r in got] == [("mine-closed", "veto"), ("no-arson", "replace")]
    assert got[0]["reason"] == "the mine collapsed in 1891"

    twice = await client.put(f"/v1/worlds/{w}/rules", json={"rules": [rules[0], rules[0]]})
    assert twice.status_code == 422 and "distinct" in twice.text
    empty_replace = await client.put(f"/v1/worlds/{w}/rules",
                                     json={"rules": [{"rule_id": "x", "verdict": "replace"}]})
    assert empty_replace.status_code == 422 and "replacement" in empty_replace.text
    assert (await reader.put(f"/v1/worlds/{w}/rules", json={"rules": []})).status_code == 403
    assert (await stranger.get(f"/v1/worlds/{w}/rules")).status_code == 404
    assert (await stranger.put(f"/v1/worlds/{w}/rules", json={"rules": []})).status_code == 404

    assert (await client.put(f"/v1/worlds/{w}/rules", json={"rules": []})).status_code == 202
    assert (await client.get(f"/v1/worlds/{w}/rules")).json() == {"rules": []}
    await reader.aclose()
