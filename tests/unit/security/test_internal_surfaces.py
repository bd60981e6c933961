"""Internal surfaces: loopback by default, and a service credential that production cannot go without."""

from __future__ import annotations

import pytest

from npcworld.errors import ConfigError
from npcworld.service_auth import TOKEN_ENV, authorized, client_headers, required_token
from npcworld.telemetry.health import HealthServer
from services.memory.settings import Settings as MemorySettings


async def _ready() -> dict[str, bool]:
    return {"database": True}


async def test_health_and_metrics_listen_on_loopback_unless_told_otherwise() -> None:
    server = HealthServer(0, _ready)
    await server.start()
    try:
        assert server._server is not None
        assert {s.getsockname()[0] for s in server._server.sockets} == {"127.0.0.1"}
    finally:
        await server.stop()


def test_the_memory_api_listens_on_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_API_HOST", raising=False)
    assert MemorySettings().memory_api_host == "127.0.0.1"


def test_an_internal_api_beyond_loopback_refuses_to_run_without_a_long_enough_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    for loopback in ("127.0.0.1", "::1", "localhost"):
        assert required_token(loopback, "memory API") is None  # this machine only: a token is optional
    for exposed in ("0.0.0.0", "10.0.0.5", "::", "memory"):
        with pytest.raises(ConfigError, match=TOKEN_ENV):
            required_token(exposed, "memory API")
    monkeypatch.setenv(TOKEN_ENV, "short")
    with pytest.raises(ConfigError, match="16"):
        required_token("127.0.0.1", "memory API")  # a token that is set is checked everywhere
    monkeypatch.setenv(TOKEN_ENV, "a-long-enough-shared-secret")
    assert required_token("0.0.0.0", "memory API") == "a-long-enough-shared-secret"


def test_clients_send_the_token_and_only_the_exact_bearer_token_is_accepted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "s3cret-s3cret-s3cret")
    header = client_headers()["Authorization"]
    assert authorized(header, "s3cret-s3cret-s3cret")
    assert authorized("bearer s3cret-s3cret-s3cret", "s3cret-s3cret-s3cret")
    for wrong in (None, "", "Bearer", "Bearer s3cret", "Basic s3cret-s3cret-s3cret", "s3cret-s3cret-s3cret"):
        assert not authorized(wrong, "s3cret-s3cret-s3cret"), wrong
    monkeypatch.delenv(TOKEN_ENV)
    assert client_headers() == {}
