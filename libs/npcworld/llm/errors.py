"""Errors of the LLM layer, placed in the project hierarchy (transient ones are worth a retry later).

PermanentError ── LLMOutputError (malformed after every retry), LLMRequestError (the provider refused the
request: bad request, auth, unknown model), ReplayMissingError (no recording for a request in replay mode)
TransientError ── ProviderUnavailableError (429/5xx/timeouts after every retry) ── CircuitOpenError
"""

from __future__ import annotations

from npcworld.errors import PermanentError, TransientError

__all__ = [
    "CircuitOpenError",
    "LLMOutputError",
    "LLMRequestError",
    "ProviderUnavailableError",
    "ReplayMissingError",
]


class LLMOutputError(PermanentError):
    """The model kept answering with output that does not validate against the prompt's schema."""

    def __init__(self, kind: str, attempts: int, reason: str) -> None:
        self.kind = kind
        self.attempts = attempts
        self.reason = reason
        super().__init__(f"{kind}: no valid output after {attempts} attempt(s): {reason}")


class LLMRequestError(PermanentError):
    """The provider rejected the request itself (HTTP 400/401/403/404/422); retrying cannot help."""


class ProviderUnavailableError(TransientError):
    """The provider timed out, rate-limited or failed (429/5xx); ``retry_after`` is the server's hint."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class CircuitOpenError(ProviderUnavailableError):
    """The circuit breaker is open: the provider failed repeatedly, so calls fail fast for a while."""


class ReplayMissingError(PermanentError):
    """Replay mode found no recorded answer for a request; the run being replayed never made this call."""

    def __init__(self, kind: str, request_hash: str, tenant_id: str) -> None:
        self.kind = kind
        self.request_hash = request_hash
        super().__init__(
            f"replay: no recorded {kind} answer for request {request_hash} of tenant {tenant_id!r} "
            "(the prompt, template version, model or parameters differ from the recorded run)"
        )
