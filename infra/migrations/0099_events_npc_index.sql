-- One NPC's events, newest first (the console's NPC inspector, ?npc_id= filters): without it a lookup
-- walks the whole world's events by seq, which in a 1,000-NPC world is a thousand times more rows.
CREATE INDEX events_npc_idx ON events (tenant_id, world_id, npc_id, seq) WHERE npc_id IS NOT NULL;
