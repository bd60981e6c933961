"""The OpenAI-compatible chat provider (OpenAI, vLLM, Ollama, llama.cpp server) on the ``openai`` client."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import openai

from npcworld.llm.backoff import parse_retry_after
from npcworld.llm.errors import LLMRequestError, ProviderUnavailableError
from npcworld.llm.prompts import Message
from npcworld.llm.types import ChatParams, ChatReply

__all__ = ["OpenAIProvider"]

# Statuses worth retrying: timeout, conflict, rate limit and every server error.
_TRANSIENT_STATUSES = frozenset({408, 409, 429})


class OpenAIProvider:
    """Chat completions through ``openai.AsyncOpenAI``; the client's own retries are off (ours decide)."""

    name = "openai"

    def __init__(self, *, model: str, base_url: str | None, api_key: str | None, timeout_s: float) -> None:
        self.model = model
        # Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the client insists on one.
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
        )

    def _request(self, messages: list[Message], params: ChatParams) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            # Lets proxies, logs and test servers see which prompt this is; real servers ignore it.
            "extra_headers": {"X-Npcworld-Prompt": params.prompt},
        }
        if params.response_format is not None:
            kwargs["response_format"] = params.response_format
        return kwargs

    async def chat(self, messages: list[Message], params: ChatParams) -> ChatReply:
        """Send one chat-completions request.

        Raises:
            ProviderUnavailableError: timeout, connection failure, 408/409/429 or 5xx.
            LLMRequestError: any other refusal (bad request, auth, unknown model).
        """
        with _translated():
            completion = await self._client.chat.completions.create(**self._request(messages, params))
        choice = completion.choices[0] if completion.choices else None
        text = (choice.message.content if choice else None) or ""
        usage = completion.usage
        if usage is not None:
            return ChatReply(text, usage.prompt_tokens, usage.completion_tokens)
        return _estimated(messages, text)

    async def chat_stream(
        self, messages: list[Message], params: ChatParams, on_text: Callable[[str], Awaitable[None]]
    ) -> ChatReply:
        """``chat`` with the answer streamed: ``on_text`` gets each piece of text as the server sends it.

        Raises: as ``chat`` (also when the connection breaks mid-stream).
        """
        text, usage = "", None
        with _translated():
            stream = await self._client.chat.completions.create(
                **self._request(messages, params), stream=True, stream_options={"include_usage": True}
            )
            async for chunk in stream:
                usage = chunk.usage or usage
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece:
                    text += piece
                    await on_text(piece)
        if usage is not None:
            return ChatReply(text, usage.prompt_tokens, usage.completion_tokens)
        return _estimated(messages, text)

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


def _estimated(messages: list[Message], text: str) -> ChatReply:
    # Some servers omit usage; estimate (about 4 characters a token) so budgets still count.
    prompt_chars = sum(len(m["content"]) for m in messages)
    return ChatReply(text, prompt_chars // 4 + 1, len(text) // 4 + 1)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """The openai client's errors as the LLM layer's: worth a retry, or refused."""
    try:
        yield
    except openai.APIStatusError as exc:
        status = exc.status_code
        if status in _TRANSIENT_STATUSES or status >= 500:
            retry_after = parse_retry_after(dict(exc.response.headers))
            raise ProviderUnavailableError(f"HTTP {status}: {exc.message}", retry_after) from exc
        raise LLMRequestError(f"HTTP {status}: {exc.message}") from exc
    except openai.APITimeoutError as exc:
        raise ProviderUnavailableError(f"timed out: {exc}") from exc
    except openai.APIConnectionError as exc:
        raise ProviderUnavailableError(f"connection failed: {exc}") from exc
    except openai.APIResponseValidationError as exc:
        raise ProviderUnavailableError(f"unreadable response: {exc}") from exc
