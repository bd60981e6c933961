"""Fakes shared by the gateway's unit tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator


class FakePool:
    """A connection pool whose connections are placeholders (the repositories that take them are faked)."""

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[object]:
        yield object()
