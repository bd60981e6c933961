"""The async client's transport: retries with backoff, Idempotency-Key, typed errors, pages and the
event stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from npcworld_sdk import _request
from npcworld_sdk._errors import APIConnectionError, APIError, StreamError, error_from_response
from npcworld_sdk._retry import RetryPolicy
from npcworld_sdk._sse import SSEParser, StreamEvent

__all__ = ["AsyncBase", "AsyncEventStream"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class AsyncBase:
    """Holds one ``httpx.AsyncClient``; close it with ``aclose()``, or use it as a context manager."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        url, headers = _request.config(base_url, api_key)
        self.base_url = url
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        json: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """Send one call, retrying as ``self.retry`` allows; a POST keeps one Idempotency-Key for all tries.

        ``timeout`` (seconds) replaces the client's for this call, as a call the server holds open needs.

        Raises:
            APIError: the subclass for the answer's status, once retries are spent or not allowed.
            APIConnectionError: no answer, once retries are spent or not allowed.
        """
        headers = {}
        if method == "POST":
            headers["Idempotency-Key"] = idempotency_key or _request.idempotency_key()
        limit = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    method, url, json=json, params=params, headers=headers, timeout=limit
                )
            except httpx.TransportError as exc:
                wait = self.retry.delay(attempt) if self.retry.retries_failure(method, exc) else None
                if wait is None:
                    raise APIConnectionError(f"{method} {url}: {exc!r}") from exc
            else:
                if response.status_code < 400:
                    return response
                retried = self.retry.retries_answer(response, attempt)
                wait = self.retry.delay(attempt, response.headers.get("Retry-After")) if retried else None
                if wait is None:
                    raise error_from_response(response)
            await asyncio.sleep(wait)
            attempt += 1

    async def fetch(self, model: type[M], method: str, url: str, **kwargs: Any) -> M:
        response = await self.request(method, url, **kwargs)
        return model.model_validate(response.json())

    async def fetch_list(self, model: type[M], url: str, **kwargs: Any) -> list[M]:
        response = await self.request("GET", url, **kwargs)
        return [model.model_validate(item) for item in response.json()]

    async def iterate(
        self, fetch_page: Callable[[str | None], Awaitable[_request.Page[T]]], cursor: str | None = None
    ) -> AsyncIterator[T]:
        """Every item of a cursor-paged list, fetching the next page when the last is used up."""
        while True:
            page = await fetch_page(cursor)
            for item in page.items:
                yield item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


class AsyncEventStream:
    """A world's events as they are appended (SSE), resumed after the last one seen when the stream breaks.

    ``last_event_id`` is the ``seq`` of the last event yielded: pass it as ``last_event_id`` to a later
    ``stream_events`` to go on where this one stopped, in this process or another.
    """

    def __init__(
        self,
        base: AsyncBase,
        url: str,
        query: dict[str, Any],
        last_event_id: str | None,
        read_timeout: float | None,
    ) -> None:
        self._base, self._url, self._query = base, url, query
        self.last_event_id = last_event_id
        self._read_timeout = read_timeout
        self._response: httpx.Response | None = None
        self._closed = False

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        if self._response is not None:
            await self._response.aclose()
            self._response = None

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[StreamEvent]:
        failures = 0
        while not self._closed:
            try:
                async for event in self._connect_and_read():
                    failures = 0
                    yield event
            except APIError as exc:
                if exc.status not in (429, 503):
                    raise
                wait = self._base.retry.delay(failures, exc.headers.get("Retry-After"))
                if wait is None or self._closed:
                    raise
                failures += 1
                await asyncio.sleep(wait)
            except (httpx.TransportError, httpx.StreamError) as exc:
                wait = self._base.retry.delay(failures)
                if wait is None or self._closed:
                    raise StreamError(
                        f"the event stream broke after id {self.last_event_id}: {exc!r}"
                    ) from exc
                failures += 1
                await asyncio.sleep(wait)

    async def _connect_and_read(self) -> AsyncIterator[StreamEvent]:
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = self.last_event_id
        timeout = httpx.Timeout(self._base._http.timeout.connect, read=self._read_timeout)
        request = self._base._http.build_request(
            "GET", self._url, params=self._query, headers=headers, timeout=timeout
        )
        self._response = await self._base._http.send(request, stream=True)
        try:
            if self._response.status_code >= 400:
                await self._response.aread()
                raise error_from_response(self._response)
            parser = SSEParser()
            async for line in self._response.aiter_lines():
                event = parser.feed(line.rstrip("\r"))
                if event is not None:
                    self.last_event_id = str(event.seq)
                    yield event
            # The server ended the stream (a restart, a proxy's limit): connect again after the last id.
            raise httpx.RemoteProtocolError("the server closed the event stream")
        finally:
            if self._response is not None:
                await self._response.aclose()
