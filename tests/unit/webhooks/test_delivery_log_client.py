"""The gateway's client of the delivery log names tenant, world and subscription in every call, and maps the
webhooks service's answers: 404 is not found, 5xx or no answer is transient (the gateway's 503)."""

from __future__ import annotations

import httpx
import pytest

from npcworld.delivery_log import HttpDeliveryLog
from npcworld.errors import NotFoundError, PermanentError, TransientError

SCOPE = ("t1", "town", "wh-1")
DELIVERY = {"delivery_id": 7, "webhook_id": "wh-1", "event_id": "01a207d2-e747-7000-b7a6-fb946f8fc356",
            "seq": 42, "event_type": "WorldTicked", "status": "failed", "attempts": 8,
            "next_attempt_at": "2026-01-01T00:00:00Z", "last_status_code": 503, "last_error": "HTTP 503",
            "created_at": "2026-01-01T00:00:00Z", "delivered_at": None}


def _log(answer: httpx.Response | Exception, seen: list[httpx.Request]) -> HttpDeliveryLog:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = httpx.AsyncClient(transport=httpx.MockTransport(handle), base_url="http://webhooks")
    return HttpDeliveryLog("http://webhooks", client=client)


async def test_every_call_names_the_scope_and_reads_the_views() -> None:
    seen: list[httpx.Request] = []
    [view] = await _log(httpx.Response(200, json=[DELIVERY]), seen).deliveries(SCOPE, "failed", 3, 50)
    assert view.delivery_id == 7 and view.status == "failed"
    again = await _log(httpx.Response(200, json=DELIVERY), seen).redeliver(SCOPE, 7)
    assert again.seq == 42
    assert [(r.method, r.url.path) for r in seen] == [
        ("GET", "/internal/v1/deliveries"), ("POST", "/internal/v1/deliveries/7/redeliver")]
    assert dict(seen[0].url.params) == {"tenant_id": "t1", "world_id": "town", "webhook_id": "wh-1",
                                        "after": "3", "limit": "50", "status": "failed"}
    assert all(r.url.params["tenant_id"] == "t1" for r in seen)


@pytest.mark.parametrize(("answer", "error"), [
    (httpx.Response(404, json={"title": "Not found", "detail": "delivery 7 not found"}), NotFoundError),
    (httpx.Response(401, json={"title": "Unauthorized"}), PermanentError),
    (httpx.Response(503, text="down"), TransientError),
    (httpx.ConnectError("refused"), TransientError),
])
async def test_answers_map_to_the_errors_the_gateway_turns_into_problems(
    answer: httpx.Response | Exception, error: type[Exception]
) -> None:
    with pytest.raises(error):
        await _log(answer, []).delivery(SCOPE, 7)
