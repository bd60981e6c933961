"""How many processes each service runs as: ``npcworld run --instances memory=2,planning=2``.

The instances of a service are one Kafka consumer group: the broker splits the service's partitions (and so
its NPCs, which are partition keys) between them, and when one dies the others take its partitions over.
Exactly-once holds across instances as it does across restarts: an event's effects and its
``processed_events`` row commit together, and an instance that finds the row already there skips the event.

The instances of a service are dynamic group members (no ``KAFKA_GROUP_INSTANCE_ID``): on the embedded
broker a static member restarted beside a live one did not get back into the group (seen: the restarted
memory instance waited a minute without joining), while dynamic members rebalance once the dead one's session
(10 s) has expired. A service with one instance stays a static member, which gets its partitions back at
once after a restart. Each memory instance serves the internal retrieval API on a port of its own; every
process is told all of them (``MEMORY_API_URL`` lists them, and the reader moves on from one it cannot reach).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from launcher.private_ports import free_port

__all__ = ["CONSUMER_PROCESS", "MAX_INSTANCES", "instance_env", "instance_name", "parse_instances"]

# Consumers whose service runs another process under the service's name (the gateway's API).
CONSUMER_PROCESS = {"gateway": "gateway-projection"}

MAX_INSTANCES = 16
_ITEM = re.compile(r"^\s*([a-z_]+)\s*=\s*(\d+)\s*$")


def parse_instances(text: str, services: Sequence[str]) -> dict[str, int]:
    """``"memory=2,planning=3"`` → ``{"memory": 2, "planning": 3}``; ValueError saying what is wrong."""
    counts: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        match = _ITEM.match(item)
        if not match:
            raise ValueError(f"{item!r} is not SERVICE=COUNT (e.g. memory=2)")
        service, count = match.group(1), int(match.group(2))
        if service not in services:
            raise ValueError(f"unknown service {service!r} (services: {', '.join(services)})")
        if not 1 <= count <= MAX_INSTANCES:
            raise ValueError(f"{service}={count}: a service runs as 1 to {MAX_INSTANCES} instances")
        if service in counts:
            raise ValueError(f"{service} is given twice")
        counts[service] = count
    return counts


def instance_name(service: str, index: int) -> str:
    """The process name of a service's consumer's ``index``-th instance (1-based): ``memory``, ``memory-2``,
    …; the gateway's consumer is ``gateway-projection`` (``gateway`` is its API's process)."""
    base = CONSUMER_PROCESS.get(service, service)
    return base if index == 1 else f"{base}-{index}"


def instance_env(
    instances: Mapping[str, int], env: Mapping[str, str], *, memory_service: str = "memory"
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """What every process is told, and what each extra instance is told on top.

    Returns the shared variables to add (``MEMORY_API_URL`` naming every memory instance when there are
    several) and, per process name, its own (no static group-member id; a memory instance's API port).
    One instance of everything is exactly the usual run.
    """
    shared: dict[str, str] = {}
    own: dict[str, dict[str, str]] = {}
    for service, count in instances.items():
        if count > 1:  # dynamic group members (see the module docstring)
            for index in range(1, count + 1):
                own[instance_name(service, index)] = {"KAFKA_GROUP_INSTANCE_ID": ""}
    memories = instances.get(memory_service, 1)
    if memories > 1:
        host = env.get("MEMORY_API_HOST", "127.0.0.1")
        first = env.get("MEMORY_API_PORT", "8101")
        ports = [first] + [str(free_port(host)) for _ in range(memories - 1)]
        for index, port in enumerate(ports[1:], start=2):
            own[instance_name(memory_service, index)]["MEMORY_API_PORT"] = port
        reach = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        shared["MEMORY_API_URL"] = ",".join(f"http://{reach}:{port}" for port in ports)
    return shared, own


