"""Routes: which handler reacts to which payload class, and what it gathers before its transaction opens.

A service declares its reactions once, keyed by payload class::

    ROUTES = Routes(
        on(PlayerSpoke, on_player_spoke, gather=gather_replies),
        on(WorldDeleted, on_world_deleted),
    )

The route checks the payload's class once, at dispatch, so a handler declared ``event: Envelope[PlayerSpoke]``
reads ``event.payload`` as a ``PlayerSpoke`` with no cast. Handlers are two-phase (docs/architecture.md):

- ``gather`` (optional) runs before the transaction, on the connection pool, for a poll's events of that
  class not yet processed (fork copies excluded), in store order. It does the slow work (retrievals, model
  calls), writes nothing, and returns its results by event id. It decides its own concurrency.
- the handler (the apply step) runs inside the transaction and gets its event's gathered result (None when
  the route gathers nothing, gathering failed or the event was not gathered). It must re-check what the
  result was made from, because the state may have moved on between the phases, and work it out again
  when it did, so a result is an optimisation, never a condition of correctness.

``Routes`` is a mapping of event type to route, so whatever is derived from a service's reactions (its
topics, its heartbeat's types, the stepped clock's reaction set) reads it as before.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast, overload

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, EventPayload
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork

__all__ = ["Gather", "Route", "Routes", "on"]

P = TypeVar("P", bound=EventPayload)
D = TypeVar("D")
G = TypeVar("G")

Gather = Callable[[Sequence[Envelope[P]], D, AsyncConnectionPool], Awaitable[Mapping[uuid.UUID, G]]]
_Apply = Callable[[Envelope, UnitOfWork, D, Any], Awaitable[None]]
_GatherAny = Callable[[Sequence[Envelope], D, AsyncConnectionPool], Awaitable[Mapping[uuid.UUID, object]]]


@dataclass(frozen=True)
class Route(Generic[D]):
    """One payload class's reaction: an optional gather step and the apply step (built by ``on``)."""

    payload: type[EventPayload]
    handler: Callable[..., Awaitable[None]]
    gather: _GatherAny[D] | None
    _apply: _Apply[D]
    pipelined: bool = False

    @property
    def event_type(self) -> str:
        return self.payload.event_type

    async def __call__(self, event: Envelope, uow: UnitOfWork, deps: D, gathered: object = None) -> None:
        """Apply ``event`` (inside the caller's transaction) with what was gathered for it, if anything.

        Raises:
            PermanentError: the payload is not of the route's class (an event routed by a wrong type).
        """
        if not isinstance(event.payload, self.payload):
            raise PermanentError(
                f"{event.type} event carries a {type(event.payload).__name__}, not a {self.payload.__name__}"
            )
        await self._apply(event, uow, deps, gathered)


@overload
def on(
    payload: type[P], handler: Callable[[Envelope[P], UnitOfWork, D], Awaitable[None]], *,
    pipelined: bool = False,
) -> Route[D]: ...


@overload
def on(
    payload: type[P],
    handler: Callable[[Envelope[P], UnitOfWork, D, G | None], Awaitable[None]],
    *,
    gather: Gather[P, D, G],
    pipelined: bool = False,
) -> Route[D]: ...


def on(
    payload: type[P],
    handler: Callable[..., Awaitable[None]],
    *,
    gather: Gather[P, D, G] | None = None,
    pipelined: bool = False,
) -> Route[D]:
    """The route of ``payload``'s events to ``handler``; with ``gather``, the handler takes the gathered
    result as a fourth argument (None when there is none for its event).

    ``pipelined``: the handler only sends statements and never reads what they return (no ``rowcount``, no
    fetch), so the loop may send a poll's statements in psycopg pipeline mode, without waiting for each
    answer: one round trip per poll instead of one per statement. A failure then shows at the poll's end,
    which redoes the poll on the careful path (a savepoint per event), as any failure does."""
    if gather is None:
        async def apply(event: Envelope, uow: UnitOfWork, deps: D, gathered: object) -> None:
            await handler(event, uow, deps)
    else:
        async def apply(event: Envelope, uow: UnitOfWork, deps: D, gathered: object) -> None:
            await handler(event, uow, deps, gathered)
    return Route(payload, handler, cast("_GatherAny[D] | None", gather), apply, pipelined)


class Routes(Mapping[str, Route[D]]):
    """A service's routes by event type (one per payload class).

    ``gather_together``: the routes' gathers of one poll run concurrently; by default they run one route
    after another, in declaration order, so gathers whose reads and writes elsewhere (memory retrievals note
    what they read) depend on one another's order stay deterministic.

    ``gathers_read_writes``: the gathers read state that this consumer's other events write (dialogue's
    lines read the profiles and places its projection keeps), so a poll is gathered and applied in segments
    that end before a gathered event following such a writer (``npcworld.messaging.segments``). Off, a
    poll's gathers all run first, which keeps per-poll batching (memory's importance ratings) whole.
    """

    def __init__(
        self, *routes: Route[D], gather_together: bool = False, gathers_read_writes: bool = False
    ) -> None:
        by_type: dict[str, Route[D]] = {}
        for route in routes:
            if route.event_type in by_type:
                raise ValueError(f"two routes for {route.event_type}")
            by_type[route.event_type] = route
        self._routes = by_type
        self.gather_together = gather_together
        self.gathers_read_writes = gathers_read_writes

    def __getitem__(self, event_type: str) -> Route[D]:
        return self._routes[event_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._routes)

    def __len__(self) -> int:
        return len(self._routes)

    def pipelined(self, event_types: Iterable[str]) -> bool:
        """Whether every one of these types has a route that may be sent in pipeline mode (see ``on``)."""
        return all(t in self._routes and self._routes[t].pipelined for t in event_types)

    def gathering(self) -> frozenset[str]:
        """The event types whose routes gather before the transaction."""
        return frozenset(t for t, route in self._routes.items() if route.gather is not None)
