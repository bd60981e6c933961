"""An Idempotency-Key's answer is stored before it reaches the client: a retry sent the moment the answer
arrives is replayed that answer, never refused as "still in progress"."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from services.gateway import idempotency
from services.gateway.idempotency import IdempotencyMiddleware
from services.gateway.repository import Claimed
from tests.unit.gateway.fakes import FakePool


class _Record(SimpleNamespace):
    pass


class _Store:
    """gw_idempotency in a dict: (tenant, key) → record."""

    rows: dict[tuple[str, str], _Record] = {}

    def __init__(self, conn: object) -> None:
        pass

    async def claim(
        self, tenant: str, key: str, request: tuple[str, str, bytes], ttl: float, holder: str
    ) -> Any:
        if (tenant, key) in self.rows:
            return self.rows[(tenant, key)]
        method, path, body_hash = request
        self.rows[(tenant, key)] = _Record(method=method, path=path, body_hash=body_hash, status_code=None,
                                           headers={}, body=None)
        return Claimed(datetime.now(UTC))

    async def complete(
        self, tenant: str, key: str, status: int, headers: dict[str, str], body: bytes
    ) -> None:
        self.rows[(tenant, key)].__dict__.update(status_code=status, headers=headers, body=body)

    async def release(self, tenant: str, key: str) -> None:
        self.rows.pop((tenant, key), None)


async def _find_key(scope: Scope, secret: str) -> Any:
    return SimpleNamespace(tenant_id="studio")


@pytest.fixture(autouse=True)
def _fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    _Store.rows = {}
    monkeypatch.setattr(idempotency, "IdempotencyStore", _Store)
    monkeypatch.setattr(idempotency, "find_key", _find_key)


def _scope(key: str) -> Scope:
    state = SimpleNamespace(pool=FakePool(), settings=SimpleNamespace(gateway_idempotency_ttl_seconds=60),
                            holder=SimpleNamespace(name="gateway-test"))
    return {"type": "http", "method": "POST", "path": "/v1/worlds/w/npcs/marta/perceptions",
            "headers": [(b"idempotency-key", key.encode()), (b"authorization", b"Bearer secret")],
            "app": SimpleNamespace(state=state)}


def _receive(body: bytes) -> Receive:
    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}
    return receive


async def _accepting(scope: Scope, receive: Receive, send: Send) -> None:
    """The route: answers 202 in two body parts, as a streamed body would come."""
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": b'{"event_id": ', "more_body": True})
    await send({"type": "http.response.body", "body": b'"e-1"}', "more_body": False})


async def test_a_retry_sent_as_the_answer_arrives_is_replayed_that_answer() -> None:
    middleware = IdempotencyMiddleware(_accepting)
    body = json.dumps({"description": "the bell rang"}).encode()
    retried: list[Message] = []

    async def retry_at_once(message: Message) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            await middleware(_scope("k-1"), _receive(body), _collect(retried))

    await middleware(_scope("k-1"), _receive(body), retry_at_once)
    start, answer = retried
    assert start["status"] == 202 and (b"idempotent-replayed", b"true") in start["headers"]
    assert json.loads(answer["body"]) == {"event_id": "e-1"}


async def test_a_request_that_fails_on_our_side_sends_nothing_and_frees_its_key() -> None:
    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        raise RuntimeError("the route broke before its body")

    sent: list[Message] = []
    with pytest.raises(RuntimeError):
        await IdempotencyMiddleware(failing)(_scope("k-2"), _receive(b"{}"), _collect(sent))
    assert sent == [] and _Store.rows == {}


async def test_an_answer_whose_storing_fails_still_reaches_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(self: _Store, *args: object) -> None:
        raise OSError("the database went away")

    monkeypatch.setattr(_Store, "complete", broken)
    sent: list[Message] = []
    await IdempotencyMiddleware(_accepting)(_scope("k-3"), _receive(b"{}"), _collect(sent))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body", "http.response.body"]


def _collect(into: list[Message]) -> Send:
    async def send(message: Message) -> None:
        into.append(message)
    return send
