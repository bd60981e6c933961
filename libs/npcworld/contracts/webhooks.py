"""A studio's webhook subscriptions of one world (npcworld.world.v1): registered, changed and deleted by the
gateway, folded by the webhooks service into the subscriptions it fans events out to.

A subscription's signing secret is not part of any event: the gateway keeps it apart from the event log
(``npcworld.egress.secrets``, shown to the studio once) and the webhooks service reads it there to sign.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import WORLD, Topic

__all__ = [
    "WEBHOOK_EVENT_TYPES", "WebhookChanged", "WebhookDeleted", "WebhookRegistered", "WebhookSubscription",
]


class WebhookSubscription(BaseModel):
    """Where a world's events of ``event_types`` (empty: every type) are POSTed, signed, while ``active``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    webhook_id: str = Field(min_length=1, max_length=100)
    url: str = Field(min_length=1, max_length=2000)
    event_types: tuple[str, ...] = Field(default=(), max_length=100)
    description: str = Field(default="", max_length=500)
    active: bool = True


class WebhookRegistered(EventPayload):
    """A new subscription: it receives the world's events stored after this one (after ``after_seq`` for a
    subscription from before these events existed, backfilled by migration 0114)."""

    event_type: ClassVar[str] = "WebhookRegistered"
    topic: ClassVar[Topic] = WORLD

    subscription: WebhookSubscription
    after_seq: int | None = Field(default=None, ge=0)


class WebhookChanged(EventPayload):
    """A subscription's new state (url, types, description, active), for the events stored after this one."""

    event_type: ClassVar[str] = "WebhookChanged"
    topic: ClassVar[Topic] = WORLD

    subscription: WebhookSubscription


class WebhookDeleted(EventPayload):
    """The subscription ends: nothing stored after this is delivered, and its pending deliveries fail."""

    event_type: ClassVar[str] = "WebhookDeleted"
    topic: ClassVar[Topic] = WORLD

    webhook_id: str = Field(min_length=1, max_length=100)


# The subscriptions' own events: folded by the webhooks service, never delivered to a subscription.
WEBHOOK_EVENT_TYPES: tuple[str, ...] = ("WebhookRegistered", "WebhookChanged", "WebhookDeleted")
