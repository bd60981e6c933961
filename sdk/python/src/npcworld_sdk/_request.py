"""What the sync and async clients share: configuration from the environment, paths, bodies and pages."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

__all__ = ["DEFAULT_URL", "Page", "body", "config", "idempotency_key", "params", "path"]

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "npcworld-sdk-python/0.1"

T_co = TypeVar("T_co", covariant=True)


class Page(Protocol[T_co]):
    """Any page of a list: its items and the cursor of the next page (None on the last)."""

    @property
    def items(self) -> Sequence[T_co]: ...

    @property
    def next_cursor(self) -> str | None: ...


def config(base_url: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
    """The base URL and headers: arguments first, then ``NPCWORLD_URL`` and ``NPCWORLD_API_KEY``."""
    url = base_url or os.environ.get("NPCWORLD_URL") or DEFAULT_URL
    key = api_key or os.environ.get("NPCWORLD_API_KEY")
    if not key:
        raise ValueError("no API key: pass api_key=... or set NPCWORLD_API_KEY")
    return url.rstrip("/"), {"Authorization": f"Bearer {key}", "User-Agent": USER_AGENT}


def idempotency_key() -> str:
    return f"sdk-{uuid.uuid4()}"


def path(template: str, *segments: str) -> str:
    """``template`` with each ``{}`` filled by a URL-quoted segment."""
    return template.format(*(quote(s, safe="") for s in segments))


def body(fields: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """A JSON body without the fields left out (None); datetimes as ISO 8601."""
    if isinstance(fields, BaseModel):
        return fields.model_dump(mode="json", exclude_none=True)
    encoded = to_jsonable_python({k: v for k, v in fields.items() if v is not None})
    assert isinstance(encoded, dict)
    return encoded


def params(**fields: Any) -> dict[str, Any]:
    """Query parameters without those left out; lists repeat the parameter, datetimes are ISO 8601."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            continue
        out[name] = to_jsonable_python(value)
    return out
