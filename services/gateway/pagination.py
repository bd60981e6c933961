"""Cursor pagination, the same on every list: ``?cursor=&limit=`` in, ``items`` + ``next_cursor`` out.

A cursor is opaque to clients: URL-safe base64 of a small JSON position (the last item's sort key)
tagged with the resource it pages, so a cursor from one list is rejected by another.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Query
from pydantic import BaseModel, Field

from npcworld.errors import ValidationError

__all__ = ["CursorParam", "LimitParam", "Page", "decode_cursor", "encode_cursor", "next_cursor"]

T = TypeVar("T")

CursorParam = Annotated[str | None, Query(max_length=500, description="`next_cursor` of the previous page")]
LimitParam = Annotated[int, Query(ge=1, le=500, description="page size")]


class Page(BaseModel, Generic[T]):
    items: list[T]
    next_cursor: str | None = Field(
        default=None, description="pass as ?cursor= for the next page; null at the end"
    )


def encode_cursor(resource: str, position: Any) -> str:
    raw = json.dumps({"r": resource, "p": position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(resource: str, cursor: str | None, default: Any) -> Any:
    """The position inside ``cursor`` (``default`` when absent).

    Raises:
        ValidationError: the cursor is malformed or belongs to another list (field ``cursor``).
    """
    if cursor is None:
        return default
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("cursor is not one this API issued", field="cursor") from exc
    if not isinstance(data, dict) or data.get("r") != resource or type(data.get("p")) is not type(default):
        raise ValidationError("cursor is not one this API issued for this list", field="cursor")
    return data["p"]


def next_cursor(resource: str, items: list[Any], limit: int, position: Any) -> str | None:
    """A cursor after the last item when the page is full (the caller passes the last item's position)."""
    return encode_cursor(resource, position) if len(items) == limit else None
