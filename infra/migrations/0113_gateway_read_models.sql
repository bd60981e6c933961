-- The gateway's own read models, folded from events by its projection consumer (services/gateway/handlers.py)
-- and, for the events the gateway appends itself, in the appending transaction. Only what its routes serve.
CREATE TABLE gw_clocks (
    tenant_id    text             NOT NULL,
    world_id     text             NOT NULL,
    world_time   timestamptz      NOT NULL,
    step         bigint           NOT NULL DEFAULT 0,
    step_seconds double precision NOT NULL,
    speed        double precision,            -- world seconds per wall second; NULL = stepped
    paused       boolean          NOT NULL DEFAULT true,
    focus        text[],
    PRIMARY KEY (tenant_id, world_id)
);
-- A world's start time (WorldCreated): a template world's clock starts there when its tree arrives.
CREATE TABLE gw_world_starts (
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    start_time timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, world_id)
);
CREATE TABLE gw_trees (
    tenant_id  text  NOT NULL,
    world_id   text  NOT NULL,
    definition jsonb NOT NULL,                -- the latest WorldDefined payload
    PRIMARY KEY (tenant_id, world_id)
);
CREATE TABLE gw_objects (
    tenant_id  text NOT NULL,
    world_id   text NOT NULL,
    path       text NOT NULL,
    state      text NOT NULL,
    changed_by uuid,                          -- the newest ObjectStateChanged applied (later ones win)
    PRIMARY KEY (tenant_id, world_id, path)
);
CREATE TABLE gw_npcs (
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    npc_id     text        NOT NULL,
    location   text,
    tile_x     integer,
    tile_y     integer,
    target     text,
    route      jsonb       NOT NULL DEFAULT '[]',
    action     text,
    emoji      text        NOT NULL DEFAULT '',
    action_end timestamptz,
    moved_by   uuid,                          -- the newest NpcsMoved applied
    action_by  uuid,                          -- the newest ActionStarted applied
    PRIMARY KEY (tenant_id, world_id, npc_id)
);
CREATE TABLE gw_known_places (
    tenant_id text NOT NULL,
    world_id  text NOT NULL,
    npc_id    text NOT NULL,
    path      text NOT NULL,
    PRIMARY KEY (tenant_id, world_id, npc_id, path)
);
CREATE TABLE gw_plans (
    tenant_id text  NOT NULL,
    world_id  text  NOT NULL,
    npc_id    text  NOT NULL,
    day       date,
    wakes     timestamptz,
    sleeps    timestamptz,
    outline   jsonb NOT NULL DEFAULT '[]',
    items     jsonb NOT NULL DEFAULT '[]',
    fallbacks jsonb NOT NULL DEFAULT '[]',
    goals     jsonb NOT NULL DEFAULT '[]',
    current   jsonb,                          -- the action decided since the plan last changed
    PRIMARY KEY (tenant_id, world_id, npc_id)
);
CREATE TABLE gw_relationships (
    tenant_id   text             NOT NULL,
    world_id    text             NOT NULL,
    npc_id      text             NOT NULL,
    other_id    text             NOT NULL,
    familiarity integer          NOT NULL,
    sentiment   double precision NOT NULL,
    summary     text             NOT NULL,
    last_talked timestamptz      NOT NULL,
    PRIMARY KEY (tenant_id, world_id, npc_id, other_id)
);
-- A consumer that keeps a read model nobody's cognition waits on (the gateway's) does not hold a stepped
-- clock back: the step barrier counts only consumers that pace steps.
ALTER TABLE consumer_heartbeats ADD COLUMN paces_steps boolean NOT NULL DEFAULT true;
