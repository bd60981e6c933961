"""An httpx transport that connects only to addresses it has just resolved and checked (DNS pinning).

The check and the connection use the same resolution, so a name that answers a public address to the
check and a private one to the connection (DNS rebinding) cannot get past it. Only the TCP connection is
pinned: the request keeps its URL, so the Host header and the TLS server name (SNI, certificate check)
are still the receiver's name.
"""

from __future__ import annotations

import asyncio
import typing

import httpcore
import httpx

from npcworld.egress.policy import AllowList, url_refusal
from npcworld.egress.resolve import Resolver, checked_addresses, system_resolver
from npcworld.errors import EgressRefusedError

__all__ = ["PinnedTransport"]

_RESOLVE_TIMEOUT_S = 5.0


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Resolves the origin's host itself, checks every address, then connects to a checked one."""

    def __init__(self, allow: AllowList, resolve: Resolver) -> None:
        self._allow = allow
        self._resolve = resolve
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await asyncio.wait_for(
                checked_addresses(host, port, self._allow, self._resolve), timeout or _RESOLVE_TIMEOUT_S
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
        except OSError as exc:  # does not resolve: may be temporary, so retried like a refused connection
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        failure: Exception = httpcore.ConnectError(f"{host} resolved to no address")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose connections pass the egress policy (never via an env proxy).

    A refused URL or address raises ``EgressRefusedError`` from the request (a permanent failure).
    """

    def __init__(
        self, allow: AllowList, resolve: Resolver = system_resolver, limits: httpx.Limits | None = None
    ) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        super().__init__(trust_env=False, limits=limits)
        self._allow = allow
        # httpx builds its httpcore pool without a way to pass a network backend: build it again with ours.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_PinnedBackend(allow, resolve),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        why = url_refusal(str(request.url), self._allow)
        if why:
            raise EgressRefusedError(why)
        return await super().handle_async_request(request)
