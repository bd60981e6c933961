"""Dead-lettering: a record in Postgres and a message on the dead-letter topic, with the reason."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer
from psycopg import AsyncConnection

from npcworld.contracts import DEAD_LETTER, Envelope
from npcworld.messaging.record import KafkaRecord
from npcworld.telemetry import instruments

__all__ = ["DeadLetterer"]

logger = logging.getLogger(__name__)


@dataclass
class DeadLetterer:
    """Sends events a consumer gave up on to the dead-letter topic, never silently dropping them."""

    consumer: str
    producer: AIOKafkaProducer

    async def send(
        self,
        conn: AsyncConnection[Any],
        msg: KafkaRecord,
        reason: str,
        envelope: Envelope | None,
    ) -> None:
        """Record the dead letter in the caller's transaction and publish it before that commits.

        Publishing first means a crash can at worst publish a dead letter twice, never lose it;
        the processed-event row written here keeps a redelivery from dead-lettering it again.
        """
        headers = [
            *(msg.headers or ()),
            ("x-dlq-reason", reason.encode()[:4000]),
            ("x-dlq-consumer", self.consumer.encode()),
            ("x-dlq-source", f"{msg.topic}/{msg.partition}/{msg.offset}".encode()),
        ]
        await self.producer.send_and_wait(DEAD_LETTER.name, msg.value, key=msg.key, headers=headers)
        original = {k: v.decode(errors="replace") for k, v in msg.headers or ()}
        await conn.execute(
            "INSERT INTO dead_letters (consumer, topic, partition, \"offset\", event_id, event_type, reason,"
            " value, headers) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                self.consumer, msg.topic, msg.partition, msg.offset,
                envelope.event_id if envelope else None, envelope.type if envelope else None,
                reason, msg.value or b"", json.dumps(original),
            ),
        )
        if envelope is not None:
            await conn.execute(
                "INSERT INTO processed_events (consumer, event_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (self.consumer, envelope.event_id),
            )
        instruments().dead_letters.add(1, {"consumer": self.consumer, "topic": msg.topic})
        logger.error(
            "dead-lettered %s/%s/%s event_id=%s world_id=%s: %s",
            msg.topic, msg.partition, msg.offset,
            envelope.event_id if envelope else None, envelope.world_id if envelope else None, reason,
        )
