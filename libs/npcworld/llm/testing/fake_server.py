"""A fake OpenAI-compatible HTTP server on 127.0.0.1 (random port) for tests of the real client path:
chat completions and embeddings, a queue of scripted replies, an outage switch, and a request log."""

from __future__ import annotations

import asyncio
import hashlib
import math
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from npcworld.llm.testing.replies import Reply, structured_responder

__all__ = ["FakeOpenAIServer", "RecordedRequest"]

Responder = Callable[[dict[str, Any], str], Reply]


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received."""

    path: str
    body: dict[str, Any]
    prompt: str


class FakeOpenAIServer:
    """Serves ``/v1/chat/completions`` and ``/v1/embeddings`` from a background thread.

    Chat requests take the next queued ``Reply``; with the queue empty, ``responder`` answers (by default
    a valid answer for each project prompt). ``down`` answers every request with HTTP 503.
    """

    def __init__(self, responder: Responder = structured_responder, embedding_dims: int = 8) -> None:
        self.responder = responder
        self.embedding_dims = embedding_dims
        self.down = False
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The ``OPENAI_BASE_URL`` pointing at this server."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_count(self) -> int:
        """Chat-completions requests received so far."""
        return sum(1 for r in self.requests if r.path.endswith("/chat/completions"))

    def enqueue(self, *replies: Reply) -> None:
        """Script the next chat answers, in order."""
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> FakeOpenAIServer:
        """Listen on a free port and serve in a daemon thread; returns once it accepts connections."""
        routes = [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/embeddings", self._embeddings, methods=["POST"]),
        ]
        config = uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off", ws="none")
        self._server = uvicorn.Server(config)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._server.force_exit = True  # do not wait for scripted slow replies to finish
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        prompt = request.headers.get("x-npcworld-prompt", "")
        with self._lock:
            self.requests.append(RecordedRequest(request.url.path, body, prompt))
            queued = self._queue.popleft() if self._queue else None
        if self.down:
            return _error(503, "service unavailable (fake outage)", {})
        reply = queued or self.responder(body, prompt)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.status != 200:
            return _error(reply.status, f"scripted HTTP {reply.status}", reply.headers)
        return JSONResponse(
            {
                "id": f"chatcmpl-fake-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.tokens_in,
                    "completion_tokens": reply.tokens_out,
                    "total_tokens": reply.tokens_in + reply.tokens_out,
                },
            },
            headers=reply.headers,
        )

    async def _embeddings(self, request: Request) -> JSONResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(RecordedRequest(request.url.path, body, ""))
        if self.down:
            return _error(503, "service unavailable (fake outage)", {})
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": self._vector(str(t))}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(str(t).split()) for t in texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        raw = [digest[i % len(digest)] / 255 - 0.5 for i in range(self.embedding_dims)]
        norm = math.sqrt(sum(v * v for v in raw)) or 1.0
        return [v / norm for v in raw]


def _error(status: int, message: str, headers: dict[str, str]) -> JSONResponse:
    body = {"error": {"message": message, "type": "fake_error", "param": None, "code": str(status)}}
    return JSONResponse(body, status_code=status, headers=headers)
