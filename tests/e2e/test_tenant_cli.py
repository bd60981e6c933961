"""The first tenant and key of a deployment come from ``npcworld tenant create``; the key works at once."""

from __future__ import annotations

import re

import httpx
import pytest
from click.testing import CliRunner

from launcher.cli import main
from tests.infra import BrokerForTests


def test_tenant_create_prints_a_working_key_once_and_add_key_honours_scopes(
    gateway_url: str, database_url: str, broker: BrokerForTests, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", broker.bootstrap)
    runner = CliRunner()
    created = runner.invoke(main, ["tenant", "create", "Moonlit Games"])
    assert created.exit_code == 0, created.output
    secret = re.search(r"api_key:\s+(\S+)", created.output)
    tenant_id = re.search(r"tenant_id:\s+(\S+)", created.output)
    assert secret and tenant_id
    admin = {"Authorization": f"Bearer {secret.group(1)}"}
    assert httpx.get(f"{gateway_url}/v1/tenant", headers=admin).json()["name"] == "Moonlit Games"

    added = runner.invoke(main, ["tenant", "add-key", tenant_id.group(1), "--scope", "read"])
    assert added.exit_code == 0, added.output
    reader = {"Authorization": f"Bearer {added.output.split()[1]}"}
    assert httpx.get(f"{gateway_url}/v1/worlds", headers=reader).status_code == 200
    r = httpx.post(
        f"{gateway_url}/v1/worlds", headers=reader, json={"name": "x", "start_time": "2023-02-13T07:00:00Z"}
    )
    assert r.status_code == 403
