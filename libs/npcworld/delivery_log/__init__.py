"""The webhooks service's delivery log, read (and a delivery queued again) over its internal HTTP API: the
views both sides share and the gateway's client."""

from npcworld.delivery_log.http import HttpDeliveryLog
from npcworld.delivery_log.views import AttemptView, DeliveryDetail, DeliveryStatus, DeliveryView

__all__ = ["AttemptView", "DeliveryDetail", "DeliveryStatus", "DeliveryView", "HttpDeliveryLog"]
