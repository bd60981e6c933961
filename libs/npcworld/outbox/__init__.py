"""Transactional outbox relay from the event store to Kafka."""

from npcworld.outbox.relay import OutboxRelay

__all__ = ["OutboxRelay"]
