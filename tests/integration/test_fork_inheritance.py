"""A fork inherits its source's history instead of copying it: one event stored, the history read through."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import (
    ActionStarted,
    ClockChanged,
    DayPlanned,
    Envelope,
    EventPayload,
    NpcCreated,
    ObservationMade,
    PlacesDiscovered,
    RelationshipChanged,
    WorldCreated,
    WorldTicked,
)
from npcworld.errors import ConflictError, NotFoundError
from npcworld.eventlog import event as logged_event
from npcworld.eventlog import events_after
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.fork import fork_world, world_stream
from npcworld.llm import OfflineLLM
from npcworld.memory_client.testing import FakeMemoryReader
from npcworld.projection import Projection, claim, differences
from services.dialogue.deps import DialogueDeps
from services.dialogue.handlers import ROUTES as DIALOGUE
from services.gateway.handlers import PROJECTION as GATEWAY
from services.planning.deps import PlanningDeps
from services.planning.domain import NpcKey
from services.planning.handlers import ROUTES as PLANNING
from services.world_state.handlers import PROJECTION as WORLD_STATE
from tests.contract.examples import EXAMPLES

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


def _new(payload: EventPayload, tenant: str, world: str, hours: float, npc: str | None = "ada") -> Envelope:
    return Envelope.new(
        payload, tenant_id=tenant, world_id=world, world_time=T0 + timedelta(hours=hours), npc_id=npc
    )


async def _append(pool: AsyncConnectionPool, stream: str, *events: Envelope) -> None:
    async with pool.connection() as conn, conn.transaction():
        await UnitOfWork(conn, EventStore()).append(stream, list(events))


async def _world(pool: AsyncConnectionPool) -> tuple[str, str]:
    """A world with one NPC who sees something at 09:00, 10:00 and 11:00 and starts an action at each hour."""
    tenant, world = f"t-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:6]}"
    await _append(
        pool,
        world_stream(world),
        _new(WorldCreated(name="Hollow", start_time=T0), tenant, world, 0, None),
        _new(NpcCreated(npc_id="ada", name="Ada"), tenant, world, 0, None),
    )
    for hour in (1, 2, 3):
        await _append(
            pool,
            f"npc-{world}-ada",
            _new(ObservationMade(description=f"saw thing {hour}"), tenant, world, hour),
            _new(
                ActionStarted(description=f"doing {hour}", ends_at=T0 + timedelta(hours=hour, minutes=30)),
                tenant,
                world,
                hour,
            ),
        )
        await _append(
            pool,
            world_stream(world),
            _new(WorldTicked(step=hour, step_seconds=3600.0), tenant, world, hour, None),
        )
    return tenant, world


async def _fork(pool: AsyncConnectionPool, tenant: str, source: str, hours: float, new: str) -> int:
    async with pool.connection() as conn, conn.transaction():
        return await fork_world(
            conn, tenant_id=tenant, source_world_id=source, at=T0 + timedelta(hours=hours), new_world_id=new
        )


async def _history(pool: AsyncConnectionPool, tenant: str, world: str) -> list[Envelope]:
    async with pool.connection() as conn:
        stored = await EventStore().read_all(conn, 0, 1000, EventFilter(tenant_id=tenant, world_id=world))
    return [s.envelope for s in stored]


async def test_a_fork_stores_one_event_and_reads_its_sources_history_up_to_the_fork_point(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    source = await _history(pool, tenant, world)
    await _fork(pool, tenant, world, 2, f"{world}-save")
    async with pool.connection() as conn:
        own = await (
            await conn.execute("SELECT type FROM events WHERE world_id = %s", (f"{world}-save",))
        ).fetchall()
    assert own == [("WorldForked",)]  # nothing copied
    fork = await _history(pool, tenant, f"{world}-save")
    before = [e for e in source if e.world_time <= T0 + timedelta(hours=2)]
    assert [e.type for e in fork] == [*(e.type for e in before), "WorldForked"]
    inherited = fork[:-1]
    # Seen as a copy would have been: the fork's own ids and world, the original named.
    assert all(e.world_id == f"{world}-save" for e in fork)
    assert [e.forked_from for e in inherited] == [e.event_id for e in before]
    assert not {e.event_id for e in fork} & {e.event_id for e in source}
    assert [e.payload for e in inherited] == [e.payload for e in before]
    assert await _history(pool, tenant, world) == source  # the source is untouched
    # Reading it again gives the same ids (they are derived, not drawn).
    assert [e.event_id for e in await _history(pool, tenant, f"{world}-save")] == [e.event_id for e in fork]


async def test_a_fork_goes_on_with_its_inherited_streams(pool: AsyncConnectionPool) -> None:
    tenant, world = await _world(pool)
    fork = f"{world}-b"
    await _fork(pool, tenant, world, 2, fork)
    store = EventStore()
    async with pool.connection() as conn:
        inherited = await store.read_stream(conn, tenant, f"npc-{fork}-ada", world_id=fork)
    assert [s.version for s in inherited] == [1, 2, 3, 4]
    # The fork's own events continue the stream where its inheritance ends, as a caller expecting that
    # version sees it; a caller that saw an older version is refused.
    later = _new(ObservationMade(description="only in the fork"), tenant, fork, 2.5)
    await _append(pool, f"npc-{fork}-ada", later)
    async with pool.connection() as conn:
        stream = await store.read_stream(conn, tenant, f"npc-{fork}-ada", world_id=fork)
        with pytest.raises(Exception, match="version"):
            async with conn.transaction():
                await store.append(
                    conn,
                    f"npc-{fork}-ada",
                    [_new(ObservationMade(description="stale"), tenant, fork, 2.6)],
                    expected_version=4,
                )
    assert [(s.version, getattr(s.envelope.payload, "description", None)) for s in stream][-2:] == [
        (4, "doing 2"),
        (5, "only in the fork"),
    ]
    source = [e for e in await _history(pool, tenant, world) if e.npc_id == "ada"]
    assert "only in the fork" not in {getattr(e.payload, "description", None) for e in source}


async def test_a_fork_of_a_fork_inherits_from_both_up_to_the_tighter_point(pool: AsyncConnectionPool) -> None:
    tenant, world = await _world(pool)
    first, second = f"{world}-1", f"{world}-2"
    await _fork(pool, tenant, world, 3, first)
    await _append(
        pool, f"npc-{first}-ada", _new(ObservationMade(description="first's own"), tenant, first, 3.5)
    )
    await _fork(pool, tenant, first, 3.5, second)
    history = await _history(pool, tenant, second)
    seen = [e.payload.description for e in history if isinstance(e.payload, ObservationMade)]
    assert seen == ["saw thing 1", "saw thing 2", "saw thing 3", "first's own"]
    assert [e.type for e in history].count("WorldForked") == 2  # the first fork's point, then its own
    # A fork of the first fork before the first fork point inherits only the root's events up to then.
    await _fork(pool, tenant, first, 1, f"{world}-3")
    early = await _history(pool, tenant, f"{world}-3")
    assert [e.payload.description for e in early if isinstance(e.payload, ObservationMade)] == ["saw thing 1"]


async def test_a_fork_is_refused_into_a_taken_id_before_its_source_existed_or_of_an_unknown_world(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    await _fork(pool, tenant, world, 2, f"{world}-x")
    with pytest.raises(ConflictError):
        await _fork(pool, tenant, world, 2, f"{world}-x")
    with pytest.raises(ConflictError):
        await _fork(pool, tenant, world, 2, world)
    with pytest.raises(NotFoundError):
        await _fork(pool, tenant, world, -1, f"{world}-early")
    with pytest.raises(NotFoundError):
        await _fork(pool, "another-tenant", world, 2, f"{world}-y")


async def test_an_inherited_event_is_found_by_the_id_it_has_in_the_fork(
    pool: AsyncConnectionPool, database_url: str
) -> None:
    tenant, world = await _world(pool)
    await _fork(pool, tenant, world, 2, f"{world}-why")
    fork = await _history(pool, tenant, f"{world}-why")
    action = next(e for e in fork if e.type == "ActionStarted")
    with psycopg.connect(database_url) as conn:
        found = logged_event(conn, action.event_id, tenant)
        assert logged_event(conn, action.event_id, "another-tenant") is None
    assert found is not None
    assert (found.world_id, found.type, found.payload["description"]) == (
        f"{world}-why",
        "ActionStarted",
        "doing 1",
    )
    assert found.causation_id == action.forked_from  # its cause is the original, as a copy's was
    # The operators' event log (npcworld events tail, the console) pages through the same history.
    with psycopg.connect(database_url) as conn:
        oldest = events_after(conn, 0, tenant_id=tenant, world_id=f"{world}-why", limit=3)
        newest = events_after(conn, 0, newest=True, tenant_id=tenant, world_id=f"{world}-why", limit=2)
        actions = events_after(conn, 0, tenant_id=tenant, world_id=f"{world}-why", types=("ActionStarted",))
    assert [e.event_id for e in oldest] == [e.event_id for e in fork[:3]]
    assert [e.event_id for e in newest] == [e.event_id for e in fork[-2:]]
    assert [e.payload["description"] for e in actions] == ["doing 1", "doing 2"]


async def test_a_fork_waits_for_an_append_in_flight_on_its_source_and_inherits_it(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    late = _new(ObservationMade(description="committed after the fork began"), tenant, world, 1.5)
    async with pool.connection() as writer:
        await writer.execute("BEGIN")
        await EventStore().append(writer, f"npc-{world}-ada", [late])
        forking = asyncio.create_task(_fork(pool, tenant, world, 2, f"{world}-live"))
        await asyncio.sleep(0.5)
        assert not forking.done()  # it waits for the append to end
        await writer.execute("COMMIT")
        await asyncio.wait_for(forking, 10)
    seen = [
        e.payload.description
        for e in await _history(pool, tenant, f"{world}-live")
        if isinstance(e.payload, ObservationMade)
    ]
    assert seen == ["saw thing 1", "saw thing 2", "committed after the fork began"]


async def test_world_state_folds_a_forks_history_a_chunk_at_a_time_and_a_rebuild_equals_it(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    fork = f"{world}-ws"
    await _fork(pool, tenant, world, 2, fork)
    store = EventStore()
    async with pool.connection() as conn, conn.transaction():
        for stored in await store.read_all(conn, 0, 1000, EventFilter(tenant_id=tenant, world_id=world)):
            if (applier := WORLD_STATE.appliers.get(stored.envelope.type)) is not None:
                await applier(stored.envelope, conn)
                await claim(conn, WORLD_STATE.consumer, [stored.envelope])
    [forked] = [e for e in await _history(pool, tenant, fork) if e.type == "WorldForked"]
    chunks = []
    while True:  # as the consumer loop does ahead of the WorldForked
        async with pool.connection() as conn, conn.transaction():
            if not (done := await WORLD_STATE.fold_inherited(conn, forked, limit=2)):
                break
            chunks.append(done)
    async with pool.connection() as conn, conn.transaction():
        await WORLD_STATE.appliers["WorldForked"](forked, conn)  # folds what is left: nothing
        await claim(conn, WORLD_STATE.consumer, [forked])
        cur = await conn.execute(
            "SELECT world_id, forked_from FROM ws_worlds WHERE tenant_id = %s ORDER BY 1", (tenant,)
        )
        worlds = await cur.fetchall()
    assert len(chunks) > 1 and all(n <= 2 for n in chunks)
    assert worlds == [(world, None), (fork, world)]
    assert await differences(pool, WORLD_STATE) == []


async def _fold(pool: AsyncConnectionPool, projection: Projection, tenant: str, world: str) -> None:
    """Fold the world's own events through the projection and claim them, as its consumer does (a fork's
    WorldForked folds what it inherits)."""
    async with pool.connection() as conn, conn.transaction():
        where = EventFilter(tenant_id=tenant, world_id=world, history="own")
        for stored in await EventStore().read_all(conn, 0, 1000, where):
            if (applier := projection.appliers.get(stored.envelope.type)) is not None:
                await applier(stored.envelope, conn)
                await claim(conn, projection.consumer, [stored.envelope])


async def _plans_and_ties(pool: AsyncConnectionPool, tenant: str, world: str) -> list[tuple[object, ...]]:
    async with pool.connection() as conn:
        plans = await (await conn.execute(
            "SELECT npc_id, day, items::text FROM gw_plans WHERE tenant_id = %s AND world_id = %s",
            (tenant, world))).fetchall()
        ties = await (await conn.execute(
            "SELECT npc_id, other_id, familiarity, sentiment FROM gw_relationships"
            " WHERE tenant_id = %s AND world_id = %s ORDER BY other_id", (tenant, world))).fetchall()
    return [*plans, *ties]


async def test_a_save_holds_each_npcs_plan_and_relationships_as_they_were_at_the_save(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    plan = EXAMPLES["DayPlanned"]
    for hour, (goal, warmth) in enumerate((("open the cafe", 6.0), ("run for mayor", 2.5)), start=1):
        await _append(pool, f"planning-{world}-ada",
                      _new(DayPlanned(**{**plan, "goals": (goal,)}), tenant, world, hour + 0.5),
                      _new(RelationshipChanged(other_id="sam", familiarity=hour, sentiment=warmth), tenant,
                           world, hour + 0.5))
    await _fold(pool, GATEWAY, tenant, world)
    at_save = await _plans_and_ties(pool, tenant, world)  # after both: the source as it is now
    await _fork(pool, tenant, world, 1.75, f"{world}-slot")  # a save made between the two
    await _fork(pool, tenant, world, 5, f"{world}-now")
    for fork in (f"{world}-slot", f"{world}-now"):
        await _fold(pool, GATEWAY, tenant, fork)
    slot = await _plans_and_ties(pool, tenant, f"{world}-slot")
    assert [row[1:] for row in slot if len(row) == 4] == [("sam", 1, 6.0)]
    assert [row[0] for row in slot if len(row) == 3] == ["ada"]  # the plan of the first hour
    assert await _plans_and_ties(pool, tenant, f"{world}-now") == at_save
    assert await differences(pool, GATEWAY) == []


async def test_a_forks_npcs_are_known_to_the_services_that_keep_working_state(
    pool: AsyncConnectionPool,
) -> None:
    tenant, world = await _world(pool)
    await _append(pool, f"perception-{world}-ada",
                  _new(PlacesDiscovered(paths=("hollow:bakery", "hollow:mill")), tenant, world, 1))
    await _fork(pool, tenant, world, 2, f"{world}-play")
    [forked] = [e for e in await _history(pool, tenant, f"{world}-play") if e.type == "WorldForked"]
    planning = PlanningDeps(llm=OfflineLLM(), memory=FakeMemoryReader())
    dialogue = DialogueDeps(llm=OfflineLLM(), memory=FakeMemoryReader())
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        await PLANNING["WorldForked"](forked, uow, planning, None)
        await DIALOGUE["WorldForked"](forked, uow, dialogue, None)
        assert uow.appended == []  # state only: nothing is said or decided again
    async with pool.connection() as conn:
        state = await planning.repository.peek(conn, NpcKey(tenant, f"{world}-play", "ada"))
        profile = await (await conn.execute(
            "SELECT name FROM dialogue_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = 'ada'",
            (tenant, f"{world}-play"))).fetchone()
    assert state is not None and state.ready and state.persona.name == "Ada"
    assert {"hollow:bakery", "hollow:mill"} <= set(state.places.paths)
    assert state.plan is None  # it plans its day afresh at the fork's next tick
    assert profile == ("Ada",)


async def test_a_fork_of_a_running_clock_starts_paused_at_the_same_pace(pool: AsyncConnectionPool) -> None:
    tenant, world = await _world(pool)
    running = ClockChanged(paused=False, speed=None, step_seconds=10.0, focus=("hollow:bakery",))
    await _append(pool, f"clock-ops-{world}", _new(running, tenant, world, 1, None))
    await _fork(pool, tenant, world, 2, f"{world}-saved")
    own = [e for e in await _history(pool, tenant, f"{world}-saved") if e.forked_from is None]
    assert [e.type for e in own] == ["WorldForked", "ClockChanged"]
    assert own[1].payload == running.model_copy(update={"paused": True})  # a save moves once loaded
    await _fork(pool, tenant, world, 0.5, f"{world}-before")  # the clock was never set running by then
    assert [e.type for e in await _history(pool, tenant, f"{world}-before") if e.forked_from is None] == [
        "WorldForked"]
