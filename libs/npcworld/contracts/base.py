"""Base class of every event payload: frozen, strict, tied to one topic and schema version."""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from npcworld.contracts.topics import Topic

__all__ = ["EventPayload"]

# Defaults that say "nothing": a field left at one of these is not written to the log (see ``stored``).
_EMPTY_DEFAULTS: tuple[Any, ...] = (None, (), 0, 0.0, "")


class EventPayload(BaseModel):
    """A payload model; subclasses name their event type, schema version and topic."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_type: ClassVar[str]
    schema_version: ClassVar[int] = 1
    topic: ClassVar[Topic]

    def stored(self) -> dict[str, Any]:
        """The payload as the event log stores it (JSON types): a field left at a default that says nothing
        (null, an empty list, zero, an empty string) is left out, and reading the event gives it back. A
        default that says something ("perceived", "high") is always written, so that changing it later never
        changes what an old event says. (Readers outside the log, the API and webhooks, see every field.)"""
        return self.model_dump(mode="json", exclude=self._unsaid())

    def stored_json(self) -> str:
        """``stored`` as a JSON document."""
        return self.model_dump_json(exclude=self._unsaid())

    @classmethod
    def filled(cls, stored: dict[str, Any]) -> dict[str, Any]:
        """A stored payload (JSON types) with the fields ``stored`` left out written again: what a reader
        outside the service code (a webhook's receiver) gets, every field present."""
        defaults = {name: cls.model_fields[name].default for name in _empty_default_fields(cls)}
        return {**{n: [] if d == () else d for n, d in defaults.items() if n not in stored}, **stored}

    def _unsaid(self) -> set[str]:
        fields = type(self).model_fields
        return {name for name in _empty_default_fields(type(self))
                if getattr(self, name) == fields[name].default}


@cache
def _empty_default_fields(cls: type[EventPayload]) -> tuple[str, ...]:
    """The fields of ``cls`` whose default says nothing (never a boolean's: False is a statement)."""
    return tuple(
        name for name, field in cls.model_fields.items()
        if any(type(field.default) is type(e) and field.default == e for e in _EMPTY_DEFAULTS)
    )
