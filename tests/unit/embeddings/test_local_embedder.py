"""The local MiniLM embedder: 384-dim unit vectors, deterministic, independent of batching, sensible."""

from __future__ import annotations

import numpy as np

from npcworld.embeddings import LOCAL_MODEL_ID, Embedder, LocalMiniLMEmbedder
from npcworld.embeddings.local import length_batches

embedder = LocalMiniLMEmbedder()  # loads lazily: nothing happens until the first embed


async def test_vectors_are_384_dim_float32_unit_vectors_labelled_with_the_model() -> None:
    vectors = await embedder.embed(["Isabella is opening Hobbs Cafe", "Klaus is reading in the library"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (embedder.model, embedder.dimensions) == (LOCAL_MODEL_ID, 384)


async def test_a_text_gets_the_same_vector_alone_or_in_any_batch() -> None:
    text = "the stove in the cafe kitchen is burning"
    alone = await embedder.embed([text])
    batched = await embedder.embed(
        ["a", "a much longer sentence that pads the whole batch out considerably", text]
    )
    assert np.array_equal(alone[0], batched[2])


async def test_related_sentences_are_closer_than_unrelated_ones() -> None:
    party, invite, physics = await embedder.embed(
        [
            "Isabella is planning a Valentine's Day party",
            "Maria was invited to a party at the cafe",
            "the integral of a Gaussian over the real line",
        ]
    )
    assert float(party @ invite) > float(party @ physics)


async def test_embedding_nothing_returns_an_empty_matrix() -> None:
    assert (await embedder.embed([])).shape == (0, 384)


def test_the_local_embedder_satisfies_the_port() -> None:
    port: Embedder = embedder
    assert port.dimensions == 384


def test_texts_are_batched_with_others_of_similar_length_so_a_long_one_pads_no_short_one() -> None:
    lengths = [18, 250, 17, 20, 240, 19, 60]
    batches = length_batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # each text once
    assert batches == [[2, 0, 5, 3], [6], [4, 1]]  # shortest first; 60 and 240 never pad an 18


def test_a_batch_holds_at_most_its_size_of_texts_of_one_length() -> None:
    assert [len(b) for b in length_batches([12] * 70, size=32)] == [32, 32, 6]
