"""Instances of the local model share recent vectors: a text embedded twice in a process runs once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from npcworld.embeddings import LocalMiniLMEmbedder


async def test_a_text_embedded_by_one_instance_is_not_run_through_the_model_again_by_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = LocalMiniLMEmbedder(), LocalMiniLMEmbedder()
    texts = ["Wilma is repainting the boathouse door", "a heron stands in the shallows at dawn"]
    before = await first.embed(texts)
    encoded: list[list[str]] = []
    run = LocalMiniLMEmbedder._encode

    def counting(self: LocalMiniLMEmbedder, batch: list[str]) -> npt.NDArray[np.float32]:
        encoded.append(batch)
        return run(self, batch)

    monkeypatch.setattr(LocalMiniLMEmbedder, "_encode", counting)
    again = second.embed_sync([texts[1], "a brand new sentence nobody embedded yet", texts[0]])
    assert encoded == [["a brand new sentence nobody embedded yet"]]
    assert np.array_equal(again[0], before[1]) and np.array_equal(again[2], before[0])
