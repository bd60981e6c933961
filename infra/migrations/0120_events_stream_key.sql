-- A slimmer (stream, version) key: its entries held the stored stream name (the tenant id, 36 characters,
-- then the stream's name), 183 bytes an event, the largest of the event store's indexes.
--
-- A stream's versions are keyed by a 16-byte digest of its stored name instead of the name itself. The
-- unique index still refuses a second event at the same version of a stream (two names sharing an md5 would
-- share versions; that is not a practical case). Reads by stream compare the digest, for the index, and the
-- name, for exactness: stream_key(stream_id) = stream_key(%s) AND stream_id = %s.
--
-- The world's indexes keep the tenant first: world ids are each tenant's own and studios choose them, so
-- two tenants' "main" would otherwise share index ranges, and one tenant's reads would walk the other's
-- events (a noisy neighbour).
CREATE FUNCTION stream_key(stream text) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT md5(stream)::uuid $$;
CREATE UNIQUE INDEX events_stream_version_key ON events (stream_key(stream_id), version);
ALTER TABLE events DROP CONSTRAINT events_stream_id_version_key;
