"""Egress policy of outgoing webhook and validator requests: which receivers are refused, checked when one
is registered and again, resolved and pinned, on every request (see docs/webhooks.md); and their signature."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from npcworld.egress.policy import (
    AllowList,
    address_refusal,
    literal_address,
    name_refusal,
    parse_allow_list,
    url_refusal,
)
from npcworld.egress.resolve import Resolver, check_url, checked_addresses, system_resolver
from npcworld.egress.secrets import find_secret, new_secret, store_secret
from npcworld.egress.signing import SIGNATURE_HEADER, signature_header
from npcworld.egress.transport import PinnedTransport

__all__ = [
    "SIGNATURE_HEADER",
    "AllowHostsSetting",
    "AllowList",
    "PinnedTransport",
    "Resolver",
    "address_refusal",
    "check_url",
    "checked_addresses",
    "find_secret",
    "literal_address",
    "name_refusal",
    "new_secret",
    "parse_allow_list",
    "signature_header",
    "store_secret",
    "system_resolver",
    "url_refusal",
]


def _valid_allow_list(text: str) -> str:
    parse_allow_list(text)
    return text


# The WEBHOOK_ALLOW_HOSTS setting of the gateway and the dispatcher: a bad entry fails at start.
AllowHostsSetting = Annotated[str, AfterValidator(_valid_allow_list)]
