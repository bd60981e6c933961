"""Python client of the npcworld REST API: ``Client`` (sync) and ``AsyncClient``, typed models and errors,
retries with a kept Idempotency-Key, cursor iteration, a resumable event stream and webhook verification."""

from __future__ import annotations

from npcworld_sdk import models
from npcworld_sdk._async_base import AsyncEventStream
from npcworld_sdk._async_client import AsyncClient
from npcworld_sdk._errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    BadRequestError,
    ClientError,
    ConflictError,
    HeadersTooLargeError,
    NotFoundError,
    NpcworldError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ReplyTimeoutError,
    RequestTimeoutError,
    ServerError,
    ServiceUnavailableError,
    StreamError,
    UnprocessableEntityError,
)
from npcworld_sdk._models import ReplyOut, ReplyPending
from npcworld_sdk._retry import RetryPolicy
from npcworld_sdk._sse import ChatChunk, StreamEvent
from npcworld_sdk._sync_base import EventStream
from npcworld_sdk._sync_client import Client
from npcworld_sdk._webhooks import (
    SIGNATURE_HEADER,
    WebhookDelivery,
    WebhookSignatureError,
    parse_webhook,
    sign_webhook,
    verify_webhook,
)

__all__ = [
    "SIGNATURE_HEADER",
    "APIConnectionError",
    "APIError",
    "AsyncClient",
    "AsyncEventStream",
    "AuthenticationError",
    "BadRequestError",
    "ChatChunk",
    "Client",
    "ClientError",
    "ConflictError",
    "EventStream",
    "HeadersTooLargeError",
    "NotFoundError",
    "NpcworldError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "ReplyOut",
    "ReplyPending",
    "ReplyTimeoutError",
    "RequestTimeoutError",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailableError",
    "StreamError",
    "StreamEvent",
    "UnprocessableEntityError",
    "WebhookDelivery",
    "WebhookSignatureError",
    "models",
    "parse_webhook",
    "sign_webhook",
    "verify_webhook",
]

__version__ = "0.1.0"
