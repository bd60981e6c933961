"""The async client's administration calls: the tenant, keys and player sessions, the world clock and
places, and webhooks (``AsyncClient`` holds them with the rest)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Literal

from npcworld_sdk._async_base import AsyncBase
from npcworld_sdk._models import (
    Accepted,
    ClockOut,
    DeliveryDetail,
    DeliveryOut,
    ForgottenOut,
    KeyCreated,
    KeyOut,
    PageDeliveryOut,
    PageKeyOut,
    PageWebhookOut,
    SectorDef,
    SessionOut,
    TenantCreated,
    TenantOut,
    TreeOut,
    WebhookCreated,
    WebhookOut,
)
from npcworld_sdk._request import body, params, path

__all__ = ["AsyncAdmin", "Scope"]

Scope = Literal["read", "chat", "play", "write", "voice", "admin"]


class AsyncAdmin(AsyncBase):
    """Keys, sessions, clock, places and webhooks."""

    # -- tenant, keys, player sessions

    async def tenant(self) -> TenantOut:
        return await self.fetch(TenantOut, "GET", "/v1/tenant")

    async def create_tenant(self, name: str, *, idempotency_key: str | None = None) -> TenantCreated:
        """A new tenant and its admin key (the client's key must be the operator secret)."""
        return await self.fetch(
            TenantCreated, "POST", "/v1/tenants", json=body({"name": name}), idempotency_key=idempotency_key
        )

    async def create_key(
        self,
        name: str,
        scopes: Sequence[Scope],
        *,
        rate_per_second: float | None = None,
        burst: int | None = None,
        worlds: Sequence[str] | None = None,
        expires_at: datetime | None = None,
        idempotency_key: str | None = None,
    ) -> KeyCreated:
        fields = {
            "name": name,
            "scopes": list(scopes),
            "rate_per_second": rate_per_second,
            "burst": burst,
            "worlds": list(worlds) if worlds is not None else None,
            "expires_at": expires_at,
        }
        return await self.fetch(
            KeyCreated, "POST", "/v1/keys", json=body(fields), idempotency_key=idempotency_key
        )

    async def list_keys(self, *, cursor: str | None = None, limit: int | None = None) -> PageKeyOut:
        return await self.fetch(PageKeyOut, "GET", "/v1/keys", params=params(cursor=cursor, limit=limit))

    def iter_keys(self, *, page_size: int | None = None) -> AsyncIterator[KeyOut]:
        return self.iterate(lambda cursor: self.list_keys(cursor=cursor, limit=page_size))

    async def get_key(self, key_id: str) -> KeyOut:
        return await self.fetch(KeyOut, "GET", path("/v1/keys/{}", key_id))

    async def revoke_key(self, key_id: str) -> None:
        """Revoke a key or end a player session (effective at once)."""
        await self.request("DELETE", path("/v1/keys/{}", key_id))

    async def forget_player(self, player_id: str) -> ForgottenOut:
        """Forget a player in every world (admin): what it said reads ``[forgotten]`` at once, and its
        memories and relationships go; a player that never said anything is a ``NotFoundError``."""
        return await self.fetch(ForgottenOut, "DELETE", path("/v1/players/{}", player_id))

    async def create_session(
        self,
        world_id: str,
        player_id: str,
        *,
        ttl_seconds: int | None = None,
        idempotency_key: str | None = None,
    ) -> SessionOut:
        """A player session token: ``chat`` in this world only, as this player only, until it expires."""
        return await self.fetch(
            SessionOut,
            "POST",
            path("/v1/worlds/{}/sessions", world_id),
            json=body({"player_id": player_id, "ttl_seconds": ttl_seconds}),
            idempotency_key=idempotency_key,
        )

    # -- simulation: clock, places, positions

    async def get_clock(self, world_id: str) -> ClockOut:
        return await self.fetch(ClockOut, "GET", path("/v1/worlds/{}/clock", world_id))

    async def set_clock(
        self,
        world_id: str,
        *,
        mode: Literal["realtime", "fast", "stepped"] | None = None,
        speed: float | None = None,
        step_seconds: float | None = None,
        paused: bool | None = None,
        until: datetime | None = None,
        idempotency_key: str | None = None,
    ) -> Accepted:
        """Change the world clock; fields left out keep their value."""
        fields = {
            "mode": mode,
            "speed": speed,
            "step_seconds": step_seconds,
            "paused": paused,
            "until": until,
        }
        return await self.fetch(
            Accepted,
            "POST",
            path("/v1/worlds/{}/clock", world_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    async def define_world(
        self, world_id: str, sectors: Sequence[SectorDef], *, idempotency_key: str | None = None
    ) -> Accepted:
        """A studio world's place tree: sectors → arenas → objects."""
        fields = {"sectors": [s.model_dump(mode="json", exclude_none=True) for s in sectors]}
        return await self.fetch(
            Accepted,
            "POST",
            path("/v1/worlds/{}/definition", world_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    async def tree(self, world_id: str, *, tiles: bool = False) -> TreeOut:
        return await self.fetch(
            TreeOut, "GET", path("/v1/worlds/{}/tree", world_id), params=params(tiles=tiles or None)
        )

    async def set_object_state(
        self, world_id: str, object_path: str, state: str, *, idempotency_key: str | None = None
    ) -> Accepted:
        return await self.fetch(
            Accepted,
            "POST",
            path("/v1/worlds/{}/object-states", world_id),
            json=body({"object_path": object_path, "state": state}),
            idempotency_key=idempotency_key,
        )

    async def move_npcs(
        self, world_id: str, moves: dict[str, str], *, idempotency_key: str | None = None
    ) -> Accepted:
        """Place NPCs (``{npc_id: place path}``), as a game that moves them itself does."""
        fields = {"moves": [{"npc_id": npc, "path": where} for npc, where in moves.items()]}
        return await self.fetch(
            Accepted,
            "POST",
            path("/v1/worlds/{}/positions", world_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    # -- webhooks

    async def create_webhook(
        self,
        world_id: str,
        url: str,
        *,
        event_types: Sequence[str] | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
    ) -> WebhookCreated:
        """A subscription; keep its ``secret`` (shown only here) to verify deliveries."""
        fields = {
            "url": url,
            "event_types": list(event_types) if event_types else None,
            "description": description,
        }
        return await self.fetch(
            WebhookCreated,
            "POST",
            path("/v1/worlds/{}/webhooks", world_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    async def list_webhooks(
        self, world_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> PageWebhookOut:
        return await self.fetch(
            PageWebhookOut,
            "GET",
            path("/v1/worlds/{}/webhooks", world_id),
            params=params(cursor=cursor, limit=limit),
        )

    def iter_webhooks(self, world_id: str, *, page_size: int | None = None) -> AsyncIterator[WebhookOut]:
        return self.iterate(lambda cursor: self.list_webhooks(world_id, cursor=cursor, limit=page_size))

    async def get_webhook(self, world_id: str, webhook_id: str) -> WebhookOut:
        return await self.fetch(WebhookOut, "GET", path("/v1/worlds/{}/webhooks/{}", world_id, webhook_id))

    async def update_webhook(
        self,
        world_id: str,
        webhook_id: str,
        *,
        url: str | None = None,
        event_types: Sequence[str] | None = None,
        description: str | None = None,
        active: bool | None = None,
    ) -> WebhookOut:
        fields = {
            "url": url,
            "event_types": list(event_types) if event_types is not None else None,
            "description": description,
            "active": active,
        }
        return await self.fetch(
            WebhookOut, "PATCH", path("/v1/worlds/{}/webhooks/{}", world_id, webhook_id), json=body(fields)
        )

    async def delete_webhook(self, world_id: str, webhook_id: str) -> None:
        await self.request("DELETE", path("/v1/worlds/{}/webhooks/{}", world_id, webhook_id))

    async def list_deliveries(
        self,
        world_id: str,
        webhook_id: str,
        *,
        status: Literal["pending", "delivered", "failed"] | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> PageDeliveryOut:
        return await self.fetch(
            PageDeliveryOut,
            "GET",
            path("/v1/worlds/{}/webhooks/{}/deliveries", world_id, webhook_id),
            params=params(status=status, cursor=cursor, limit=limit),
        )

    def iter_deliveries(
        self, world_id: str, webhook_id: str, *, page_size: int | None = None
    ) -> AsyncIterator[DeliveryOut]:
        return self.iterate(
            lambda cursor: self.list_deliveries(world_id, webhook_id, cursor=cursor, limit=page_size)
        )

    async def get_delivery(self, world_id: str, webhook_id: str, delivery_id: int) -> DeliveryDetail:
        return await self.fetch(
            DeliveryDetail,
            "GET",
            path("/v1/worlds/{}/webhooks/{}/deliveries/{}", world_id, webhook_id, str(delivery_id)),
        )

    async def redeliver(self, world_id: str, webhook_id: str, delivery_id: int) -> DeliveryOut:
        """Queue a delivery again now, with a fresh attempt budget."""
        return await self.fetch(
            DeliveryOut,
            "POST",
            path("/v1/worlds/{}/webhooks/{}/deliveries/{}/redeliver", world_id, webhook_id, str(delivery_id)),
        )
