"""The topic catalogue names exactly the services whose consumer loop reads each topic: for a reaction
(``ROUTES``) or for a projection applier (a service folds copies made by a world fork, and other services'
events, into its read model), not for the events a service appends and folds itself."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from npcworld.contracts import ALL_TOPICS, EVENT_TYPES

SERVICES = sorted(p.parent.name for p in Path(__file__).resolve().parents[2].glob("services/*/handlers.py"))


def _read(service: str) -> set[str]:
    """The topics the service's consumer loop subscribes to (as ``ConsumerLoop.topics`` derives them)."""
    module = importlib.import_module(f"services.{service}.handlers")
    types = set(module.ROUTES)
    projection: Any = getattr(module, "PROJECTION", None)
    if service == "memory":  # its projection is built around the configured embedder; the types are fixed
        projection = importlib.import_module("services.memory.projection").build_projection(None)
    if projection is not None:  # less the types it folds where it appends them (never read back)
        types |= set(projection.appliers) - projection.appended_only
    return {EVENT_TYPES[t].topic.name for t in types}


@pytest.mark.parametrize("service", SERVICES)
def test_every_topic_a_service_reads_lists_it_as_a_consumer(service: str) -> None:
    listing = {t.name for t in ALL_TOPICS if service in t.consumers}
    read = _read(service)
    assert read <= listing, f"{service} reads {sorted(read - listing)} but the catalogue does not say so"


@pytest.mark.parametrize("topic", [t for t in ALL_TOPICS if t.key != "none"], ids=lambda t: t.name)
def test_no_service_is_listed_for_a_topic_it_does_not_read(topic: Any) -> None:
    for service in topic.consumers:
        if service in SERVICES:
            assert topic.name in _read(service), f"{topic.name} lists {service}, which does not read it"
