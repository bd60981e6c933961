"""Messaging: the one consumer loop, Kafka client defaults, retry policy and dead-lettering."""

from npcworld.messaging.dead_letter import DeadLetterer
from npcworld.messaging.heartbeat import Heartbeat
from npcworld.messaging.kafka import ensure_topics, make_consumer, make_producer
from npcworld.messaging.loop import ConsumerLoop, Handler, Prepare, Prepared
from npcworld.messaging.retry import TRANSIENT_ERRORS, RetryPolicy

__all__ = [
    "TRANSIENT_ERRORS",
    "ConsumerLoop",
    "DeadLetterer",
    "Handler",
    "Heartbeat",
    "Prepare",
    "Prepared",
    "RetryPolicy",
    "ensure_topics",
    "make_consumer",
    "make_producer",
]
