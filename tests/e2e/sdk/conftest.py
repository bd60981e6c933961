"""Fixtures for the SDK tests: the gateway with the services an SDK call reaches (dialogue and memory,
world state and perception, webhook dispatch), and a tenant with the demo town brindle-hollow in it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from npcworld_sdk import AsyncClient

from npcworld.db import open_pool
from npcworld.embeddings import LocalMiniLMEmbedder
from services.webhooks.consumer import serve
from services.webhooks.settings import Settings
from tests.e2e.conftest import _tenant, running_gateway
from tests.e2e.receiver import Receiver
from tests.infra import BrokerForTests, free_port
from tests.integration.conftest import broker, database_url, postgres  # noqa: F401
from tests.integration.dialogue.support import Stack, running_dialogue, seeded
from tests.integration.dialogue.support import Town as DialogueTown
from tests.integration.world_state.support import running_pipeline
from tests.polling import eventually

T0 = datetime(2023, 2, 13, 7, tzinfo=UTC)
TOWN = "brindle-hollow"
OPERATOR_KEY = "operator-secret-for-the-sdk-tests"


@dataclass(frozen=True)
class Backend:
    """What the SDK tests talk to: the gateway's URL, an admin key of a tenant holding the demo town."""

    url: str
    key: str
    tenant_id: str
    stack: Stack
    receiver: Receiver
    database_url: str


@pytest.fixture(scope="module")
async def backend(
    database_url: str,  # noqa: F811
    broker: BrokerForTests,  # noqa: F811
) -> AsyncIterator[Backend]:
    receiver = Receiver(fail_first=0).start()
    stop = asyncio.Event()
    webhooks_api = free_port()  # the delivery log, read by the gateway below
    settings = Settings(
        database_url=database_url,
        kafka_bootstrap_servers=broker.bootstrap,
        webhooks_api_port=webhooks_api,
        webhook_backoff_base_seconds=0.05,
        webhook_poll_seconds=0.05,
    )
    dispatcher = asyncio.create_task(serve(settings, stop))
    async with AsyncExitStack() as services:
        pool = await open_pool(database_url, min_size=1, max_size=4)
        services.push_async_callback(pool.close)
        # The consumers join their groups concurrently: each join takes seconds.
        dialogue = running_dialogue(database_url, broker.bootstrap, LocalMiniLMEmbedder())
        pipeline = running_pipeline(pool, broker.bootstrap)
        stack, _ = await asyncio.gather(dialogue.__aenter__(), pipeline.__aenter__())
        services.push_async_exit(dialogue.__aexit__)
        services.push_async_exit(pipeline.__aexit__)
        gateway = running_gateway(
            database_url, broker, MEMORY_API_URL=stack.memory.base_url, GATEWAY_OPERATOR_KEY=OPERATOR_KEY,
            WEBHOOKS_API_URL=f"http://127.0.0.1:{webhooks_api}",
        )
        gateway_url = await asyncio.to_thread(gateway.__enter__)
        services.push(gateway.__exit__)
        key = await _tenant(database_url, "studio", ("read", "write", "admin"))
        sdk = await services.enter_async_context(AsyncClient(gateway_url, key))
        await sdk.create_world("Brindle Hollow", T0, world_id=TOWN, template=TOWN)
        tenant_id = (await sdk.tenant()).tenant_id
        await eventually(lambda: seeded(stack, DialogueTown(tenant_id, TOWN), "marta"), bool, timeout=60)
        yield Backend(gateway_url, key, tenant_id, stack, receiver, database_url)
    stop.set()
    await dispatcher
    receiver.stop()


@pytest.fixture
async def sdk(backend: Backend) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(backend.url, backend.key) as client:
        yield client
