"""PrefetchingEmbedder: a batch's texts are embedded in one model call and then served from its cache."""

from __future__ import annotations

import numpy as np

from npcworld.embeddings import PrefetchingEmbedder
from tests.unit.memory.fakes import HashingEmbedder


async def test_prefetched_texts_cost_one_model_call_and_equal_the_models_vectors() -> None:
    inner = HashingEmbedder(16)
    embedder = PrefetchingEmbedder(inner)
    texts = [f"Klaus is reading book {i}" for i in range(20)]
    await embedder.prefetch([*texts, texts[0]])
    got = [await embedder.embed([t]) for t in texts]
    assert inner.calls == 1 and embedder.model_calls == 1
    assert np.array_equal(np.concatenate(got), await inner.embed(texts))
    assert (embedder.model, embedder.dimensions) == (inner.model, 16)


async def test_texts_not_prefetched_are_embedded_on_the_spot_and_clear_empties_the_cache() -> None:
    inner = HashingEmbedder(16)
    embedder = PrefetchingEmbedder(inner)
    await embedder.prefetch(["the stove is idle"])
    mixed = await embedder.embed(["the stove is idle", "the stove is burning"])
    assert mixed.shape == (2, 16) and inner.calls == 2
    embedder.clear()
    await embedder.embed(["the stove is idle"])
    assert inner.calls == 3
    assert (await embedder.embed([])).shape == (0, 16)
