"""Test support for the LLM layer: a fake OpenAI-compatible HTTP server with scriptable replies."""

from npcworld.llm.testing.fake_server import FakeOpenAIServer, RecordedRequest
from npcworld.llm.testing.replies import Reply, structured_responder

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply", "structured_responder"]
