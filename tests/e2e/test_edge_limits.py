"""Limits at the edge, over a real socket: oversized, slow and header-stuffed requests are refused early."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import running_gateway
from tests.infra import BrokerForTests

pytestmark = pytest.mark.integration

MAX_BODY, BODY_TIMEOUT_S = 4096, 1.0


@pytest.fixture(scope="module")
def gateway(database_url: str, broker: BrokerForTests) -> Iterator[tuple[str, int]]:
    limits = {"GATEWAY_MAX_BODY_BYTES": str(MAX_BODY), "GATEWAY_BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT_S),
              "GATEWAY_MAX_HEADERS": "50"}
    with running_gateway(database_url, broker, **limits) as url:
        parts = urlsplit(url)
        yield str(parts.hostname), int(parts.port or 80)


def _exchange(address: tuple[str, int], head: str, body_parts: tuple[bytes, ...] = (),
              pause: float = 0.0) -> tuple[int, dict[str, object], float]:
    """Send ``head`` and the body parts (``pause`` s apart); the status, problem body and seconds taken."""
    started = time.monotonic()
    with socket.create_connection(address, timeout=15) as sock:
        sock.sendall(head.encode())
        for part in body_parts:
            if select.select([sock], [], [], 0)[0]:
                break  # the gateway has answered: a client stops sending, as an HTTP client does
            try:
                sock.sendall(part)
            except OSError:
                break  # the gateway answered and closed already
            time.sleep(pause)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass  # the gateway closed with part of the body unread (a reset after its answer)
    took = time.monotonic() - started
    status_line, _, rest = answer.partition(b"\r\n")
    _, _, body = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(body), took


def _head(method: str, path: str, extra: str = "", length: int | None = None) -> str:
    length_line = f"Content-Length: {length}\r\n" if length is not None else "Transfer-Encoding: chunked\r\n"
    return (f"{method} {path} HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n{length_line}"
            f"{extra}\r\n")


def test_a_declared_oversized_body_is_refused_before_it_is_sent(gateway: tuple[str, int]) -> None:
    status, problem, took = _exchange(gateway, _head("POST", "/v1/worlds", length=20 * 1024 * 1024))
    assert status == 413 and problem["status"] == 413
    assert str(MAX_BODY) in str(problem["detail"])
    assert took < 5  # nothing of the 20 MB was waited for


def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit(gateway: tuple[str, int]) -> None:
    chunk = b"a" * 1024
    parts = tuple(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(64))  # 64 KiB if all were read
    status, problem, _ = _exchange(gateway, _head("POST", "/v1/worlds"), parts)
    assert status == 413 and problem["title"] == "Content Too Large"


def test_a_body_that_trickles_in_is_cut_off_at_the_timeout(gateway: tuple[str, int]) -> None:
    parts = tuple(b"{" if i == 0 else b" " for i in range(60))  # 60 bytes, one every 0.2 s: 12 s in all
    status, problem, took = _exchange(gateway, _head("POST", "/v1/worlds", length=100), parts, pause=0.2)
    assert status == 408, problem
    assert BODY_TIMEOUT_S <= took < BODY_TIMEOUT_S + 4


def test_too_many_headers_are_refused(gateway: tuple[str, int]) -> None:
    extra = "".join(f"X-Filler-{i}: {i}\r\n" for i in range(2000))
    status, problem, _ = _exchange(gateway, _head("GET", "/v1/worlds", extra, length=0))
    assert status == 431 and "50" in str(problem["detail"])


def test_a_request_within_the_limits_goes_through(gateway: tuple[str, int]) -> None:
    status, problem, _ = _exchange(gateway, _head("POST", "/v1/worlds", "Connection: close\r\n", length=2),
                                   (b"{}",))
    assert status == 401, problem  # reached authentication: the limits let it pass
