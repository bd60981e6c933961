"""Webhook receivers must be public: every non-public address form is refused, naming why, unless the
operator's allow-list names it; names are judged by every address they resolve to."""

from __future__ import annotations

import ipaddress

import pytest

from npcworld.egress import (
    address_refusal,
    check_url,
    checked_addresses,
    parse_allow_list,
    url_refusal,
)
from npcworld.errors import EgressRefusedError

NONE = parse_allow_list("")


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (CGNAT)"),
        ("100.127.255.254", "shared (CGNAT)"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fd12:3456::1", "unique-local"),
        ("fc00::1", "unique-local"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("::ffff:100.64.0.1", "shared (CGNAT)"),
        ("2002:a00:1::1", "private"),  # 6to4 carrying 10.0.0.1
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 carrying 127.0.0.1
        ("192.0.2.10", ""),  # documentation range: not publicly routable, refused either way
    ],
)
def test_non_public_addresses_are_refused_and_the_reason_names_the_kind(address: str, why: str) -> None:
    reason = address_refusal(ipaddress.ip_address(address))
    assert reason is not None and why in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://user:secret@hooks.example.org/in", "credentials"),
        ("https://token@hooks.example.org/in", "credentials"),
        ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"),
        ("http://METADATA.Google.Internal./x", "cloud metadata host"),
        ("http://localhost./in", "loopback host name"),
        ("http://hooks.localhost:8080/in", "loopback host name"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "cloud metadata address"),
        ("http://[::ffff:a00:1]/in", "private"),
        ("http://10.0.0.8:8080/in", "private"),
        ("ftp://hooks.example.org/in", "http and https"),
    ],
)
def test_urls_are_refused_by_form_before_any_lookup(url: str, why: str) -> None:
    reason = url_refusal(url, NONE)
    assert reason is not None and why in reason


def test_the_allow_list_lets_named_hosts_and_networks_through_and_nothing_else() -> None:
    allow = parse_allow_list(" 127.0.0.1, localhost ,10.8.0.0/16,[::1]")
    assert url_refusal("http://127.0.0.1:9000/hook", allow) is None
    assert url_refusal("http://LOCALHOST:9000/hook", allow) is None
    assert url_refusal("http://10.8.3.4/hook", allow) is None
    assert url_refusal("http://[::1]:9000/hook", allow) is None
    assert url_refusal("http://127.0.0.2/hook", allow) is not None
    assert url_refusal("http://10.9.0.1/hook", allow) is not None
    assert url_refusal("http://u:p@127.0.0.1/hook", allow) is not None  # credentials never pass


def test_a_bad_allow_list_entry_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a host"):
        parse_allow_list("127.0.0.1, not a host")


def _resolver(answers: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    async def resolve(host: str, port: int) -> list[str]:
        if host not in answers:
            raise OSError(f"{host} does not resolve")
        return answers[host]

    return resolve


async def test_a_name_is_refused_when_any_address_it_resolves_to_is_refused() -> None:
    resolve = _resolver({"hooks.studio.test": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(EgressRefusedError, match=r"resolves to 10\.0\.0\.7, which is a private address"):
        await checked_addresses("hooks.studio.test", 443, NONE, resolve)


async def test_a_name_resolving_only_to_public_addresses_yields_them_to_connect_to() -> None:
    resolve = _resolver({"hooks.studio.test": ["93.184.216.34", "2606:4700::1111"]})
    assert await checked_addresses("hooks.studio.test", 443, NONE, resolve) == [
        "93.184.216.34",
        "2606:4700::1111",
    ]


async def test_registration_refuses_what_a_name_resolves_to_now_and_accepts_one_not_resolving_yet() -> None:
    resolve = _resolver({"rebind.studio.test": ["169.254.169.254"]})
    with pytest.raises(EgressRefusedError, match="cloud metadata"):
        await check_url("https://rebind.studio.test/in", NONE, resolve)
    await check_url("https://not-yet.studio.test/in", NONE, resolve)  # checked again on each delivery
    allowed = parse_allow_list("rebind.studio.test")
    await check_url("https://rebind.studio.test/in", allowed, resolve)
