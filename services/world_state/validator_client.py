"""Calls a world's validator about a decided action: a signed POST through the egress policy (resolved,
checked and pinned, as webhook deliveries are), bounded by the validator's deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

from npcworld.contracts import ActionDecided, ActionValidator, Envelope
from npcworld.egress import SIGNATURE_HEADER, AllowList, PinnedTransport, signature_header
from npcworld.errors import EgressRefusedError
from services.world_state.domain.validation import (
    MAX_ANSWER_BYTES,
    Answer,
    Failure,
    parse_answer,
    request_body,
)

__all__ = ["Consulted", "ValidatorClient"]


@dataclass(frozen=True)
class Consulted:
    """What ``validator`` answered about an action (or why it gave no usable answer)."""

    validator: ActionValidator
    outcome: Answer | Failure


class ValidatorClient:
    """One HTTP client for every validator call of the process (connections are kept alive)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    @classmethod
    @asynccontextmanager
    async def open(cls, allow: AllowList) -> AsyncIterator[ValidatorClient]:
        """A client whose connections pass the egress policy (``allow``: the development allow-list)."""
        async with httpx.AsyncClient(transport=PinnedTransport(allow), timeout=10.0) as client:
            yield cls(client)

    async def consult(
        self, validator: ActionValidator, secret: str | None, event: Envelope[ActionDecided]
    ) -> Answer | Failure:
        """POST the decided action in ``event`` to ``validator``; its answer, or the failure, within the
        validator's deadline (the deadline covers resolving, connecting, sending and reading)."""
        action = event.payload
        assert event.npc_id is not None
        if secret is None:
            return Failure("error", "the validator has no signing secret")
        body = request_body(validator, str(event.event_id), (event.world_id, event.npc_id),
                            event.world_time, action)
        stamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature_header(secret, stamp, body),
            "Npcworld-Event-Id": str(event.event_id),
            "Npcworld-Event-Type": event.type,
            "Npcworld-Validator-Id": validator.validator_id,
            "Npcworld-Timestamp": str(stamp),
        }
        try:
            async with asyncio.timeout(validator.deadline_ms / 1000):
                status, answer = await self._post(validator.url, body, headers)
        except (TimeoutError, httpx.TimeoutException):
            return Failure("timeout", f"no answer within {validator.deadline_ms} ms")
        except EgressRefusedError as exc:
            return Failure("error", f"refused by the egress policy: {exc}")
        except httpx.HTTPError as exc:
            return Failure("error", f"{type(exc).__name__}: {exc}")
        return parse_answer(status, answer)

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """The status and at most ``MAX_ANSWER_BYTES`` + 1 bytes of the answer (more is refused anyway)."""
        async with self._client.stream("POST", url, content=body, headers=headers) as response:
            read = bytearray()
            async for chunk in response.aiter_bytes():
                read += chunk
                if len(read) > MAX_ANSWER_BYTES:
                    break
            return response.status_code, bytes(read)
