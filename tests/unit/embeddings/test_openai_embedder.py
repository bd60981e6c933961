"""The OpenAI-compatible embedder, with the real openai client against an in-process fake endpoint."""

from __future__ import annotations

import json

import httpx
import numpy as np
import openai
import pytest

from npcworld.embeddings import OpenAIEmbedder
from npcworld.errors import PermanentError, TransientError


def fake_endpoint(dimensions: int, status: int = 200) -> httpx.MockTransport:
    """Answers POST /v1/embeddings like an OpenAI-compatible server, vectors in reverse index order."""

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/embeddings"
        body = json.loads(request.content)
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "nope", "type": "server_error"}})
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(text))] + [1.0] * (dimensions - 1)}
            for i, text in enumerate(body["input"])
        ]
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": data[::-1],
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )

    return httpx.MockTransport(handle)


def embedder(transport: httpx.MockTransport, dimensions: int = 8) -> OpenAIEmbedder:
    client = openai.AsyncOpenAI(
        base_url="http://fake/v1",
        api_key="k",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=transport),  # type: ignore[arg-type]
    )
    return OpenAIEmbedder(model="nomic-embed-text", dimensions=dimensions, client=client)


async def test_vectors_come_back_in_input_order_and_unit_length() -> None:
    vectors = await embedder(fake_endpoint(8)).embed(["a", "abcdef"])
    assert vectors.shape == (2, 8)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1, 0] > vectors[0, 0]  # the longer text's first component is larger


async def test_a_vector_of_another_dimension_is_a_clear_error() -> None:
    with pytest.raises(PermanentError, match="EMBEDDING_DIMENSIONS is 8"):
        await embedder(fake_endpoint(16), dimensions=8).embed(["a"])


async def test_a_server_error_is_transient() -> None:
    with pytest.raises(TransientError):
        await embedder(fake_endpoint(8, status=503)).embed(["a"])


async def test_a_rejected_request_is_permanent() -> None:
    with pytest.raises(PermanentError):
        await embedder(fake_endpoint(8, status=400)).embed(["a"])
