-- world_state: the world tree and tile map, object states, NPC movement and the world clock.
CREATE TABLE ws_definitions (
    world_id    text  PRIMARY KEY,
    tenant_id   text  NOT NULL,
    definition  jsonb NOT NULL,          -- the WorldDefined payload
    defined_by  uuid  NOT NULL           -- its event id (cache key of the parsed tree)
);

CREATE TABLE ws_objects (
    world_id    text NOT NULL,
    path        text NOT NULL,
    tenant_id   text NOT NULL,
    state       text NOT NULL,
    source      text NOT NULL DEFAULT 'definition',
    changed_by  uuid,                    -- event id of the last change; older replays never overwrite newer
    PRIMARY KEY (world_id, path)
);

ALTER TABLE ws_npcs
    ADD COLUMN tile_x        integer,
    ADD COLUMN tile_y        integer,
    ADD COLUMN route         jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN target        text,
    ADD COLUMN action        text,
    ADD COLUMN emoji         text NOT NULL DEFAULT '',
    ADD COLUMN action_start  timestamptz,
    ADD COLUMN action_end    timestamptz,
    ADD COLUMN pending_state jsonb,
    ADD COLUMN held_object   text,
    ADD COLUMN moved_by      uuid;

-- One clock per defined world. The ticker of a world_state process advances running clocks; the row
-- is written in the same transaction as the WorldTicked event, so a restart resumes where it stopped.
CREATE TABLE ws_clocks (
    world_id       text             PRIMARY KEY,
    tenant_id      text             NOT NULL,
    world_time     timestamptz      NOT NULL,
    step           bigint           NOT NULL DEFAULT 0,
    step_seconds   double precision NOT NULL,
    speed          double precision,            -- world seconds per wall second; NULL = stepped
    paused         boolean          NOT NULL DEFAULT true,
    last_tick_wall double precision NOT NULL DEFAULT 0
);
CREATE INDEX ws_clocks_running_idx ON ws_clocks (world_id) WHERE NOT paused;
