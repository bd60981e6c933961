"""Hand-written fakes of the memory service's ports: an importance rater and a tiny bag-of-words embedder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from services.memory.domain import ImportanceRatings, RatingContext

__all__ = ["FakeImportanceRater", "HashingEmbedder"]


class FakeImportanceRater:
    """Rates by keyword (a break-up or a party is poignant, the rest mundane) and records every call."""

    model = "fake-rater"

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], RatingContext]] = []

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        self.calls.append((tuple(descriptions), context))
        scores = tuple(9 if ("break" in d or "party" in d) else 2 for d in descriptions)
        return ImportanceRatings(scores, self.model)


class HashingEmbedder:
    """Words hashed into buckets: texts sharing words are similar; deterministic, instant, no model."""

    def __init__(self, dimensions: int = 16, model: str = "fake-hashing") -> None:
        self._dimensions = dimensions
        self._model = f"{model}-{dimensions}"
        self.calls = 0

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.sha256(word.encode()).digest()
                out[row, digest[0] % self._dimensions] += 1.0 if digest[1] % 2 else -1.0
            out[row, 0] += 0.01  # no zero vectors
        unit: npt.NDArray[np.float32] = out / np.linalg.norm(out, axis=1, keepdims=True)
        return unit
