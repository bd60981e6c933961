"""The gateway's OpenAPI document, truthful about errors: every error answer is one ``Problem``
(``application/problem+json``), and each operation lists the statuses its dependencies, parameters and the
middleware in front of it can answer (derived from the routes, so a new route is documented the same way).
"""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from typing import Any, get_args

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts

from services.gateway.auth import Caller
from services.gateway.schemas import Problem

__all__ = ["PROBLEM_MEDIA_TYPE", "error_statuses", "install_openapi"]

PROBLEM_MEDIA_TYPE = "application/problem+json"
_AUTHENTICATE = get_args(Caller)[1].dependency  # auth._caller: 401 without a valid key, 429 over its rate

# Raised in a route's body, where its dependencies do not show them.
_RAISED_IN_BODY: dict[tuple[str, str], tuple[int, ...]] = {
    ("POST", "/v1/tenants"): (403,),  # routes/keys.py: the operator key only (and only when one is set)
    ("DELETE", "/v1/worlds/{world_id}"): (409,),  # another write to the world stream came first
    # routes/designer.py: the NPC is retired, or another write to the world stream came first
    ("PATCH", "/v1/worlds/{world_id}/npcs/{npc_id}"): (409,),
    ("DELETE", "/v1/worlds/{world_id}/npcs/{npc_id}"): (409,),
    # routes/players.py: the player was forgotten
    ("POST", "/v1/worlds/{world_id}/npcs/{npc_id}/chat"): (410,),
    ("POST", "/v1/worlds/{world_id}/npcs/{npc_id}/interview"): (410,),
}

_WHY = {
    400: "the request body cannot be read as JSON text (not UTF-8)",
    401: "no API key, or one that is unknown, revoked or expired",
    403: "this credential may not do this: an API key lacking the route's scope or limited to other worlds "
    "(on POST /v1/tenants: not the operator key)",
    404: "no such resource for this tenant (another tenant's answers the same as a missing one)",
    408: "the request body did not arrive in time",
    409: "a conflict: the Idempotency-Key was used with another request or its first request still runs, "
    "an id is taken, or another request changed the resource first",
    410: "the player was forgotten (DELETE /v1/players/{player_id}): nothing it says is stored",
    413: "the request body is larger than the gateway accepts",
    422: "a parameter, header or body field is invalid; `errors` names each one",
    429: "this API key is over its rate limit; retry after `Retry-After` seconds",
    431: "too many request headers, or too many bytes of them",
    503: "the database cannot be reached (retry after `Retry-After` seconds), or a service the route needs "
    "is unavailable",
}
_SECONDS = {"type": "integer", "minimum": 1}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"required": True, "schema": {"type": "string"}, "description": "`Bearer`"}},
    429: {"Retry-After": {"required": True, "schema": _SECONDS, "description": "seconds to wait"}},
    503: {"Retry-After": {"schema": _SECONDS, "description": "seconds to wait (when the database is away)"}},
}
_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": "the same key and body replay the first response (`Idempotent-Replayed: true`); "
    "another request with it is a 409",
}


def install_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` return FastAPI's document with the errors documented (built once, cached)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            # Included routers are contexts around their routes (with the prefix and dependencies added).
            routes = [r for r in iter_route_contexts(app.routes)
                      if isinstance(r.original_route, APIRoute) and r.include_in_schema]
            document = generate()
            _document_errors(document, routes)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def error_statuses(route: RouteContext, method: str) -> set[int]:
    """The error statuses ``method`` on ``route`` can answer (see docs/api.md, "Conventions").

    Every route: 431 (limits.py, before routing), and but for ``/healthz`` 503 (unavailable.py answers it
    while the database is away; problems.py when a route meets the outage). An API key: 401 and 429
    (auth.py), 403 when a scope is checked. A path id: 404. A body: 400, 408, 413 (limits.py). Parameters
    or a body: 422. An authenticated POST takes an ``Idempotency-Key`` (idempotency.py): 409, and 422 for
    a key of the wrong length.
    """
    path = str(route.path_format)
    statuses = {431, *_RAISED_IN_BODY.get((method, path), ())}
    if path != "/healthz":  # unavailable.py: while the database is away, everything else answers 503
        statuses.add(503)
    authenticated = any(d.call is _AUTHENTICATE for d in _walk(route.dependant))
    if authenticated:
        statuses |= {401, 429}
    if any(d.call is not _AUTHENTICATE and _authenticates(d) for d in _walk(route.dependant)):
        statuses.add(403)  # a dependency on top of the key: auth.require's scope check
    if route.dependant.path_params:
        statuses.add(404)
    if route.body_field is not None:
        statuses |= {400, 408, 413, 422}
    if route.dependant.query_params or route.dependant.path_params or route.dependant.header_params:
        statuses.add(422)
    if method == "POST" and authenticated:
        statuses |= {409, 422}
    return statuses


def _walk(dependant: Dependant) -> Iterator[Dependant]:
    for sub in dependant.dependencies:
        yield sub
        yield from _walk(sub)


def _authenticates(dependant: Dependant) -> bool:
    return any(d.call is _AUTHENTICATE for d in dependant.dependencies)


def _document_errors(document: dict[str, Any], routes: list[RouteContext]) -> None:
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 body, which we never send
        schemas.pop(name, None)
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs", {}), Problem=problem)
    components["schemas"] = dict(sorted(schemas.items()))
    components["responses"] = {_name(status): _response(status) for status in sorted(_WHY)}
    for route in routes:
        for method in sorted(route.methods or ()):
            operation = document["paths"][route.path_format][method.lower()]
            statuses = error_statuses(route, method)
            _document_operation(operation, statuses)
            if method == "POST" and 401 in statuses:  # idempotency.py acts for a tenant's key only
                operation.setdefault("parameters", []).append(dict(_IDEMPOTENCY_KEY))


def _name(status: int) -> str:
    return HTTPStatus(status).phrase.replace(" ", "").replace("-", "")


def _response(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": _WHY[status],
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    if status in _HEADERS:
        response["headers"] = _HEADERS[status]
    return response


def _document_operation(operation: dict[str, Any], statuses: set[int]) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    responses.pop("422", None)  # FastAPI's own, naming HTTPValidationError
    for status in statuses:
        declared = responses.get(str(status), {})
        if "content" in declared:  # a body of the route's own (readyz's 503), or a Problem from before it
            declared["content"][PROBLEM_MEDIA_TYPE] = _response(status)["content"][PROBLEM_MEDIA_TYPE]
            declared.setdefault("headers", _HEADERS.get(status, {}))
        else:
            responses[str(status)] = {"$ref": f"#/components/responses/{_name(status)}"}
    operation["responses"] = dict(sorted(responses.items()))
