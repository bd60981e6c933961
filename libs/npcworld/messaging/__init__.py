"""Messaging: the one consumer loop, its routes (two-phase handlers), Kafka client defaults, retry policy and
dead-lettering."""

from npcworld.messaging.dead_letter import DeadLetterer
from npcworld.messaging.heartbeat import Heartbeat
from npcworld.messaging.kafka import ensure_topics, make_consumer, make_producer
from npcworld.messaging.loop import ConsumerLoop
from npcworld.messaging.retry import TRANSIENT_ERRORS, RetryPolicy
from npcworld.messaging.routes import Gather, Route, Routes, on

__all__ = [
    "TRANSIENT_ERRORS",
    "ConsumerLoop",
    "DeadLetterer",
    "Gather",
    "Heartbeat",
    "RetryPolicy",
    "Route",
    "Routes",
    "ensure_topics",
    "make_consumer",
    "make_producer",
    "on",
]
