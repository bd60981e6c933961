"""What the webhooks service's internal API answers about deliveries (one delivery, its attempts)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict

__all__ = ["AttemptView", "DeliveryDetail", "DeliveryStatus", "DeliveryView"]

DeliveryStatus = Literal["pending", "delivered", "failed"]


class DeliveryView(BaseModel):
    """One event on its way to one subscription."""

    model_config = ConfigDict(frozen=True)

    delivery_id: int
    webhook_id: str
    event_id: UUID
    seq: int
    event_type: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


class AttemptView(BaseModel):
    """One POST to the receiver and what came of it."""

    model_config = ConfigDict(frozen=True)

    attempt: int
    status_code: int | None
    error: str | None
    duration_ms: float
    attempted_at: datetime


class DeliveryDetail(BaseModel):
    model_config = ConfigDict(frozen=True)

    delivery: DeliveryView
    attempts: tuple[AttemptView, ...]
