"""The shape of a consumed Kafka record that the messaging code reads.

aiokafka ships no type information (``ConsumerRecord`` is ``Any`` to the type checker), so the consumer loop,
the poll ordering and dead-lettering are typed against this protocol instead; aiokafka's
``ConsumerRecord[bytes, bytes]`` satisfies it, and so does any test double with these attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["KafkaRecord", "header"]


class KafkaRecord(Protocol):
    """A consumed record: where it came from, its key and value, and its headers."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def offset(self) -> int: ...

    @property
    def key(self) -> bytes | None: ...

    @property
    def value(self) -> bytes | None: ...

    @property
    def headers(self) -> Sequence[tuple[str, bytes]]: ...


def header(record: KafkaRecord, name: str) -> str | None:
    """The value of the record's header ``name`` (the relay sets ``event_type``, ``event_id``, ``seq`` and
    ``lane``), or None when it has none."""
    for key, value in record.headers or ():
        if key == name:
            return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return None
