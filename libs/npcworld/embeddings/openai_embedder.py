"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp server)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import openai

from npcworld.embeddings._normalise import l2_normalise
from npcworld.errors import PermanentError, TransientError

__all__ = ["OpenAIEmbedder"]

_BATCH = 256


class OpenAIEmbedder:
    """Calls ``client.embeddings.create``; vectors are re-normalised because not every server normalises.

    ``dimensions`` is what the deployment expects: a response of any other length is an error, so
    a model swap behind the same name cannot silently change the space.
    """

    def __init__(
        self,
        *,
        model: str,
        dimensions: int,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        send_dimensions: bool = False,
    ) -> None:
        self._model = model
        self._dimensions = dimensions
        self._send_dimensions = send_dimensions
        self._client = client or openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "unused")

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            rows.extend(await self._call(list(texts[start : start + _BATCH])))
        if not rows:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        return l2_normalise(np.asarray(rows, dtype=np.float32))

    async def _call(self, batch: list[str]) -> list[list[float]]:
        extra = {"dimensions": self._dimensions} if self._send_dimensions else {}
        try:
            response = await self._client.embeddings.create(
                model=self._model,
                input=batch,
                encoding_format="float",
                **extra,  # type: ignore[arg-type]
            )
        except (
            openai.APIConnectionError,
            openai.APITimeoutError,
            openai.RateLimitError,
            openai.InternalServerError,
        ) as exc:
            raise TransientError(f"embeddings endpoint unavailable: {exc}") from exc
        except openai.APIError as exc:
            raise PermanentError(f"embeddings request rejected: {exc}") from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise PermanentError(f"embeddings endpoint returned {len(data)} vectors for {len(batch)} texts")
        for item in data:
            if len(item.embedding) != self._dimensions:
                raise PermanentError(
                    f"model {self._model!r} returned {len(item.embedding)}-dim vectors; "
                    f"EMBEDDING_DIMENSIONS is {self._dimensions}"
                )
        return [list(item.embedding) for item in data]
