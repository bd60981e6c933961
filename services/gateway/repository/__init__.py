"""All SQL of the gateway: tenants and keys, worlds, settled event reads, idempotency, webhooks, LLM usage,
and its read models of the simulation (``gw_*``)."""

from services.gateway.repository._events import EventReader
from services.gateway.repository._idempotency import Claimed, IdempotencyRecord, IdempotencyStore
from services.gateway.repository._keys import SCOPES, ApiKey, KeyRecord, KeyRepository, TenantRecord, hash_key
from services.gateway.repository._usage import UsageRepository, UsageRow
from services.gateway.repository._views import VIEW_TABLES, ViewRepository
from services.gateway.repository._webhooks import WebhookRecord, WebhookRepository
from services.gateway.repository._worlds import GatewayRepository

__all__ = [
    "SCOPES",
    "VIEW_TABLES",
    "ApiKey",
    "Claimed",
    "EventReader",
    "GatewayRepository",
    "IdempotencyRecord",
    "IdempotencyStore",
    "KeyRecord",
    "KeyRepository",
    "TenantRecord",
    "UsageRepository",
    "UsageRow",
    "ViewRepository",
    "WebhookRecord",
    "WebhookRepository",
    "hash_key",
]
