"""gateway service: the studio-facing REST API under /v1."""
