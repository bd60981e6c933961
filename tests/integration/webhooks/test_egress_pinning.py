"""A delivery connects only to an address it resolved and checked, keeping the receiver's name in the Host
header; a name resolving to a refused address (or mixing one in) is refused before anything connects."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from npcworld.egress import PinnedTransport, parse_allow_list
from npcworld.errors import EgressRefusedError
from tests.e2e.receiver import Receiver

NAME = "hooks.studio.test"  # .test never resolves in DNS: only our resolver answers it


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver(fail_first=0).start()
    yield server
    server.stop()


class Answers:
    """A resolver answering from a table and counting lookups (stands in for DNS, which we control)."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = list(addresses)
        self.lookups = 0

    async def __call__(self, host: str, port: int) -> list[str]:
        assert host == NAME
        self.lookups += 1
        return self.addresses


@pytest.fixture
async def client_for() -> AsyncIterator[object]:
    clients: list[httpx.AsyncClient] = []

    def make(answers: Answers, allow: str = "127.0.0.1") -> httpx.AsyncClient:
        transport = PinnedTransport(parse_allow_list(allow), resolve=answers)
        clients.append(httpx.AsyncClient(transport=transport, timeout=5))
        return clients[-1]

    yield make
    for client in clients:
        await client.aclose()


async def test_the_connection_goes_to_the_checked_address_with_the_receivers_name_as_host(
    receiver: Receiver, client_for: object
) -> None:
    port = receiver.url.rsplit(":", 1)[1]
    answers = Answers("127.0.0.1")
    client = client_for(answers)  # type: ignore[operator]
    r = await client.post(f"http://{NAME}:{port}/ok", content=b"{}")
    assert r.status_code == 200
    [got] = receiver.acked()
    assert got.headers["Host"] == f"{NAME}:{port}"
    assert answers.lookups == 1


@pytest.mark.parametrize(
    "addresses",
    [("10.0.0.5",), ("127.0.0.1", "10.0.0.5"), ("169.254.169.254",), ("::ffff:127.0.0.2",)],
)
async def test_a_name_resolving_to_a_refused_address_is_refused_and_nothing_is_sent(
    receiver: Receiver, client_for: object, addresses: tuple[str, ...]
) -> None:
    port = receiver.url.rsplit(":", 1)[1]
    client = client_for(Answers(*addresses))  # type: ignore[operator]
    with pytest.raises(EgressRefusedError, match=f"{NAME} resolves to"):
        await client.post(f"http://{NAME}:{port}/ok", content=b"{}")
    assert receiver.received == []


async def test_credentials_in_the_url_are_refused_before_any_lookup(
    receiver: Receiver, client_for: object
) -> None:
    answers = Answers("127.0.0.1")
    client = client_for(answers)  # type: ignore[operator]
    with pytest.raises(EgressRefusedError, match="credentials"):
        await client.post(f"http://user:pw@{NAME}:9/ok", content=b"{}")
    assert answers.lookups == 0 and receiver.received == []
