"""Kafka clients with the project's defaults, and topic creation from the catalogue."""

from __future__ import annotations

import contextlib
import logging
import os

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError, TopicAlreadyExistsError

from npcworld.contracts import ALL_TOPICS, Topic
from npcworld.errors import InfraError

__all__ = ["ensure_topics", "make_consumer", "make_producer", "stop_consumer"]

logger = logging.getLogger(__name__)


def make_producer(bootstrap: str, client_id: str) -> AIOKafkaProducer:
    """A producer that waits for every replica and sends at once: what it is handed together (the relay
    sends a drained batch before it waits for any of it) still goes out together, and a lone event does
    not wait a linger time (2 ms here was half of the relay's time per chat line)."""
    return AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        client_id=client_id,
        acks="all",
        linger_ms=0,
        max_batch_size=256 * 1024,
        request_timeout_ms=15000,
    )


def make_consumer(bootstrap: str, group_id: str, topics: list[str], *, max_records: int) -> AIOKafkaConsumer:
    """A group consumer with manual offset commits (offsets follow the database commit).

    With KAFKA_GROUP_INSTANCE_ID set (one value per replica: ``npcworld run`` sets it, a StatefulSet would
    use the pod name) the consumer is a static group member: when its process is killed and started again,
    the new consumer takes the old one's partitions at once instead of waiting for the dead member's session
    to expire and the group to rebalance (measured on the embedded broker: 18 s after a SIGKILL, 8 s static).
    Two running replicas must never share a value: the broker would fence one of them."""
    instance = os.environ.get("KAFKA_GROUP_INSTANCE_ID") or None
    return AIOKafkaConsumer(
        *topics,
        bootstrap_servers=bootstrap,
        group_id=group_id,
        client_id=group_id,
        group_instance_id=f"{group_id}-{instance}" if instance else None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=max_records,
        # The broker may not answer a waiting fetch early when data arrives (Tansu does not): every hop
        # waits up to this long, and every idle consumer asks this often. KAFKA_FETCH_MAX_WAIT_MS.
        fetch_max_wait_ms=fetch_max_wait_ms(),
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
    )


async def stop_consumer(consumer: AIOKafkaConsumer) -> None:
    """Stop ``consumer`` and leave its group, so the group's next member (the process restarted, another
    instance) gets the partitions at once.

    aiokafka leaves a group on stop only from a generation above 0, Kafka's first generation being 1; the
    embedded broker (Tansu) numbers its first generation 0, so a dynamic member that never saw a rebalance
    stopped without leaving, and the next consumer of the group waited for the old member's session to
    expire: 18 s to start instead of 5 s (the broker's join delay). Static members (KAFKA_GROUP_INSTANCE_ID)
    never leave on stop, by design."""
    coordinator = getattr(consumer, "_coordinator", None)
    if (coordinator is not None and getattr(coordinator, "generation", None) == 0
            and getattr(coordinator, "_group_instance_id", None) is None):
        coordinator.generation = 1  # the generation is not sent with LeaveGroup; it only gates the request
    await consumer.stop()


def fetch_max_wait_ms() -> int:
    return int(os.environ.get("KAFKA_FETCH_MAX_WAIT_MS", "10"))


def max_partitions() -> int:
    """KAFKA_MAX_PARTITIONS caps every topic's partitions when set (the embedded single-machine broker
    spends CPU on every partition of every fetch; one consumer per service needs few)."""
    return int(os.environ.get("KAFKA_MAX_PARTITIONS", "0"))


async def ensure_topics(bootstrap: str, topics: tuple[Topic, ...] = ALL_TOPICS, replication: int = 1) -> None:
    """Create the catalogue's topics that do not exist yet (idempotent)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="npcworld-admin")
    try:
        await admin.start()
    except KafkaConnectionError as exc:
        raise InfraError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    try:
        existing = set(await admin.list_topics())
        cap = max_partitions()
        missing = [NewTopic(t.name, min(t.partitions, cap) if cap > 0 else t.partitions, replication)
                   for t in topics if t.name not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(missing)
            logger.info("created topics %s", [t.name for t in missing])
    finally:
        await admin.close()
