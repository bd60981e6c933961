"""End-to-end fixtures: the gateway as a real HTTP server over the real embedded stack."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.infra import BrokerForTests, free_port
from tests.integration.conftest import broker, database_url, pool, postgres  # noqa: F401  (shared fixtures)


@pytest.fixture(scope="module")
def gateway_url(database_url: str, broker: BrokerForTests) -> Iterator[str]:  # noqa: F811
    with running_gateway(database_url, broker) as url:
        yield url


@contextlib.contextmanager
def running_gateway(database_url: str, broker: BrokerForTests, **env_vars: str) -> Iterator[str]:  # noqa: F811
    """A gateway process (uvicorn, as deployed) on a free port, and the consumer that keeps its read models
    (``services.gateway.consumer``), ready (its consumer loop has joined its group); ``env_vars`` add to
    their environment. Both start at once: joining a group takes the embedded broker ~5 s, about what the
    gateway takes to import and serve."""
    port, health = free_port(), free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
           **env_vars}
    url = f"http://127.0.0.1:{port}"
    consumer = subprocess.Popen([sys.executable, "-m", "services.gateway.consumer"],
                                env={**env, "HEALTH_PORT": str(health)})
    gateway = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "services.gateway.api:create_app", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=env,
    )
    try:
        wait_ready(consumer, f"http://127.0.0.1:{health}", "the gateway's projection consumer", 60)
        wait_ready(gateway, url, "the gateway", 30)
        yield url
    finally:
        for proc, wait in ((gateway, 10), (consumer, 15)):
            proc.terminate()
            proc.wait(wait)


def wait_ready(proc: subprocess.Popen[bytes], url: str, what: str, timeout: float) -> None:
    """Wait until ``url``/readyz answers 200; raise when ``proc`` exits first or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited at start")
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not become ready")


async def _tenant(database_url: str, name: str, scopes: tuple[str, ...]) -> str:  # noqa: F811
    import psycopg

    from services.gateway.repository import GatewayRepository

    async with await psycopg.AsyncConnection.connect(database_url) as conn, conn.transaction():
        _, secret = await GatewayRepository(conn).create_tenant(name, scopes)
    return secret


@pytest.fixture
async def client_factory(gateway_url: str, database_url: str) -> AsyncIterator[object]:  # noqa: F811
    clients: list[httpx.AsyncClient] = []

    async def make(scopes: tuple[str, ...] = ("read", "write", "admin")) -> httpx.AsyncClient:
        key = await _tenant(database_url, "studio", scopes)
        client = httpx.AsyncClient(
            base_url=gateway_url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        )
        clients.append(client)
        return client

    yield make
    await asyncio.gather(*(c.aclose() for c in clients))


@pytest.fixture(scope="module")
async def client_factory_module(gateway_url: str, database_url: str) -> AsyncIterator[object]:  # noqa: F811
    """Like ``client_factory`` but shared by a module's tests (each call is still a new tenant)."""
    clients: list[httpx.AsyncClient] = []

    async def make(scopes: tuple[str, ...] = ("read", "write", "admin")) -> httpx.AsyncClient:
        key = await _tenant(database_url, "studio", scopes)
        client = httpx.AsyncClient(
            base_url=gateway_url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        )
        clients.append(client)
        return client

    yield make
    await asyncio.gather(*(c.aclose() for c in clients))


async def gateway_ready(client: httpx.AsyncClient) -> bool:
    """Whether the gateway behind ``client`` answers /readyz with 200 (False while it cannot be reached)."""
    try:
        return (await client.get("/readyz")).status_code == 200
    except httpx.HTTPError:
        return False
