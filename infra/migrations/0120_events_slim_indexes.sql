-- Slimmer event-store indexes: about a third of the bytes an event cost was its index entries, most of them
-- the tenant id (36 characters) and the stored stream name (the tenant id again, then the stream's name)
-- repeated in every entry.
--
-- A stream's versions are keyed by a 16-byte digest of its stored name instead of the name itself. The
-- unique index still refuses a second event at the same version of a stream (two names sharing an md5 would
-- share versions; that is not a practical case). Reads by stream compare the digest, for the index, and the
-- name, for exactness: stream_key(stream_id) = stream_key(%s) AND stream_id = %s.
CREATE FUNCTION stream_key(stream text) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT md5(stream)::uuid $$;
CREATE UNIQUE INDEX events_stream_version_key ON events (stream_key(stream_id), version);
ALTER TABLE events DROP CONSTRAINT events_stream_id_version_key;

-- A world's events by type, by NPC and by world time: world ids are each tenant's own, but two tenants
-- sharing a world id is rare, so the tenant is checked on the rows the world id finds rather than stored in
-- every entry. (events_world_idx keeps the tenant first: the tenant's world list and tenant-wide reads.)
DROP INDEX events_type_idx;
CREATE INDEX events_type_idx ON events (world_id, type, seq);
DROP INDEX events_npc_idx;
CREATE INDEX events_npc_idx ON events (world_id, npc_id, seq) WHERE npc_id IS NOT NULL;
DROP INDEX events_world_time_idx;
CREATE INDEX events_world_time_idx ON events (world_id, world_time);

-- Tenant-wide reads of the few types they ask for (the world list, forgetting a player) had the type index
-- under the tenant; they get a small one of their own.
CREATE INDEX events_tenant_type_idx ON events (tenant_id, type, seq)
    WHERE type IN ('WorldCreated', 'WorldDeleted', 'PlayerSpoke', 'NpcReplied', 'PlayerForgotten');
