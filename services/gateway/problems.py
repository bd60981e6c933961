"""Errors as application/problem+json, mapped in one place."""

from __future__ import annotations

from http import HTTPStatus

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from npcworld.errors import ConcurrencyError, ConflictError, NotFoundError, NpcworldError, ValidationError
from services.gateway.unavailable import RETRY_AFTER_SECONDS, unavailable_body

__all__ = ["install_http_problem_handler", "install_problem_handlers", "problem"]


def problem(status: int, title: str, detail: str, **extra: object) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


def install_problem_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"field": ".".join(str(p) for p in e["loc"][1:]) or str(e["loc"][0]), "message": e["msg"]}
            for e in exc.errors()
        ]
        first = errors[0]["field"] if errors else "request"
        return problem(
            422, "Invalid request", f"{first}: {errors[0]['message']}" if errors else "invalid", errors=errors
        )

    @app.exception_handler(psycopg.DataError)
    async def bad_value(_: Request, exc: psycopg.DataError) -> JSONResponse:
        # A value the database cannot hold (a NUL byte in text, a number out of range).
        return problem(
            422,
            "Invalid request",
            f"a value cannot be stored: {type(exc).__name__}",
            errors=[{"field": "request", "message": str(exc).splitlines()[0]}],
        )

    @app.exception_handler(psycopg.OperationalError)
    async def database_unreachable(request: Request, exc: psycopg.OperationalError) -> JSONResponse:
        # Postgres is down or restarting (or the pool has no connection to give): a retry will do.
        circuit = getattr(request.app.state, "db_circuit", None)
        if circuit is not None:
            circuit.trip()
        response = JSONResponse(unavailable_body(exc), status_code=503, media_type="application/problem+json")
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        # A bug: the caller gets a problem naming nothing internal; the server still logs the traceback.
        return problem(500, "Internal Server Error", "the request failed on the server; it was logged")

    @app.exception_handler(NpcworldError)
    async def domain_error(_: Request, exc: NpcworldError) -> JSONResponse:
        if isinstance(exc, NotFoundError):
            return problem(404, "Not found", str(exc))
        if isinstance(exc, ValidationError):
            return problem(
                422, "Invalid request", str(exc), errors=[{"field": exc.field, "message": str(exc)}]
            )
        if isinstance(exc, ConflictError):
            return problem(409, "Conflict", str(exc), errors=[{"field": exc.field, "message": str(exc)}]
                           if exc.field else [])
        if isinstance(exc, ConcurrencyError):
            # Its message names an internal stream and its version: never shown to a caller.
            return problem(409, "Conflict", "another request changed this resource first; read it again"
                           " and retry")
        return problem(503, "Unavailable", str(exc))


def install_http_problem_handler(app: FastAPI) -> None:
    from starlette.exceptions import HTTPException

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        try:
            title = HTTPStatus(exc.status_code).phrase
        except ValueError:
            title = "Request failed"
        response = problem(exc.status_code, title, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response
