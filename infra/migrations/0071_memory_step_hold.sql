-- In worlds whose clock is stepped the memory service holds a step's writes (new memories and last
-- accesses) until the step's StepCompleted, then applies them all at once in a fixed order. Retrievals
-- during a step therefore see exactly the memories of earlier steps, whatever order the consumers ran in:
-- same seed, same simulation.
CREATE TABLE memory_clocks (
    tenant_id text    NOT NULL,
    world_id  text    NOT NULL,
    stepped   boolean NOT NULL,
    PRIMARY KEY (tenant_id, world_id)
);

CREATE TABLE memory_held (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id   uuid        NOT NULL UNIQUE,
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    world_time timestamptz NOT NULL,
    npc_id     text        NOT NULL DEFAULT '',
    type       text        NOT NULL,
    envelope   jsonb       NOT NULL
);
CREATE INDEX memory_held_world_idx ON memory_held (tenant_id, world_id);
