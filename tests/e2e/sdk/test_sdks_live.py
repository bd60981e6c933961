"""Both SDKs against one live gateway: the Python SDK's every resource group, typed answers and errors,
pages, the event stream resumed after a break, retries that keep their Idempotency-Key, rate limits and
signed webhooks; the TypeScript SDK's own node tests; and each README's example, run as written."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid
from collections.abc import AsyncIterable, AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from npcworld_sdk import (
    AsyncClient,
    AuthenticationError,
    ChatChunk,
    Client,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ReplyOut,
    ReplyPending,
    RetryPolicy,
    StreamEvent,
    UnprocessableEntityError,
    WebhookSignatureError,
    parse_webhook,
)
from npcworld_sdk.models import ArenaDef, EventOut, NpcPatch, ObjectDef, SectorDef, TreeOut

from tests.e2e.sdk.conftest import OPERATOR_KEY, T0, TOWN, Backend
from tests.e2e.sdk.typescript import SDK as TYPESCRIPT_SDK
from tests.e2e.sdk.typescript import install_typescript_sdk, run
from tests.integration.dialogue.support import PARTY, seeded
from tests.integration.dialogue.support import Town as DialogueTown
from tests.polling import eventually

pytestmark = pytest.mark.integration
MORNING = datetime(2023, 2, 13, 8, tzinfo=UTC)
SDKS = Path(__file__).resolve().parents[3] / "sdk"
T = TypeVar("T")


def _id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def _world(sdk: AsyncClient, *npcs: str) -> str:
    world_id = _id("w")
    await sdk.create_world("Brindle Hollow", T0, world_id=world_id)
    for npc in npcs:
        await sdk.create_npc(world_id, npc, npc.title(), seed=PARTY if npc == "isabella" else "")
    return world_id


async def test_worlds_and_npcs_page_by_cursor_and_errors_arrive_typed(sdk: AsyncClient) -> None:
    world_id = await _world(sdk, "ana", "ben", "cid")
    page = await sdk.list_npcs(world_id, limit=2)
    assert [n.npc_id for n in page.items] == ["ana", "ben"] and page.next_cursor is not None
    assert [n.npc_id async for n in sdk.iter_npcs(world_id, page_size=2)] == ["ana", "ben", "cid"]
    assert world_id in [w.world_id async for w in sdk.iter_worlds(page_size=1)]
    assert (await sdk.get_world(world_id)).npc_count == 3
    fork = await sdk.fork_world(world_id, MORNING, new_world_id=_id("fork"))
    assert fork.forked_from == world_id

    with pytest.raises(ConflictError) as conflict:
        await sdk.create_world("Again", T0, world_id=world_id)
    assert conflict.value.status == 409 and conflict.value.fields == ["world_id"]
    with pytest.raises(UnprocessableEntityError) as invalid:
        await sdk.create_npc(world_id, "dee", "   ")
    assert invalid.value.fields == ["name"] and invalid.value.errors[0].message
    await sdk.delete_world(world_id)
    with pytest.raises(NotFoundError) as gone:
        await sdk.get_world(world_id)
    assert gone.value.problem.title == "Not found" and world_id in gone.value.detail


async def test_a_player_talks_to_an_npc_sync_and_async_and_the_chat_result_is_a_resource(
    sdk: AsyncClient, backend: Backend
) -> None:
    world_id = await _world(sdk, "isabella", "sam")
    town = DialogueTown(backend.tenant_id, world_id)
    await eventually(lambda: seeded(backend.stack, town, "isabella"), bool, timeout=60)

    reply = await sdk.chat(world_id, "isabella", "Any plans for tonight?", player_id="p1")
    assert "party" in reply.reply and reply.provider == "offline" and reply.memory_ids
    assert await sdk.chat_result(world_id, "isabella", reply.event_id) == reply

    sent = await sdk.send_chat(world_id, "isabella", "Hello again", player_id="p1")
    assert isinstance(sent, ReplyPending) and sent.status == "pending"
    later = await sdk.wait_for_reply(world_id, "isabella", sent.event_id, timeout=30)
    assert later.event_id == sent.event_id and later.reply

    def talk_sync() -> tuple[ReplyOut, list[str], StreamEvent]:
        # The sync client, in a thread: the services run on this event loop.
        with Client(backend.url, backend.key) as client:
            said = client.chat(world_id, "isabella", "What is at Hobbs Cafe?", player_id="p2")
            npcs = [n.npc_id for n in client.iter_npcs(world_id, page_size=1)]
            with client.stream_events(world_id, types=["NpcReplied"]) as stream:
                first = next(iter(stream))
        return said, npcs, first

    said, npcs, first = await asyncio.to_thread(talk_sync)
    assert "party" in said.reply and npcs == ["isabella", "sam"]
    assert first.type == "NpcReplied" and first.envelope["causation_id"] == reply.event_id
    interview = await sdk.interview(world_id, "isabella", "Any news?", interviewer="a reporter")
    assert isinstance(interview, ReplyOut) and "party" in interview.reply
    assert await sdk.relationships(world_id, "sam") == []
    thought = await sdk.inner_voice(world_id, "sam", "You will run for mayor")

    async def voiced() -> list[str]:
        return [e.event["event_id"] async for e in sdk.iter_events(world_id, types=["InnerVoiceGiven"])]

    assert await eventually(voiced, bool, timeout=30) == [thought.event_id]
    with pytest.raises(NotFoundError):
        await sdk.chat_result(world_id, "sam", reply.event_id)


async def test_perceptions_become_memories_that_retrieval_ranks_and_an_npc_without_plan_is_a_404(
    sdk: AsyncClient, backend: Backend
) -> None:
    world_id = await _world(sdk, "isabella")
    town = DialogueTown(backend.tenant_id, world_id)
    await eventually(lambda: seeded(backend.stack, town, "isabella"), bool, timeout=60)
    accepted = await sdk.perceive(world_id, "isabella", "the stove is burning", MORNING)

    async def observed() -> list[str]:
        return [m.description async for m in sdk.iter_memories(world_id, "isabella", kind="observation")]

    assert "the stove is burning" in " ".join(await eventually(observed, bool, timeout=30))
    found = await sdk.retrieve_memories(world_id, "isabella", "is something burning?", k=3)
    assert found and found[0].scores.total >= found[-1].scores.total
    assert accepted.event_id in {e.event["event_id"] async for e in sdk.iter_events(world_id)}
    with pytest.raises(NotFoundError) as no_plan:
        await sdk.plan(world_id, "isabella")
    assert "no plan" in no_plan.value.detail


async def test_a_reply_streams_in_chunks_sync_and_async_and_resumes_after_a_chunk(
    sdk: AsyncClient, backend: Backend
) -> None:
    sent = await sdk.send_chat(TOWN, "marta", "What are you baking today?", player_id="py-stream")
    parts = [p async for p in sdk.stream_chat(TOWN, "marta", sent.event_id)]
    *chunks, reply = parts
    assert isinstance(reply, ReplyOut) and reply.event_id == sent.event_id
    assert all(isinstance(c, ChatChunk) for c in chunks) and len(chunks) > 1
    assert "".join(c.text for c in chunks if isinstance(c, ChatChunk)) == reply.reply

    def resumed() -> list[ChatChunk | ReplyOut]:
        with Client(backend.url, backend.key) as client:
            return list(client.stream_chat(TOWN, "marta", sent.event_id, last_event_id=1))

    assert await asyncio.to_thread(resumed) == parts[1:]


async def test_a_designer_edits_a_persona_and_memories_and_retires_an_npc_sync_and_async(
    sdk: AsyncClient, backend: Backend
) -> None:
    world_id = await _world(sdk, "isabella")
    town = DialogueTown(backend.tenant_id, world_id)
    await eventually(lambda: seeded(backend.stack, town, "isabella"), bool, timeout=60)
    renamed = await sdk.update_npc(world_id, "isabella", NpcPatch(name="Isabella Rodriguez", age=34))
    assert (renamed.name, renamed.age, renamed.retired) == ("Isabella Rodriguez", 34, False)
    (seed,) = [m async for m in sdk.iter_memories(world_id, "isabella", kind="seed")]
    picnic = "Isabella is planning a picnic by the river"
    await sdk.correct_memory(world_id, "isabella", seed.memory_id, picnic)

    async def seeds() -> list[str]:
        return [m.description async for m in sdk.iter_memories(world_id, "isabella", kind="seed")]

    assert await eventually(seeds, lambda s: "picnic" in " ".join(s), timeout=30) == [picnic]

    def forget_and_retire() -> list[str]:
        with Client(backend.url, backend.key) as client:
            client.forget_memory(world_id, "isabella", seed.memory_id)
            client.retire_npc(world_id, "isabella", reason="left town")
            return [n.npc_id for n in client.iter_npcs(world_id) if n.retired]

    assert await asyncio.to_thread(forget_and_retire) == ["isabella"]
    assert await eventually(seeds, lambda s: not s, timeout=30) == []
    with pytest.raises(ConflictError):
        await sdk.chat(world_id, "isabella", "Hello?", player_id="p1")
    with pytest.raises(NotFoundError):
        await sdk.forget_memory(world_id, "isabella", seed.memory_id)


async def test_the_event_stream_filters_by_npc_and_resumes_after_a_broken_connection(
    sdk: AsyncClient, backend: Backend
) -> None:
    world_id = await _world(sdk, "ana", "ben")
    for i in range(3):
        await sdk.perceive(world_id, "ana", f"bell {i}", MORNING)
        await sdk.perceive(world_id, "ben", f"drum {i}", MORNING)

    async def listed_so_far() -> list[EventOut]:
        return [e async for e in sdk.iter_events(world_id, types=["ObservationMade"], npc_id="ana")]

    # The log shows only the settled prefix of the store: the last append may take a moment to settle.
    listed = await eventually(listed_so_far, lambda events: len(events) == 3, timeout=30)
    assert [e.event["payload"]["description"] for e in listed] == ["bell 0", "bell 1", "bell 2"]

    async with sdk.stream_events(world_id, types=["ObservationMade"], npc_id="ana") as stream:
        first = [e async for e in _take(stream, 1)]
    assert stream.last_event_id == str(listed[0].seq)
    # Another client goes on after the last event seen: nothing lost, nothing twice.
    async with sdk.stream_events(world_id, npc_id="ana", types=["ObservationMade"],
                                 last_event_id=stream.last_event_id) as resumed:
        rest = [e async for e in _take(resumed, 2)]
    assert [e.seq for e in first + rest] == [e.seq for e in listed]

    cutter = _CutAfterFirstEvent()
    async with (
        AsyncClient(backend.url, backend.key, transport=cutter) as client,
        client.stream_events(world_id, npc_id="ana", types=["ObservationMade"]) as broken,
    ):
        got = [e async for e in _take(broken, 3)]
    assert [e.payload["description"] for e in got] == ["bell 0", "bell 1", "bell 2"]
    assert cutter.resumed_from == [None, str(listed[0].seq)]


async def _take(stream: AsyncIterable[T], n: int) -> AsyncIterator[T]:
    async for event in stream:
        yield event
        n -= 1
        if n == 0:
            return


class _CutAfterFirstEvent(httpx.AsyncBaseTransport):
    """A real connection whose first event stream breaks in the middle of its second event."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.resumed_from: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if not request.url.path.endswith("/events/stream"):
            return response
        self.resumed_from.append(request.headers.get("Last-Event-ID"))
        if len(self.resumed_from) > 1:
            return response

        async def break_after_first_event() -> AsyncIterator[bytes]:
            # Cut inside the second event: the first has arrived whole, the second has not.
            seen = b""
            async for chunk in response.stream:  # type: ignore[union-attr]
                seen += chunk
                first = seen.find(b"\n\n", seen.find(b"id:"))
                second = seen.find(b"\n\n", first + 2) if first != -1 and b"id:" in seen else -1
                if second != -1:
                    yield seen[:second]
                    raise httpx.RemoteProtocolError("connection lost")
            raise AssertionError("the stream ended before two events")

        cut = _Stream(break_after_first_event())
        return httpx.Response(response.status_code, headers=response.headers, stream=cut)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.chunks:
            yield chunk


class _LoseFirstAnswer(httpx.AsyncBaseTransport):
    """Sends the first POST for real, then loses its answer (as a dropped connection would)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.keys: list[str] = []
        self.replayed: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method != "POST":
            return response
        self.keys.append(request.headers["Idempotency-Key"])
        self.replayed.append(response.headers.get("Idempotent-Replayed"))
        if len(self.keys) == 1:
            await response.aread()
            raise httpx.ReadError("connection reset by peer")
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_post_whose_answer_was_lost_is_retried_with_its_idempotency_key_and_runs_once(
    backend: Backend,
) -> None:
    loser = _LoseFirstAnswer()
    retry = RetryPolicy(attempts=3, base_delay=0.01)
    async with AsyncClient(backend.url, backend.key, transport=loser, retry=retry) as client:
        world_id = _id("w")
        world = await client.create_world("Once", T0, world_id=world_id)
        assert world.world_id == world_id
        assert loser.keys[0] == loser.keys[1] and loser.replayed == [None, "true"]
        assert [w.world_id async for w in client.iter_worlds()].count(world_id) == 1


class _Recording(httpx.AsyncBaseTransport):
    """A real connection that notes each answer's status."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_keys_sessions_and_rate_limits(sdk: AsyncClient, backend: Backend) -> None:
    assert (await sdk.tenant()).tenant_id == backend.tenant_id
    async with AsyncClient(backend.url, OPERATOR_KEY) as operator:
        studio = await operator.create_tenant("Another Studio")
    async with AsyncClient(backend.url, studio.admin_key.secret) as other:
        assert (await other.tenant()).name == "Another Studio"
        with pytest.raises(NotFoundError):
            await other.get_world(TOWN)
    slow = await sdk.create_key("slow", ["read"], rate_per_second=2, burst=1)
    assert (await sdk.get_key(slow.key_id)).scopes == ["read"]
    assert slow.key_id in [k.key_id async for k in sdk.iter_keys(page_size=1)]
    # Over the key's rate the SDK waits as Retry-After says and the calls succeed...
    recorder = _Recording()
    async with AsyncClient(backend.url, slow.secret, transport=recorder) as limited:
        worlds = [await limited.get_world(TOWN) for _ in range(2)]
    assert [w.world_id for w in worlds] == [TOWN] * 2 and recorder.statuses == [200, 429, 200]
    # ...or, with no retries allowed, the 429 arrives typed, with when to come back.
    async with AsyncClient(backend.url, slow.secret, retry=RetryPolicy(attempts=1)) as impatient:
        with pytest.raises(RateLimitError) as limited_error:
            for _ in range(3):
                await impatient.get_world(TOWN)
    assert limited_error.value.retry_after is not None and limited_error.value.retry_after >= 0
    async with AsyncClient(backend.url, slow.secret) as reader:
        with pytest.raises(PermissionDeniedError):
            await reader.create_world("No", T0)

    session = await sdk.create_session(TOWN, "player-7", ttl_seconds=600)
    async with AsyncClient(backend.url, session.token) as player:
        with pytest.raises(PermissionDeniedError):
            await player.chat(TOWN, "marta", "hi", player_id="someone-else")
        await sdk.revoke_key(session.session_id)
        with pytest.raises(AuthenticationError):
            await player.chat(TOWN, "marta", "hi", player_id="player-7")
    await sdk.revoke_key(slow.key_id)


async def test_the_clock_places_and_positions_of_a_studio_world(sdk: AsyncClient) -> None:
    assert any(t.name == TOWN and t.npc_count == 25 for t in await sdk.templates())
    world_id = await _world(sdk, "ana")
    tavern = ArenaDef(name="tavern", objects=[ObjectDef(name="hearth")])
    await sdk.define_world(world_id, [SectorDef(name="Inn", arenas=[tavern])])
    tree = await eventually(lambda: _tree(sdk, world_id), lambda t: t is not None, timeout=30)
    assert tree is not None and [o.path for o in tree.objects] == [f"{world_id}:Inn:tavern:hearth"]
    await sdk.set_clock(world_id, paused=False, mode="stepped")
    clock = await eventually(lambda: sdk.get_clock(world_id), lambda c: not c.paused, timeout=30)
    assert clock.mode == "stepped"
    await sdk.move_npcs(world_id, {"ana": f"{world_id}:Inn:tavern"})
    state = await eventually(
        lambda: sdk.npc_state(world_id, "ana"), lambda s: s.location == f"{world_id}:Inn:tavern", timeout=30
    )
    assert state.npc_id == "ana"
    await sdk.set_object_state(world_id, f"{world_id}:Inn:tavern:hearth", "roaring")
    roaring = await eventually(
        lambda: sdk.tree(world_id), lambda t: t.objects[0].state == "roaring", timeout=30
    )
    assert roaring.tiled is False
    usage = await sdk.llm_usage(world_id)
    assert usage.world_id == world_id and usage.calls >= 0


async def _tree(sdk: AsyncClient, world_id: str) -> TreeOut | None:
    try:
        return await sdk.tree(world_id)
    except NotFoundError:
        return None


async def test_webhook_deliveries_verify_with_the_sdk_and_a_forged_one_does_not(
    sdk: AsyncClient, backend: Backend
) -> None:
    world_id = await _world(sdk, "ana")
    hook = await sdk.create_webhook(world_id, f"{backend.receiver.url}/ok", event_types=["ObservationMade"])
    assert hook.secret.startswith("whsec_")
    sent = await sdk.perceive(world_id, "ana", "a letter arrives", MORNING)

    def delivered() -> list[object]:
        return [r for r in backend.receiver.acked() if r.headers.get("Npcworld-Event-Id") == sent.event_id]

    async def probe() -> list[object]:
        return delivered()

    (received,) = await eventually(probe, bool, timeout=30)
    delivery = parse_webhook(hook.secret, received.headers, received.body)  # type: ignore[attr-defined]
    assert delivery.event_id == sent.event_id and delivery.type == "ObservationMade"
    assert delivery.event["payload"]["description"] == "a letter arrives"
    with pytest.raises(WebhookSignatureError):
        parse_webhook(hook.secret, received.headers, received.body.replace(b"letter", b"bomb"))  # type: ignore[attr-defined]
    with pytest.raises(WebhookSignatureError):
        parse_webhook("whsec_wrong", received.headers, received.body)  # type: ignore[attr-defined]

    logged = await eventually(
        lambda: sdk.list_deliveries(world_id, hook.webhook_id, status="delivered"), lambda p: bool(p.items)
    )
    detail = await sdk.get_delivery(world_id, hook.webhook_id, logged.items[0].delivery_id)
    assert detail.attempt_log and detail.attempt_log[0].status_code == 200
    again = await sdk.redeliver(world_id, hook.webhook_id, detail.delivery_id)
    assert again.delivery_id == detail.delivery_id
    assert [h.webhook_id async for h in sdk.iter_webhooks(world_id)] == [hook.webhook_id]
    paused = await sdk.update_webhook(world_id, hook.webhook_id, active=False)
    assert paused.active is False and (await sdk.get_webhook(world_id, hook.webhook_id)).active is False
    await sdk.delete_webhook(world_id, hook.webhook_id)
    with pytest.raises(NotFoundError):
        await sdk.get_webhook(world_id, hook.webhook_id)


def _env(backend: Backend) -> dict[str, str]:
    return {**os.environ, "NPCWORLD_URL": backend.url, "NPCWORLD_API_KEY": backend.key}


async def test_the_python_readme_example_runs_as_written(backend: Backend) -> None:
    readme = (SDKS / "python" / "README.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(example.strip().splitlines()) <= 10
    status, out = await run(sys.executable, "-c", example, cwd=SDKS, env=_env(backend), timeout=60)
    assert status == 0, out
    assert out.startswith("Marta Quill") and re.search(r"^marta: \S", out, re.M)
    assert re.search(r"^- \S", out, re.M)


async def test_the_typescript_sdk_passes_its_node_tests_against_this_gateway(backend: Backend) -> None:
    """npm ci (when node_modules is missing or older than the lock file), then npm test: the generated types
    checked against the contract, tsc (strict), the README example compiled, node --test."""
    env = _env(backend)
    npm = await install_typescript_sdk(env)
    status, out = await run(npm, "test", cwd=TYPESCRIPT_SDK, env=env, timeout=180)
    assert status == 0, f"npm test failed:\n{out[-6000:]}"
    assert re.search(r"^# fail 0$", out, re.M) and not re.search(r"^# pass 0$", out, re.M), out[-3000:]
