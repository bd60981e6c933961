"""The OpenAPI document tells the truth about errors: one Problem schema, each route's real error statuses."""

from __future__ import annotations

import json
from typing import Any

import httpx
import psycopg
import pytest

from services.gateway.api import create_app
from services.gateway.openapi import PROBLEM_MEDIA_TYPE
from services.gateway.problems import problem
from services.gateway.schemas import Problem
from services.gateway.settings import Settings
from services.gateway.unavailable import unavailable_body

SPEC: dict[str, Any] = create_app().openapi()
OPERATIONS = [(m.upper(), p, op) for p, ops in SPEC["paths"].items() for m, op in ops.items()]


def _resolved(response: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in response:
        return dict(SPEC["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]])
    return response


def _codes(method: str, path: str) -> set[int]:
    return {int(c) for c in SPEC["paths"][path][method.lower()]["responses"]}


def test_fastapis_validation_error_body_is_gone_from_the_document() -> None:
    assert "HTTPValidationError" not in json.dumps(SPEC)
    assert "ValidationError" not in SPEC["components"]["schemas"]


@pytest.mark.parametrize(
    ("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS]
)
def test_every_error_answer_is_a_problem(method: str, path: str, operation: dict[str, Any]) -> None:
    for code, response in operation["responses"].items():
        if int(code) < 400:
            continue
        content = _resolved(response)["content"]
        assert content[PROBLEM_MEDIA_TYPE] == {"schema": {"$ref": "#/components/schemas/Problem"}}, code
        assert set(content) == {PROBLEM_MEDIA_TYPE} or (path, code) == ("/readyz", "503"), code
    assert {431} <= _codes(method, path)


def test_an_authenticated_route_documents_401_403_429_and_its_headers() -> None:
    assert {401, 403, 429, 404, 422, 503} <= _codes("GET", "/v1/worlds/{world_id}/npcs/{npc_id}/plan")
    assert not {400, 408, 409, 413} & _codes("GET", "/v1/worlds/{world_id}/npcs/{npc_id}/plan")
    responses = SPEC["components"]["responses"]
    assert responses["TooManyRequests"]["headers"]["Retry-After"]["required"]
    assert responses["Unauthorized"]["headers"]["WWW-Authenticate"]["required"]


def test_a_post_with_a_body_documents_body_limits_and_the_idempotency_key() -> None:
    chat = SPEC["paths"]["/v1/worlds/{world_id}/npcs/{npc_id}/chat"]["post"]
    assert {400, 408, 409, 413, 422} <= _codes("POST", "/v1/worlds/{world_id}/npcs/{npc_id}/chat")
    assert "Idempotency-Key" in {p["name"] for p in chat["parameters"] if p["in"] == "header"}


def test_the_operator_route_documents_403_but_no_api_key_errors() -> None:
    codes = _codes("POST", "/v1/tenants")
    assert 403 in codes and not {401, 409, 429} & codes


def test_liveness_never_answers_503_and_readiness_answers_either_body() -> None:
    assert 503 not in _codes("GET", "/healthz")
    ready = SPEC["paths"]["/readyz"]["get"]["responses"]["503"]
    assert ready["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/NotReady"}
    assert ready["content"][PROBLEM_MEDIA_TYPE]["schema"] == {"$ref": "#/components/schemas/Problem"}


def test_every_202_has_a_typed_body() -> None:
    for method, path, operation in OPERATIONS:
        accepted = operation["responses"].get("202")
        if accepted is not None:
            assert accepted["content"]["application/json"]["schema"]["$ref"], (method, path)
    pending = SPEC["paths"]["/v1/worlds/{world_id}/npcs/{npc_id}/chat"]["post"]["responses"]["202"]
    assert pending["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ReplyPending"}


def test_the_bodies_the_gateway_sends_are_problems() -> None:
    sent = problem(422, "Invalid request", "x: bad", errors=[{"field": "x", "message": "bad"}])
    assert Problem.model_validate_json(bytes(sent.body)).errors[0].field == "x"
    assert Problem.model_validate(unavailable_body(psycopg.OperationalError("down"))).status == 503


async def test_an_unexpected_error_is_a_problem_that_names_nothing_internal() -> None:
    app = create_app(Settings(database_url="postgresql://unused", kafka_bootstrap_servers="unused:9092"))

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internal detail at /srv/npcworld/x.py")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        answer = await client.get("/boom")
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["status"] == 500
    assert "secret" not in answer.text and "RuntimeError" not in answer.text
