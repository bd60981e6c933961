-- Memory streams of forked worlds: a fork copies MemoryRecorded events with their memory ids, so the same
-- memory id lives in the source NPC's stream and in the fork's. Memories are keyed per stream instead.

ALTER TABLE memory_access DROP CONSTRAINT memory_access_memory_id_fkey;
ALTER TABLE memory_access DROP CONSTRAINT memory_access_pkey;
ALTER TABLE memories DROP CONSTRAINT memories_pkey;
ALTER TABLE memories ADD PRIMARY KEY (npc_key, memory_id);
ALTER TABLE memory_access ADD PRIMARY KEY (npc_key, memory_id);
ALTER TABLE memory_access ADD FOREIGN KEY (npc_key, memory_id)
    REFERENCES memories (npc_key, memory_id) ON DELETE CASCADE;

-- A forked copy takes its vector from any stream that already holds the memory (no re-embedding).
CREATE INDEX memories_memory_id_idx ON memories (memory_id);
-- The primary key now leads with npc_key.
DROP INDEX memories_npc_idx;
-- Listing an NPC's memories newest first, in keyset pages.
CREATE INDEX memories_created_idx ON memories (npc_key, created_at DESC, memory_id DESC);
