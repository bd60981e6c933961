-- world_state read model: worlds and their NPCs, folded from world events.
CREATE TABLE ws_worlds (
    tenant_id    text        NOT NULL,
    world_id     text        NOT NULL,
    name         text        NOT NULL,
    template     text,
    start_time   timestamptz NOT NULL,
    forked_from  text,
    deleted      boolean     NOT NULL DEFAULT false,
    created_seq_event uuid   NOT NULL,
    PRIMARY KEY (world_id)
);
CREATE INDEX ws_worlds_tenant_idx ON ws_worlds (tenant_id, world_id);

CREATE TABLE ws_npcs (
    tenant_id  text NOT NULL,
    world_id   text NOT NULL,
    npc_id     text NOT NULL,
    name       text NOT NULL,
    age        integer,
    traits     text[] NOT NULL DEFAULT '{}',
    occupation text,
    location   text,
    PRIMARY KEY (world_id, npc_id)
);
