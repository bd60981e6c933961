"""Headless simulation runs (``npcworld simulate``) and the paper's end-to-end metrics."""

from launcher.simulation.metrics import (
    Conversation,
    Diffusion,
    LlmCall,
    Sighting,
    acquaintances_from_seeds,
    attendance,
    density,
    diffusion,
    llm_usage,
    mentions,
    mutual_edges,
)
from launcher.simulation.report import WorldFacts, build_report, comparable, to_markdown

__all__ = [
    "Conversation",
    "Diffusion",
    "LlmCall",
    "Sighting",
    "WorldFacts",
    "acquaintances_from_seeds",
    "attendance",
    "build_report",
    "comparable",
    "density",
    "diffusion",
    "llm_usage",
    "mentions",
    "mutual_edges",
    "to_markdown",
]
