"""The npcworld exception hierarchy, in one place.

NpcworldError
├── ConfigError            a setting is missing or invalid (fails at start, names the variable)
├── InfraError             an embedded component could not start, or a port/data dir is taken
├── ConcurrencyError       an append lost an optimistic-concurrency race on a stream version
├── NotFoundError          a resource does not exist (or is not visible to the tenant)
├── ValidationError        input rejected; carries the offending field
├── ConflictError          the request conflicts with what exists (an id already taken); safe to show
├── TransientError         worth retrying with backoff (connection loss, timeouts, serialization)
└── PermanentError         retrying cannot help; the event goes to the dead-letter topic
    ├── UnknownEventError  type or schema_version this build does not understand
    └── EgressRefusedError an outgoing request would reach a refused address (see npcworld.egress)
"""

from __future__ import annotations

__all__ = [
    "AlreadyStoredError",
    "ConcurrencyError",
    "ConfigError",
    "ConflictError",
    "EgressRefusedError",
    "InfraError",
    "NotFoundError",
    "NpcworldError",
    "PermanentError",
    "TransientError",
    "UnknownEventError",
    "ValidationError",
]


class NpcworldError(Exception):
    """Base of every error this project raises on purpose."""


class ConfigError(NpcworldError):
    """A setting is missing or has a bad value."""


class InfraError(NpcworldError):
    """An infrastructure component failed to start or is unavailable."""


class ConcurrencyError(NpcworldError):
    """An append expected a stream version that another writer already took."""

    def __init__(self, stream_id: str, expected_version: int, actual_version: int | None = None) -> None:
        self.stream_id = stream_id
        self.expected_version = expected_version
        self.actual_version = actual_version
        actual = "unknown" if actual_version is None else str(actual_version)
        super().__init__(
            f"stream {stream_id!r}: expected version {expected_version}, but it is at {actual}"
        )


class NotFoundError(NpcworldError):
    """The requested resource does not exist for this caller."""


class ValidationError(NpcworldError):
    """Input was rejected; ``field`` names the offending field."""

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class TransientError(NpcworldError):
    """A failure that may succeed when retried later."""


class PermanentError(NpcworldError):
    """A failure that retrying cannot fix."""


class ConflictError(NpcworldError):
    """The request conflicts with what exists (an id already taken). Its message is written for the caller:
    unlike a ``ConcurrencyError``'s, it names no internal stream or version."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class AlreadyStoredError(ConflictError):
    """An append found one of its events stored already: a request run again under its ``Idempotency-Key``
    after its first run was cut short (``npcworld.ids.ids_repeatable_from``)."""

    def __init__(self, stream_id: str) -> None:
        super().__init__("this request's events are stored already (by an earlier run of it under its"
                         " Idempotency-Key)")
        self.stream_id = stream_id


class UnknownEventError(PermanentError):
    """An event type or schema version this build does not know."""


class EgressRefusedError(PermanentError):
    """An outgoing request (a webhook delivery) would reach an address the egress policy refuses."""
