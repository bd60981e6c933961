"""The memory service: memory streams, importance, embeddings and retrieval (DESIGN.md "The agent model")."""
