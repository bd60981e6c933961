"""``HttpDeliveryLog``: the gateway's client of the webhooks service's internal API (WEBHOOKS_API_URL)."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import TypeAdapter

from npcworld.delivery_log.views import DeliveryDetail, DeliveryStatus, DeliveryView
from npcworld.errors import NotFoundError, PermanentError, TransientError
from npcworld.service_auth import client_headers

__all__ = ["HttpDeliveryLog"]

_VIEWS = TypeAdapter(list[DeliveryView])


class HttpDeliveryLog:
    """Every call names the tenant, world and subscription: a delivery of another answers 404.

    Errors: 404 → NotFoundError, another 4xx → PermanentError, unreachable or 5xx → TransientError.
    """

    def __init__(
        self, base_url: str, *, timeout: float = 10.0, client: httpx.AsyncClient | None = None
    ) -> None:
        self._client = client or httpx.AsyncClient(
            base_url=base_url.rstrip("/"), timeout=timeout, headers=client_headers()
        )
        self._owns_client = client is None

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def deliveries(
        self, scope: tuple[str, str, str], status: DeliveryStatus | None, after: int, limit: int
    ) -> list[DeliveryView]:
        """The subscription's deliveries after ``after`` (a delivery id), oldest first."""
        params = _scope(scope) | {"after": after, "limit": limit} | ({"status": status} if status else {})
        return _VIEWS.validate_python(await self._call("GET", "/internal/v1/deliveries", params=params))

    async def delivery(self, scope: tuple[str, str, str], delivery_id: int) -> DeliveryDetail:
        """One delivery with every attempt."""
        body = await self._call("GET", f"/internal/v1/deliveries/{delivery_id}", params=_scope(scope))
        return DeliveryDetail.model_validate(body)

    async def redeliver(self, scope: tuple[str, str, str], delivery_id: int) -> DeliveryView:
        """Queue the delivery again, with a fresh attempt budget; the delivery as it now stands."""
        path = f"/internal/v1/deliveries/{delivery_id}/redeliver"
        body = await self._call("POST", path, params=_scope(scope))
        return DeliveryView.model_validate(body)

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise TransientError(f"webhooks service unreachable: {exc!r}") from exc
        if response.status_code < 300:
            return response.json()
        detail = _detail(response)
        if response.status_code == 404:
            raise NotFoundError(detail)
        if response.status_code < 500:
            raise PermanentError(f"webhooks service refused the request ({response.status_code}): {detail}")
        raise TransientError(f"webhooks service failed ({response.status_code}): {detail}")


def _scope(scope: tuple[str, str, str]) -> dict[str, Any]:
    tenant_id, world_id, webhook_id = scope
    return {"tenant_id": tenant_id, "world_id": world_id, "webhook_id": webhook_id}


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    return str(body.get("detail") or body.get("title")) if isinstance(body, dict) else str(body)[:500]
