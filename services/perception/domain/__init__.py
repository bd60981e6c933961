"""Pure perception domain: layouts, vision and spatial memory."""

from services.perception.domain.layout import Layout, Tile
from services.perception.domain.vision import (
    ATTENTION_BANDWIDTH,
    VISION_RADIUS,
    Body,
    Percept,
    new_percepts,
    perceive,
    visible_places,
)

__all__ = [
    "ATTENTION_BANDWIDTH",
    "VISION_RADIUS",
    "Body",
    "Layout",
    "Percept",
    "Tile",
    "new_percepts",
    "perceive",
    "visible_places",
]
