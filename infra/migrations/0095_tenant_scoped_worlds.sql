-- World ids (and every id under a world) are each tenant's own: two tenants may both have a world "town".
-- Stream names in storage carry the tenant ("<tenant>/world-town"), so each tenant's stream has its own
-- versions; the world_state and perception read models are keyed by (tenant_id, world_id, ...).

-- Existing streams get their tenant's prefix. This rewrites a storage name, not history: the one
-- sanctioned change to stored events, made with the append-only guard lifted inside this transaction.
ALTER TABLE events DISABLE TRIGGER events_no_update;
UPDATE events SET stream_id = tenant_id || '/' || stream_id;
ALTER TABLE events ENABLE TRIGGER events_no_update;

DROP INDEX events_world_time_idx;
CREATE INDEX events_world_time_idx ON events (tenant_id, world_id, world_time);

ALTER TABLE ws_worlds DROP CONSTRAINT ws_worlds_pkey, ADD PRIMARY KEY (tenant_id, world_id);
DROP INDEX ws_worlds_tenant_idx;
ALTER TABLE ws_npcs DROP CONSTRAINT ws_npcs_pkey, ADD PRIMARY KEY (tenant_id, world_id, npc_id);
ALTER TABLE ws_definitions DROP CONSTRAINT ws_definitions_pkey, ADD PRIMARY KEY (tenant_id, world_id);
ALTER TABLE ws_objects DROP CONSTRAINT ws_objects_pkey, ADD PRIMARY KEY (tenant_id, world_id, path);
ALTER TABLE ws_clocks DROP CONSTRAINT ws_clocks_pkey, ADD PRIMARY KEY (tenant_id, world_id);
DROP INDEX ws_clocks_running_idx;
CREATE INDEX ws_clocks_running_idx ON ws_clocks (tenant_id, world_id) WHERE NOT paused;

ALTER TABLE pc_worlds DROP CONSTRAINT pc_worlds_pkey, ADD PRIMARY KEY (tenant_id, world_id);
ALTER TABLE pc_npcs DROP CONSTRAINT pc_npcs_pkey, ADD PRIMARY KEY (tenant_id, world_id, npc_id);

-- Rows written before this migration belong to the one tenant that then owned the world id.
ALTER TABLE pc_objects ADD COLUMN tenant_id text;
UPDATE pc_objects o SET tenant_id = w.tenant_id FROM pc_worlds w WHERE w.world_id = o.world_id;
DELETE FROM pc_objects WHERE tenant_id IS NULL;
ALTER TABLE pc_objects ALTER COLUMN tenant_id SET NOT NULL,
    DROP CONSTRAINT pc_objects_pkey, ADD PRIMARY KEY (tenant_id, world_id, path);

ALTER TABLE pc_seen ADD COLUMN tenant_id text;
UPDATE pc_seen s SET tenant_id = n.tenant_id FROM pc_npcs n WHERE n.world_id = s.world_id AND n.npc_id = s.npc_id;
DELETE FROM pc_seen WHERE tenant_id IS NULL;
ALTER TABLE pc_seen ALTER COLUMN tenant_id SET NOT NULL,
    DROP CONSTRAINT pc_seen_pkey, ADD PRIMARY KEY (tenant_id, world_id, npc_id, entity);

ALTER TABLE pc_known_places ADD COLUMN tenant_id text;
UPDATE pc_known_places k SET tenant_id = n.tenant_id
  FROM pc_npcs n WHERE n.world_id = k.world_id AND n.npc_id = k.npc_id;
DELETE FROM pc_known_places WHERE tenant_id IS NULL;
ALTER TABLE pc_known_places ALTER COLUMN tenant_id SET NOT NULL,
    DROP CONSTRAINT pc_known_places_pkey, ADD PRIMARY KEY (tenant_id, world_id, npc_id, path);
