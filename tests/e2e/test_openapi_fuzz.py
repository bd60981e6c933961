"""Schemathesis fuzzes the exported contracts/openapi.json against the running gateway: no request gets a 5xx,
and every answer is one the document describes (its status, media type, body schema and required headers).

Bounded to ~60 s: a fixed number of derandomised examples per operation. Half the operations are
aimed at a real world of the caller (so bodies and queries reach the database), the rest at random ids.
Only the gateway runs here, so requests that would wait for another service's answer (``wait``) are
sent asynchronously.
"""

from __future__ import annotations

import asyncio
import json
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from services.gateway.repository import KeyRepository

SPEC = Path(__file__).resolve().parents[2] / "contracts" / "openapi.json"
schema = schemathesis.openapi.from_path(SPEC)
EXAMPLES = 20
RAW: dict[str, Any] = json.loads(SPEC.read_text())
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def _has_wait(method: str, path: str) -> bool:
    """Whether the operation's body has a ``wait`` flag (wait for another service's answer)."""
    content = RAW["paths"][path].get(method.lower(), {}).get("requestBody", {}).get("content", {})
    ref = content.get("application/json", {}).get("schema", {}).get("$ref", "")
    component = RAW["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
    return "wait" in component.get("properties", {})


async def _fuzz_key(database_url: str) -> str:
    async with await psycopg.AsyncConnection.connect(database_url) as conn, conn.transaction():
        keys = KeyRepository(conn)
        tenant = await keys.create_tenant("fuzz")
        _, secret = await keys.create_key(
            tenant.tenant_id, "fuzz", ("read", "write", "admin"), rate_per_second=100000, burst=100000
        )
    return secret


@pytest.fixture(scope="module")
def fuzz_target(gateway_url: str, database_url: str) -> Iterator[tuple[str, dict[str, str], str]]:
    headers = {"Authorization": f"Bearer {asyncio.run(_fuzz_key(database_url))}"}
    world_id = f"fuzz-{uuid.uuid4().hex[:8]}"
    r = httpx.post(
        f"{gateway_url}/v1/worlds",
        headers=headers,
        json={"world_id": world_id, "name": "Fuzz", "start_time": "2023-02-13T07:00:00+00:00"},
    )
    assert r.status_code == 201, r.text
    yield gateway_url, headers, world_id


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_generated_request_gets_a_documented_answer(
    case: schemathesis.Case, fuzz_target: tuple[str, dict[str, str], str]
) -> None:
    base_url, headers, world_id = fuzz_target
    real_world = (
        (case.path_parameters or {}).get("world_id") is not None
        and case.method != "DELETE"
        and not case.path.endswith("/stream")
        and zlib.crc32(f"{case.method} {case.path}".encode()) % 2 == 0
    )
    if real_world:
        case.path_parameters = {**(case.path_parameters or {}), "world_id": world_id}
    if isinstance(case.body, dict) and _has_wait(case.method, case.path):
        # a synchronous reply needs the dialogue service, which this test does not run
        case.body = {**case.body, "wait": False}
    response = case.call(base_url=base_url, headers=headers, timeout=10)
    case.validate_response(response, checks=CHECKS, headers=headers)
