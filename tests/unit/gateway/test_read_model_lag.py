"""An answer given from a read model still behind (the bounded wait ran out) says so in a header."""

from __future__ import annotations

import httpx
from fastapi import FastAPI, Request

from services.gateway.freshness import BEHIND_HEADER, ReadModelLagHeader


def _app() -> FastAPI:
    app = FastAPI()
    app.add_middleware(ReadModelLagHeader)

    @app.get("/behind")
    async def behind(request: Request) -> dict[str, str]:
        request.state.read_model_behind = 7
        return {}

    @app.get("/current")
    async def current() -> dict[str, str]:
        return {}

    return app


async def test_a_read_model_behind_is_named_in_the_answer_and_a_current_one_is_not() -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=_app()), base_url="http://t") as client:
        assert (await client.get("/behind")).headers[BEHIND_HEADER] == "7"
        assert BEHIND_HEADER not in (await client.get("/current")).headers
