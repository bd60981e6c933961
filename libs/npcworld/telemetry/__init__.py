"""Telemetry: trace propagation through events, the shared metric instruments and SDK set-up."""

from npcworld.telemetry.instruments import Instruments, instruments, tracer
from npcworld.telemetry.propagation import (
    context_from_headers,
    context_from_trace,
    current_trace,
    kafka_headers,
)
from npcworld.telemetry.setup import configure_telemetry

__all__ = [
    "Instruments",
    "configure_telemetry",
    "context_from_headers",
    "context_from_trace",
    "current_trace",
    "instruments",
    "kafka_headers",
    "tracer",
]
