"""Dialogue integration fixtures: one running stack (relay, memory service, dialogue consumer) per module."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from npcworld.embeddings import LocalMiniLMEmbedder
from tests.infra import BrokerForTests
from tests.integration.dialogue.support import Stack, running_dialogue


@pytest.fixture(scope="session")
def embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture(scope="module")
async def stack(
    database_url: str, broker: BrokerForTests, embedder: LocalMiniLMEmbedder
) -> AsyncIterator[Stack]:
    async with running_dialogue(database_url, broker.bootstrap, embedder) as running:
        yield running
