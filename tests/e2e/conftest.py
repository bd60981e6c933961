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
    (``services.gateway.consumer``); ``env_vars`` add to their environment."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
           **env_vars}
    with _projection_consumer(env):
        yield from _serving(port, env)


@contextlib.contextmanager
def _projection_consumer(env: dict[str, str]) -> Iterator[None]:
    """The gateway's projection consumer, ready (its consumer loop has joined its group)."""
    health = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "services.gateway.consumer"],
                            env={**env, "HEALTH_PORT": str(health)})
    try:
        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{health}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("the gateway's projection consumer exited at start")
            time.sleep(0.1)
        else:
            raise RuntimeError("the gateway's projection consumer did not become ready")
        yield
    finally:
        proc.terminate()
        proc.wait(15)


def _serving(port: int, env: dict[str, str]) -> Iterator[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "services.gateway.api:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("the gateway exited at start")
            time.sleep(0.1)
        else:
            raise RuntimeError("the gateway did not become ready")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


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
