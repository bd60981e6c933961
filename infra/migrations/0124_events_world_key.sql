-- The event store's world and stream indexes keyed by an 8-byte digest instead of the text it digests.
--
-- Every event had three index entries led by the tenant (36 characters) and the world id: (tenant, world,
-- seq), (tenant, world, NPC, seq) and (tenant, world, time), ~240 bytes an event together, and its stream
-- name carried the tenant twice ("<tenant>/memory:<tenant>:<world>:<npc>"), ~90 bytes in the row and a
-- 16-byte digest in the (stream, version) key. They are now led by world_key(tenant, world), a 64-bit hash
-- of both (hashtextextended, the one hash partitioning uses: ~0.2 us a row where an md5 took ~1 us, which a
-- filter pays row by row when another index drives a read); a stream is keyed by stream_key(tenant,
-- stream) and stored under the name its tenant gave it, and the streams of one NPC's memories, memory
-- accesses and plans no longer repeat the tenant inside the name. Only SQL computes these digests.
--
-- A digest can be shared by two worlds (or streams), so reads compare the digest, for the index, and the
-- names, for exactness. in_world() and in_stream() say both; being plain SQL expressions they are inlined
-- into the query, where the planner matches the digest to the index (prepared plans too: the digest of the
-- parameters is computed once per execution). A read of a world's events writes
--     in_world(tenant_id, world_id, %s, %s)       -- instead of tenant_id = %s AND world_id = %s
-- and a read without it walks the table. Reads across a tenant's worlds (its world list, forgetting a
-- player in each of its worlds) name rare types, which the (tenant, world, type, seq) index still holds.
CREATE FUNCTION world_key(tenant text, world text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT hashtextextended(tenant || '/' || world, 0) $$;
CREATE FUNCTION in_world(tenant_id text, world_id text, tenant text, world text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT world_key(tenant_id, world_id) = world_key(tenant, world) AND tenant_id = tenant
                 AND world_id = world $$;

-- Stream names lose the tenant prefix given to them by migration 0095 (the tenant now keys the stream
-- beside its name), and the per-NPC streams the tenant they repeated. Like 0095 this rewrites a storage
-- name, not history, with the append-only guard lifted inside this transaction.
CREATE FUNCTION stream_key(tenant text, stream text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT hashtextextended(tenant || '/' || stream, 0) $$;
CREATE FUNCTION in_stream(tenant_id text, stream_id text, tenant text, stream text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT stream_key(tenant_id, stream_id) = stream_key(tenant, stream) AND tenant_id = tenant
                 AND stream_id = stream $$;

DROP INDEX events_stream_version_key;
DROP FUNCTION stream_key(text);
ALTER TABLE events DISABLE TRIGGER events_no_update;
UPDATE events SET stream_id = CASE
        WHEN substr(stream_id, length(tenant_id) + 2) ~ '^(memory|memory-access|planning):'
            THEN replace(substr(stream_id, length(tenant_id) + 2), ':' || tenant_id || ':', ':')
        ELSE substr(stream_id, length(tenant_id) + 2) END
    WHERE starts_with(stream_id, tenant_id || '/');
ALTER TABLE events ENABLE TRIGGER events_no_update;
CREATE UNIQUE INDEX events_stream_version_key ON events (stream_key(tenant_id, stream_id), version);

DROP INDEX events_world_idx;
CREATE INDEX events_world_idx ON events (world_key(tenant_id, world_id), seq);
DROP INDEX events_npc_idx;
CREATE INDEX events_npc_idx ON events (world_key(tenant_id, world_id), npc_id, seq) WHERE npc_id IS NOT NULL;
DROP INDEX events_world_time_idx;
CREATE INDEX events_world_time_idx ON events (world_key(tenant_id, world_id), world_time);
