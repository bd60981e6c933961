"""Embedded infrastructure for one machine, no setup: Postgres + pgvector and a Kafka-compatible broker."""

from launcher.embedded.stack import DEFAULT_KAFKA_PORT, EmbeddedStack, StackState

__all__ = ["DEFAULT_KAFKA_PORT", "EmbeddedStack", "StackState"]
