-- Reading one NPC's events, or one type's events of a world, newest first (the console's NPC inspector and
-- world timeline, ?npc_id= filters): without these a lookup walks every event of the world by seq, which in
-- a 1,000-NPC world is a thousand times more rows than it returns.
CREATE INDEX events_npc_idx ON events (tenant_id, world_id, npc_id, seq) WHERE npc_id IS NOT NULL;
CREATE INDEX events_type_idx ON events (tenant_id, world_id, type, seq);
