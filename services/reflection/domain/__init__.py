"""Pure reflection logic: the importance accumulator and the mapping of insights to evidence and depth."""

from services.reflection.domain.accumulator import (
    COUNTED_KINDS,
    DEFAULT_THRESHOLD,
    Accumulator,
    Trigger,
    add_importance,
    complete_run,
    fail_run,
    run_key,
)
from services.reflection.domain.insights import (
    CitedInsight,
    ShownMemory,
    cite_evidence,
    merge_insights,
    prompt_order,
)

__all__ = [
    "COUNTED_KINDS",
    "DEFAULT_THRESHOLD",
    "Accumulator",
    "CitedInsight",
    "ShownMemory",
    "Trigger",
    "add_importance",
    "cite_evidence",
    "complete_run",
    "fail_run",
    "merge_insights",
    "prompt_order",
    "run_key",
]
