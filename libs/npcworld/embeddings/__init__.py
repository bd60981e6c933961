"""Sentence embeddings behind one port: a local ONNX model (no network) and an OpenAI-compatible endpoint."""

from npcworld.embeddings.local import LOCAL_MODEL_ID, LocalMiniLMEmbedder
from npcworld.embeddings.openai_embedder import OpenAIEmbedder
from npcworld.embeddings.port import Embedder, EmbeddingSpace, EmbeddingSpaceMismatchError, check_space
from npcworld.embeddings.prefetch import PrefetchingEmbedder

__all__ = [
    "LOCAL_MODEL_ID",
    "Embedder",
    "EmbeddingSpace",
    "EmbeddingSpaceMismatchError",
    "LocalMiniLMEmbedder",
    "OpenAIEmbedder",
    "PrefetchingEmbedder",
    "check_space",
]
