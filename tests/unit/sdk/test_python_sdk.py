"""The Python SDK's own logic, without a server: retry waits, the Idempotency-Key kept across retries,
typed errors, SSE parsing, webhook signatures (checked against the server's signer), and generated code
that matches its sources."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from npcworld_sdk import (
    APIConnectionError,
    Client,
    NotFoundError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    UnprocessableEntityError,
    WebhookSignatureError,
    parse_webhook,
    sign_webhook,
    verify_webhook,
)
from npcworld_sdk._sse import SSEParser

from services.webhooks.domain import signature_header

ROOT = Path(__file__).resolve().parents[3]
PROBLEM_422 = {
    "type": "about:blank", "title": "Unprocessable Content", "status": 422, "detail": "invalid request",
    "errors": [{"field": "name", "message": "must not be blank"}],
}


def _client(handler: httpx.MockTransport, attempts: int = 4) -> Client:
    retry = RetryPolicy(attempts=attempts, base_delay=0.001, max_delay=0.002)
    return Client("http://npcworld.test", "npcw_key", retry=retry, transport=handler)


def test_retries_wait_as_retry_after_says_else_back_off_doubling_and_give_up_after_the_attempts() -> None:
    policy = RetryPolicy(attempts=3, base_delay=0.5, max_delay=0.8, jitter=lambda: 1.0)
    assert policy.delay(0, "2") == 2.0
    assert (policy.delay(0), policy.delay(1), policy.delay(2)) == (0.5, 0.8, None)
    assert RetryPolicy(max_retry_after=5).delay(0, "120") is None
    assert RetryPolicy(jitter=lambda: 0.0).delay(1) == 0.25  # half of the 0.5 s backoff at least


def test_a_post_retried_after_503_and_429_sends_the_same_idempotency_key_each_time() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Idempotency-Key"])
        if len(seen) == 1:
            return httpx.Response(503, json={**PROBLEM_422, "status": 503}, headers={"Retry-After": "0"})
        if len(seen) == 2:
            return httpx.Response(429, json={**PROBLEM_422, "status": 429}, headers={"Retry-After": "0"})
        body = {"world_id": "w", "name": "W", "template": None, "start_time": None, "forked_from": None,
                "npc_count": 0}
        return httpx.Response(201, json=body)

    with _client(httpx.MockTransport(answer)) as client:
        world = client.create_world("W", datetime(2023, 2, 13, 7, tzinfo=UTC), world_id="w")
    assert world.world_id == "w" and len(seen) == 3 and len(set(seen)) == 1
    assert seen[0].startswith("sdk-")


def test_each_call_gets_its_own_key_unless_one_is_given() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Idempotency-Key"])
        return httpx.Response(202, json={"event_id": "e"})

    with _client(httpx.MockTransport(answer)) as client:
        for _ in range(2):
            client.set_clock("w", paused=True)
        client.set_clock("w", paused=True, idempotency_key="mine")
    assert seen[0] != seen[1] and seen[2] == "mine"


def test_error_answers_are_raised_as_their_status_class_with_the_problem_fields() -> None:
    answers = iter([
        httpx.Response(422, json=PROBLEM_422),
        httpx.Response(404, json={**PROBLEM_422, "status": 404, "title": "Not found", "errors": []}),
        httpx.Response(502, text="<html>bad gateway</html>"),
        httpx.Response(429, json={**PROBLEM_422, "status": 429}, headers={"Retry-After": "7"}),
    ])
    with _client(httpx.MockTransport(lambda _: next(answers)), attempts=1) as client:
        with pytest.raises(UnprocessableEntityError) as invalid:
            client.create_npc("w", "n", " ")
        with pytest.raises(NotFoundError):
            client.get_world("w")
        with pytest.raises(ServerError) as bad_gateway:
            client.get_world("w")
        with pytest.raises(RateLimitError) as limited:
            client.get_world("w")
    assert invalid.value.fields == ["name"] and invalid.value.errors[0].message == "must not be blank"
    assert bad_gateway.value.status == 502 and "bad gateway" in bad_gateway.value.detail
    assert limited.value.retry_after == 7.0


def test_no_answer_after_the_retries_is_a_connection_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with _client(httpx.MockTransport(refuse), attempts=2) as client, pytest.raises(APIConnectionError):
        client.tenant()


def test_pages_are_walked_by_cursor_until_the_last() -> None:
    def page(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        npc: dict[str, object] = {"age": None, "traits": [], "occupation": None, "location": None}
        if cursor is None:
            items, after = [{**npc, "npc_id": "a", "name": "A"}], "c1"
        else:
            items, after = [{**npc, "npc_id": "b", "name": "B"}], None
        return httpx.Response(200, json={"items": items, "next_cursor": after})

    with _client(httpx.MockTransport(page)) as client:
        assert [n.npc_id for n in client.iter_npcs("w")] == ["a", "b"]


def test_the_sse_parser_yields_an_event_at_its_blank_line_and_skips_comments_and_retry_hints() -> None:
    parser = SSEParser()
    lines = ["retry: 1000", "", ": keepalive", "id: 7", "event: NpcReplied", 'data: {"type": "NpcReplied",',
             'data: "payload": {"text": "hi"}}']
    assert [parser.feed(line) for line in lines] == [None] * len(lines)
    event = parser.feed("")
    assert event is not None and (event.seq, event.type, event.payload) == (7, "NpcReplied", {"text": "hi"})
    assert parser.last_id == "7"


def test_webhook_signatures_match_the_servers_and_forgeries_stale_or_missing_ones_are_refused() -> None:
    body = json.dumps({"event_id": "e1", "delivery_id": 4, "seq": 9, "type": "WorldTicked", "world_id": "w",
                       "event": {"type": "WorldTicked"}}).encode()
    assert sign_webhook("whsec_x", body, 1_700_000_000) == signature_header("whsec_x", 1_700_000_000, body)
    header = sign_webhook("whsec_x", body)
    delivery = parse_webhook("whsec_x", {"npcworld-signature": header}, body)
    assert (delivery.event_id, delivery.seq, delivery.type) == ("e1", 9, "WorldTicked")
    old = sign_webhook("whsec_x", body, 1_700_000_000)
    for secret, signed, sent, now in (
        ("whsec_y", header, body, None),
        ("whsec_x", header, body.replace(b"e1", b"e2"), None),
        ("whsec_x", old, body, 1_700_000_301),
        ("whsec_x", None, body, None),
    ):
        with pytest.raises(WebhookSignatureError):
            verify_webhook(secret, signed, sent, now=now)


@pytest.mark.parametrize("tool", ["generate_models.py", "unasync.py"])
def test_the_generated_sdk_modules_match_the_contract_and_the_async_client(tool: str) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "sdk" / "python" / "tools" / tool), "--check"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stderr


def test_forgetting_a_player_deletes_it_by_id_and_an_unknown_one_is_not_found() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.method == "DELETE"
        if request.url.path == "/v1/players/p1":
            done = {"player_id": "p1", "already_forgotten": False, "worlds": ["town"], "event_ids": ["e1"],
                    "llm_calls_redacted": 2}
            return httpx.Response(202, json=done)
        return httpx.Response(404, json={**PROBLEM_422, "status": 404, "title": "Not Found", "errors": []},
                              headers={"content-type": "application/problem+json"})

    with _client(httpx.MockTransport(answer)) as client:
        done = client.forget_player("p1")
        assert done.worlds == ["town"] and not done.already_forgotten
        with pytest.raises(NotFoundError):
            client.forget_player("nobody")
