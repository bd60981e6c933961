"""The embedder port and the rule that vectors from different embedding spaces never mix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from npcworld.errors import PermanentError

__all__ = ["Embedder", "EmbeddingSpace", "EmbeddingSpaceMismatchError", "check_space"]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one model's space."""

    @property
    def model(self) -> str:
        """The model label recorded with every vector."""
        ...

    @property
    def dimensions(self) -> int:
        """The vector length."""
        ...

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into an ``(len(texts), dimensions)`` array of unit vectors."""
        ...


@dataclass(frozen=True)
class EmbeddingSpace:
    """The model and dimension a vector belongs to; vectors compare only within one space."""

    model: str
    dimensions: int

    @classmethod
    def of(cls, embedder: Embedder) -> EmbeddingSpace:
        """The space an embedder writes into."""
        return cls(embedder.model, embedder.dimensions)

    def __str__(self) -> str:
        return f"{self.model} ({self.dimensions} dims)"


class EmbeddingSpaceMismatchError(PermanentError):
    """Stored vectors and the configured embedder belong to different spaces; re-embed first."""

    def __init__(self, stored: EmbeddingSpace, configured: EmbeddingSpace, scope: str) -> None:
        self.stored = stored
        self.configured = configured
        super().__init__(
            f"{scope} holds embeddings from {stored} but the configured embedder is {configured}; "
            "vectors from different models are not comparable: run the re-embed job or configure "
            f"EMBEDDING_MODEL={stored.model}"
        )


def check_space(stored: EmbeddingSpace | None, configured: EmbeddingSpace, scope: str) -> None:
    """Raise EmbeddingSpaceMismatchError unless ``stored`` is empty (None) or equal to ``configured``."""
    if stored is not None and stored != configured:
        raise EmbeddingSpaceMismatchError(stored, configured, scope)
