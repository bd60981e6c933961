"""Fixtures of modules that read the delivery log: the webhooks service's internal API on a port of the
module's own, and a gateway that reads it there (WEBHOOKS_API_URL). Import both into the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import running_gateway
from tests.infra import BrokerForTests, free_port

__all__ = ["gateway_url", "webhooks_api_port"]


@pytest.fixture(scope="module")
def webhooks_api_port() -> int:
    """Where this module's dispatchers serve the delivery log (``Settings(webhooks_api_port=...)``)."""
    return free_port()


@pytest.fixture(scope="module")
def gateway_url(database_url: str, broker: BrokerForTests, webhooks_api_port: int) -> Iterator[str]:
    url = f"http://127.0.0.1:{webhooks_api_port}"
    with running_gateway(database_url, broker, WEBHOOKS_API_URL=url) as gateway:
        yield gateway
