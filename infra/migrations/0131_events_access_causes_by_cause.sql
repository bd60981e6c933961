-- The why view's index of batched memory accesses holds only the causes it looks up.
--
-- A MemoriesAccessed event names, for each retrieval of a step, the handling that made it (its cause), the
-- query and every memory returned. The index the why view finds a handling's retrievals with (migration
-- 0117) hashed all of it, the memory ids and queries included, which no read looks up by; it now holds each
-- event's causes alone, about a third of the size.
CREATE FUNCTION access_causes(payload jsonb) RETURNS uuid[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg((r ->> 'cause')::uuid) FILTER (WHERE r ->> 'cause' IS NOT NULL), '{}')
          FROM jsonb_array_elements(coalesce(payload -> 'retrievals', '[]')) AS r $$;
DROP INDEX events_access_causes_idx;
CREATE INDEX events_access_causes_idx ON events USING gin (access_causes(payload))
    WHERE type = 'MemoriesAccessed';
