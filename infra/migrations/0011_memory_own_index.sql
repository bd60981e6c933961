-- Large memory streams get an HNSW index of their own (a partial index on npc_key, built by the memory
-- service in the background): a search in a shared index filtered to one NPC visits every other NPC's rows.
ALTER TABLE memory_npcs ADD COLUMN own_index boolean NOT NULL DEFAULT false;
