"""OpenTelemetry SDK set-up for entrypoints: traces to OTLP when configured, metrics for /metrics."""

from __future__ import annotations

import logging
import os

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

__all__ = ["configure_telemetry"]

logger = logging.getLogger(__name__)
_configured = False


def configure_telemetry(service_name: str, *, prometheus: bool = True) -> None:
    """Install the SDK once per process.

    Spans go to ``OTEL_EXPORTER_OTLP_ENDPOINT`` when it is set (the collector in docker-compose);
    metrics are exposed for the service's ``/metrics`` endpoint through the Prometheus reader.
    """
    global _configured
    if _configured:
        return
    _configured = True
    resource = Resource.create({"service.name": service_name, "service.namespace": "npcworld"})
    tracer_provider = TracerProvider(resource=resource)
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        logger.info("exporting traces to %s", os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"])
    trace.set_tracer_provider(tracer_provider)
    readers: list[MetricReader] = []
    if prometheus:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader

        readers.append(PrometheusMetricReader())
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))
