-- A memory row names its stream by npc_key alone, and its observation state by an 8-byte digest.
--
-- memory_npcs gives each (tenant, world, NPC) one npc_key (unique both ways), so the tenant, world and NPC
-- ids repeated in every memory (~64 bytes) said nothing the key does not; they go, and queries on memories
-- filter on npc_key (the memory repository finds the key by the three ids). The state key of an observation
-- ("<place>|<entity>", ~80 bytes, in the row and again in its index) becomes state_hash, the first 8 bytes
-- of its hash (hashtextextended): the recording's "same state as the last observation?" reads the newest observations with the
-- same digest and compares their descriptions, so a shared digest (1 in 2^64) changes nothing it decides.
-- Rows of ~1,215 bytes were six to a page; ~1,080 are seven.
CREATE FUNCTION memory_state_hash(state_key text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT hashtextextended(state_key, 0) $$;

ALTER TABLE memories ADD COLUMN state_hash bigint;
UPDATE memories SET state_hash = memory_state_hash(state_key) WHERE state_key IS NOT NULL;
DROP INDEX memories_state_idx;
ALTER TABLE memories DROP COLUMN state_key, DROP COLUMN tenant_id, DROP COLUMN world_id, DROP COLUMN npc_id;
CREATE INDEX memories_state_idx ON memories (npc_key, state_hash, created_at DESC) WHERE kind = 'observation';
