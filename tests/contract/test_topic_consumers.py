"""The topic catalogue names exactly the services whose handlers read each topic."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from npcworld.contracts import ALL_TOPICS, EVENT_TYPES

SERVICES = sorted(p.parent.name for p in Path(__file__).resolve().parents[2].glob("services/*/handlers.py"))


@pytest.mark.parametrize("service", SERVICES)
def test_every_topic_a_service_reads_lists_it_as_a_consumer(service: str) -> None:
    handlers = importlib.import_module(f"services.{service}.handlers").HANDLERS
    read = {EVENT_TYPES[t].topic.name for t in handlers}
    listing = {t.name for t in ALL_TOPICS if service in t.consumers}
    assert read <= listing, f"{service} reads {sorted(read - listing)} but the catalogue does not say so"


@pytest.mark.parametrize("topic", [t for t in ALL_TOPICS if t.key != "none"], ids=lambda t: t.name)
def test_no_service_is_listed_for_a_topic_it_does_not_read(topic: object) -> None:
    for service in topic.consumers:  # type: ignore[attr-defined]
        if service not in SERVICES:
            continue
        handlers = importlib.import_module(f"services.{service}.handlers").HANDLERS
        read = {EVENT_TYPES[t].topic.name for t in handlers}
        assert topic.name in read, f"{topic.name} lists {service}, which has no handler for it"  # type: ignore[attr-defined]
