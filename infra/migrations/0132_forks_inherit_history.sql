-- A fork inherits its source's history instead of copying it.
--
-- A fork used to copy every event of its source up to the fork point into its own world id: ~7 s for 6,000
-- events, hours for a long-lived world. It now writes its WorldForked event and its lineage: the worlds whose
-- events it inherits, each up to a sequence number and a world time. A world's history is its own events and
-- the inherited ones, as the fork sees them (world_events): under the fork's world id, in the stream named as
-- a copy was (fork_stream), with an id of their own (fork_event_id: the original's id masked by a digest of
-- the fork, so the original is found again from the fork's id in one index probe), the original's id as cause
-- and as forked_from. Parts are disjoint in sequence numbers and follow each other (a world's own events come
-- after everything it inherits), so a page in order reads one part after another (npcworld.eventstore).
--
-- Lineage is flattened when a fork is made (constant work: a fork of a fork inherits its source's ancestors,
-- each bounded by the tighter of the two fork points), so a read never recurses.
CREATE TABLE world_lineage (
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    depth      integer     NOT NULL CHECK (depth >= 1),  -- 1: the source, 2: the source's source, ...
    ancestor   text        NOT NULL,
    until_seq  bigint      NOT NULL,
    until_time timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, world_id, depth)
);
CREATE INDEX world_lineage_ancestor_idx ON world_lineage (tenant_id, ancestor);

-- The id an inherited event has in a fork: its original id XOR md5(tenant/world); the same call gives the
-- original back.
CREATE FUNCTION fork_event_id(tenant text, world text, id uuid) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT (lpad(to_hex(('x' || substr(h, 1, 16))::bit(64)::bigint # ('x' || substr(k, 1, 16))::bit(64)::bigint),
                       16, '0')
               || lpad(to_hex(('x' || substr(h, 17))::bit(64)::bigint # ('x' || substr(k, 17))::bit(64)::bigint),
                       16, '0'))::uuid
          FROM (SELECT replace(id::text, '-', '') AS h, md5(tenant || '/' || world) AS k) AS s $$;

-- The name a stream of ``ancestor`` has in the fork ``world`` (as a copy's stream was named), and back.
CREATE FUNCTION fork_stream(stream text, ancestor text, world text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT CASE WHEN strpos(stream, ancestor) > 0 THEN replace(stream, ancestor, world)
                      ELSE stream || '@' || world END $$;

CREATE FUNCTION fork_source_stream(stream text, ancestor text, world text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT CASE WHEN right(stream, length(world) + 1) = '@' || world
                           AND strpos(left(stream, -length(world) - 1), ancestor) = 0
                      THEN left(stream, -length(world) - 1)
                      ELSE replace(stream, world, ancestor) END $$;

-- One ancestor's part of a fork's history, as the fork sees it (inlined: the planner reads the ancestor's
-- world indexes).
CREATE FUNCTION inherited_part(t text, w text, ancestor text, until_seq bigint, until_time timestamptz)
    RETURNS SETOF events LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT e.seq, fork_event_id(t, w, e.event_id), fork_stream(e.stream_id, ancestor, w), e.version,
                 e.type, e.schema_version, e.tenant_id, w, e.npc_id, e.world_time, e.recorded_at, e.event_id,
                 e.correlation_id, e.event_id, e.trace, e.payload, e.traceparent
            FROM events e
           WHERE in_world(e.tenant_id, e.world_id, t, ancestor) AND e.seq <= until_seq
             AND e.world_time <= until_time AND e.type <> 'WorldDeleted' $$;

-- What a fork inherits of one of its streams (named as the fork names it), by the streams' index.
CREATE FUNCTION inherited_stream(t text, w text, s text) RETURNS SETOF events LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT i.* FROM world_lineage l, LATERAL (
              SELECT e.seq, fork_event_id(t, w, e.event_id), s, e.version, e.type, e.schema_version, e.tenant_id,
                     w, e.npc_id, e.world_time, e.recorded_at, e.event_id, e.correlation_id, e.event_id, e.trace,
                     e.payload, e.traceparent
                FROM events e
               WHERE stream_key(e.tenant_id, e.stream_id) = stream_key(t, fork_source_stream(s, l.ancestor, w))
                 AND e.tenant_id = t AND e.stream_id = fork_source_stream(s, l.ancestor, w)
                 AND e.world_id = l.ancestor AND e.type <> 'WorldDeleted'
                 -- bounds checked row by row (+ 0): the stream's index finds its rows, where ranges of the
                 -- table's sequence and world-time indexes would grow with the whole log
                 AND e.seq + 0 <= l.until_seq AND e.world_time + interval '0' <= l.until_time
              OFFSET 0) AS i  -- one index probe per ancestor, never a join of the whole table
           WHERE l.tenant_id = t AND l.world_id = w $$;

-- The version of the last event a fork inherits in one of its streams (null: none), its own events' start: the
-- stream's index walked back from its newest version (a fork of a world as it is now stops at once).
CREATE FUNCTION inherited_stream_version(t text, w text, s text) RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT max((SELECT e.version FROM events e
                       WHERE stream_key(e.tenant_id, e.stream_id) = stream_key(t, fork_source_stream(s, l.ancestor, w))
                         AND e.tenant_id = t AND e.stream_id = fork_source_stream(s, l.ancestor, w)
                         AND e.world_id = l.ancestor AND e.type <> 'WorldDeleted'
                         AND e.seq <= l.until_seq AND e.world_time <= l.until_time
                       ORDER BY stream_key(e.tenant_id, e.stream_id) DESC, e.version DESC LIMIT 1))
            FROM world_lineage l WHERE l.tenant_id = t AND l.world_id = w $$;

-- Everything a fork inherits, in no particular order.
CREATE FUNCTION inherited_events(t text, w text) RETURNS SETOF events LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT i.* FROM world_lineage l,
                 LATERAL inherited_part(t, w, l.ancestor, l.until_seq, l.until_time) AS i
           WHERE l.tenant_id = t AND l.world_id = w $$;

-- A world's whole history, its own events and what it inherits, in no particular order: reads that select
-- by type, NPC or time say FROM world_events(tenant, world) AS events. (A read in sequence order with a
-- limit reads part after part: npcworld.eventstore.history.)
CREATE FUNCTION world_events(t text, w text) RETURNS SETOF events LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT * FROM events WHERE in_world(tenant_id, world_id, t, w)
          UNION ALL
          SELECT * FROM inherited_events(t, w) $$;

-- How far each consumer has folded a fork's inherited history into its read model (a long history is folded
-- in several short transactions; the fork's WorldForked is claimed when it is all folded).
CREATE TABLE fork_folds (
    consumer  text   NOT NULL,
    event_id  uuid   NOT NULL,  -- the fork's WorldForked
    after_seq bigint NOT NULL,
    PRIMARY KEY (consumer, event_id)
);

-- A fork that inherits its history has no WorldCreated of its own: a tenant's world list finds it by its
-- WorldForked.
DROP INDEX events_tenant_type_idx;
CREATE INDEX events_tenant_type_idx ON events (tenant_id, type, world_id, seq)
    WHERE type IN ('WorldCreated', 'WorldForked', 'WorldDeleted', 'PlayerSpoke', 'NpcReplied',
                   'RelationshipChanged', 'PlayerForgotten');
