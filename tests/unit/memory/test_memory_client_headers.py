"""What the memory client tells the memory service about a call: the lane of the event its caller handles and,
for a call made inside a consumer's transaction, that a writer waits for it (served at once, whatever its
lane: the writer holds its locks, planning the NPC's, until the answer comes)."""

from __future__ import annotations

import httpx

from npcworld.lanes import LANE_HEADER, WRITER_HEADER, handling_lane
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.slow_calls import in_transaction


async def _headers_of_a_call() -> httpx.Headers:
    seen: list[httpx.Headers] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(200, json=[])

    client = httpx.AsyncClient(base_url="http://memory", transport=httpx.MockTransport(answer))
    reader = HttpMemoryReader("http://memory", client=client)
    await reader.recent("t", "w", "ada")
    await client.aclose()
    return seen[0]


async def test_a_call_for_ingest_says_its_lane_and_no_writer() -> None:
    with handling_lane("ingest"):
        headers = await _headers_of_a_call()
    assert headers[LANE_HEADER] == "ingest" and WRITER_HEADER not in headers


async def test_a_call_made_inside_a_transaction_says_which_consumer_waits() -> None:
    with handling_lane("ingest"), in_transaction("planning"):
        headers = await _headers_of_a_call()
    assert headers[LANE_HEADER] == "ingest" and headers[WRITER_HEADER] == "planning"
