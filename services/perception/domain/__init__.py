"""Pure perception domain: layouts, vision and spatial memory."""

from services.perception.domain.layout import Layout, Tile
from services.perception.domain.vision import (
    ATTENTION_BANDWIDTH,
    VISION_RADIUS,
    Body,
    Percept,
    StepPerception,
    new_percepts,
    perceive,
    perceive_step,
    seen_entity,
    visible_places,
)

__all__ = [
    "ATTENTION_BANDWIDTH",
    "VISION_RADIUS",
    "Body",
    "Layout",
    "Percept",
    "StepPerception",
    "Tile",
    "new_percepts",
    "perceive",
    "perceive_step",
    "seen_entity",
    "visible_places",
]
