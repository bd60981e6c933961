"""Resolve a receiver's host and check every address it resolves to, before anything connects."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from npcworld.egress.policy import AllowList, address_refusal, literal_address, name_refusal, url_refusal
from npcworld.errors import EgressRefusedError

__all__ = ["Resolver", "check_url", "checked_addresses", "system_resolver"]

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (getaddrinfo, in the loop's executor), first answer first.

    Raises:
        OSError: the name does not resolve (``socket.gaierror``).
    """
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def checked_addresses(
    host: str, port: int, allow: AllowList, resolve: Resolver = system_resolver
) -> list[str]:
    """Every address ``host`` resolves to, once each has passed the policy: connect only to these.

    A name allowed by ``allow`` skips the check; otherwise one refused address refuses the host (a
    name that mixes public and private answers is how DNS rebinding is usually tried).

    Raises:
        EgressRefusedError: the name or one of its addresses is refused (the message says which, why).
        OSError: the name does not resolve.
    """
    literal = literal_address(host)
    if literal is not None:
        candidates = [str(literal)]
    elif allow.allows_name(host):
        return await resolve(host, port)
    else:
        why = name_refusal(host)
        if why:
            raise EgressRefusedError(f"{host} is a {why}")
        candidates = await resolve(host, port)
    for candidate in candidates:
        address = literal_address(candidate)
        if address is None or allow.allows_address(address):
            continue
        why = address_refusal(address)
        if why:
            shown = host if literal is not None else f"{host} resolves to {candidate}, which"
            raise EgressRefusedError(f"{shown} is a {why}")
    return candidates


async def check_url(
    url: str, allow: AllowList, resolve: Resolver = system_resolver, timeout: float = 3.0
) -> None:
    """Refuse ``url`` as a receiver when its form, its host or what the host resolves to now is refused.

    Used when a webhook is registered. A name that does not resolve (yet) is accepted: each delivery
    resolves and checks it again, and connects only to the addresses it checked.

    Raises:
        EgressRefusedError: why the URL is refused.
    """
    why = url_refusal(url, allow)
    if why:
        raise EgressRefusedError(why)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        await asyncio.wait_for(checked_addresses(host, port, allow, resolve), timeout)
    except (OSError, TimeoutError):
        return
