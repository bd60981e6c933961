"""A request's API key is looked up once: the idempotency layer (before routing) and the route's
authentication share the answer; another secret is looked up on its own."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from services.gateway import auth
from tests.unit.gateway.fakes import FakePool


class _Keys:
    asked: list[str] = []

    def __init__(self, conn: object) -> None:
        pass

    async def find_key(self, secret: str) -> Any:
        self.asked.append(secret)
        return SimpleNamespace(tenant_id="studio") if secret == "good" else None


@pytest.fixture(autouse=True)
def _fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    _Keys.asked = []
    monkeypatch.setattr(auth, "KeyRepository", _Keys)


def _scope() -> dict[str, Any]:
    return {"type": "http", "app": SimpleNamespace(state=SimpleNamespace(pool=FakePool()))}


async def test_the_idempotency_layer_and_the_route_share_one_lookup_of_the_key() -> None:
    scope = _scope()
    first = await auth.find_key(scope, "good")
    again = await auth.find_key(scope, "good")
    assert first is again and first.tenant_id == "studio"
    assert _Keys.asked == ["good"]


async def test_an_unknown_key_is_remembered_as_unknown_and_another_secret_is_looked_up() -> None:
    scope = _scope()
    assert await auth.find_key(scope, "bad") is None
    assert await auth.find_key(scope, "bad") is None
    assert (await auth.find_key(scope, "good")).tenant_id == "studio"
    assert _Keys.asked == ["bad", "good"]


async def test_each_request_looks_its_key_up_afresh() -> None:
    await auth.find_key(_scope(), "good")
    await auth.find_key(_scope(), "good")  # a revoked key stops working at the next request
    assert _Keys.asked == ["good", "good"]
