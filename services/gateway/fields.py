"""Field types of request bodies and queries: text that must say something, timestamps that carry a zone.

A refusal is a 422 problem naming the field (services/gateway/problems.py); see docs/api.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["Text", "ZonedDatetime", "blank_names", "not_blank"]


def not_blank(value: str) -> str:
    """Refuse text that is empty or only whitespace."""
    if not value.strip():
        raise ValueError("must not be blank (whitespace only)")
    return value


def _zoned(value: datetime) -> datetime:
    # A naive time would be read in the server's zone: ambiguous across studios, so it is refused.
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must carry a time zone (e.g. 2023-02-13T08:00:00Z or 2023-02-13T09:00:00+01:00)")
    return value


Text = Annotated[str, AfterValidator(not_blank)]
ZonedDatetime = Annotated[datetime, AfterValidator(_zoned)]


def blank_names(tree: object, path: str = "") -> list[str]:
    """Paths (``sectors[0].arenas[1].name``) of blank ``name``/``state`` texts in a nested pydantic tree."""
    found: list[str] = []
    if isinstance(tree, tuple | list):
        for i, item in enumerate(tree):
            found += blank_names(item, f"{path}[{i}]")
        return found
    fields = getattr(type(tree), "model_fields", None)
    if fields is None:
        return found
    for name in fields:
        value = getattr(tree, name)
        where = f"{path}.{name}" if path else name
        if name in ("name", "state") and isinstance(value, str) and not value.strip():
            found.append(where)
        elif isinstance(value, tuple | list) or hasattr(type(value), "model_fields"):
            found += blank_names(value, where)
    return found
