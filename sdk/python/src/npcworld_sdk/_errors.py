"""Errors: every error answer of the API is a problem+json, raised as the exception class of its status.

NpcworldError
├── APIConnectionError        the gateway could not be reached (after retries)
├── StreamError               an event stream could not be resumed
├── ReplyTimeoutError         an NPC's reply did not come in time (also a TimeoutError)
└── APIError                  an error answer: status, type, title, detail, errors, retry_after
    ├── ClientError           4xx: BadRequestError 400, AuthenticationError 401, PermissionDeniedError 403,
    │                         NotFoundError 404, RequestTimeoutError 408, ConflictError 409,
    │                         PayloadTooLargeError 413, UnprocessableEntityError 422, RateLimitError 429,
    │                         HeadersTooLargeError 431
    └── ServerError           5xx: ServiceUnavailableError 503
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

import httpx

from npcworld_sdk._models import Problem, ProblemField

__all__ = [
    "APIConnectionError",
    "APIError",
    "AuthenticationError",
    "BadRequestError",
    "ClientError",
    "ConflictError",
    "HeadersTooLargeError",
    "NotFoundError",
    "NpcworldError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "ReplyTimeoutError",
    "RequestTimeoutError",
    "ServerError",
    "ServiceUnavailableError",
    "StreamError",
    "UnprocessableEntityError",
    "error_from_response",
]


class NpcworldError(Exception):
    """Base of every error this SDK raises."""


class APIConnectionError(NpcworldError):
    """No answer from the gateway (connection refused, reset, timed out), after the retries allowed."""


class StreamError(NpcworldError):
    """An event stream broke and could not be resumed within the retries allowed."""


class ReplyTimeoutError(NpcworldError, TimeoutError):
    """A chat's reply did not come within the time given; the chat stands and may be answered later."""


class APIError(NpcworldError):
    """An error answer. ``problem`` is its RFC 9457 body; ``errors`` name the offending fields."""

    def __init__(self, problem: Problem, headers: httpx.Headers) -> None:
        super().__init__(f"{problem.status} {problem.title}: {problem.detail}")
        self.problem = problem
        self.status = problem.status
        self.type = problem.type
        self.title = problem.title
        self.detail = problem.detail
        self.errors: list[ProblemField] = list(problem.errors or [])
        self.headers = headers

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked to wait before retrying (``Retry-After``), if it said."""
        return retry_after_seconds(self.headers.get("Retry-After"))

    @property
    def fields(self) -> list[str]:
        """The offending fields' names, in the order the server gave them."""
        return [e.field for e in self.errors]


class ClientError(APIError):
    """A 4xx: the request must change before it can succeed (429 excepted: wait and retry)."""


class BadRequestError(ClientError):
    """400: the body is not JSON."""


class AuthenticationError(ClientError):
    """401: no key, an unknown, revoked or expired key."""


class PermissionDeniedError(ClientError):
    """403: the key lacks the scope, or is limited to other worlds."""


class NotFoundError(ClientError):
    """404: no such resource for this tenant."""


class RequestTimeoutError(ClientError):
    """408: the body did not arrive in time."""


class ConflictError(ClientError):
    """409: an id already used, or an Idempotency-Key reused with another request."""


class PayloadTooLargeError(ClientError):
    """413: the body is over the gateway's limit."""


class UnprocessableEntityError(ClientError):
    """422: a field or parameter is invalid; ``errors`` name each."""


class RateLimitError(ClientError):
    """429: the key's rate limit; ``retry_after`` says when to come back."""


class HeadersTooLargeError(ClientError):
    """431: too many headers, or too large."""


class ServerError(APIError):
    """A 5xx: the request may succeed later."""


class ServiceUnavailableError(ServerError):
    """503: the database or the service is away for now."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
    431: HeadersTooLargeError,
    503: ServiceUnavailableError,
}


def error_from_response(response: httpx.Response) -> APIError:
    """The typed error for an error answer (a body that is not a problem still gives one)."""
    status = response.status_code
    try:
        problem = Problem.model_validate(json.loads(response.content))
    except ValueError:
        reason = response.reason_phrase or "Error"
        problem = Problem(type="about:blank", title=reason, status=status, detail=response.text[:500])
    family = ClientError if status < 500 else ServerError
    return _BY_STATUS.get(status, family)(problem, response.headers)


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds, or an HTTP date (seconds from now)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
