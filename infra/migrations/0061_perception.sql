-- perception read model: world layouts, NPC positions and activities, object states, what each NPC has
-- already perceived (so an unchanged state is not observed again) and its spatial memory.
CREATE TABLE pc_worlds (
    world_id    text  PRIMARY KEY,
    tenant_id   text  NOT NULL,
    definition  jsonb NOT NULL,
    defined_by  uuid  NOT NULL
);

CREATE TABLE pc_npcs (
    world_id   text NOT NULL,
    npc_id     text NOT NULL,
    tenant_id  text NOT NULL,
    name       text NOT NULL,
    arena      text,
    tile_x     integer,
    tile_y     integer,
    activity   text,
    moved_by   uuid,
    PRIMARY KEY (world_id, npc_id)
);

CREATE TABLE pc_objects (
    world_id    text NOT NULL,
    path        text NOT NULL,
    state       text NOT NULL,
    changed_by  uuid,
    PRIMARY KEY (world_id, path)
);

CREATE TABLE pc_seen (
    world_id     text NOT NULL,
    npc_id       text NOT NULL,
    entity       text NOT NULL,
    description  text NOT NULL,
    PRIMARY KEY (world_id, npc_id, entity)
);

CREATE TABLE pc_known_places (
    world_id  text NOT NULL,
    npc_id    text NOT NULL,
    path      text NOT NULL,
    PRIMARY KEY (world_id, npc_id, path)
);
