-- A retrieval no longer appends an event per call. It notes what it returned here; the memory service turns
-- an NPC's noted accesses into one MemoriesAccessed event at its world's step end (stepped worlds: the
-- step's StepCompleted) or about every second (other worlds), and folds that event into memory_access.
-- cause: the event whose handling made the retrieval (the nil uuid when none), and query, for the why view
-- (query_key: the query's md5, as the key); place: the memory's place in what that retrieval returned
-- (1 = best).
CREATE TABLE memory_accesses_pending (
    tenant_id   text NOT NULL,
    world_id    text NOT NULL,
    npc_id      text NOT NULL,
    cause       uuid NOT NULL,
    query_key   uuid NOT NULL,
    query       text NOT NULL,
    memory_id   uuid NOT NULL,
    accessed_at timestamptz NOT NULL,
    place       integer NOT NULL,
    PRIMARY KEY (tenant_id, world_id, npc_id, cause, query_key, memory_id)
);

-- Noted accesses are work held for the step's end, like held writes (0096): the stepped clock then
-- appends the StepCompleted that applies them. One item per world.
CREATE FUNCTION memory_accesses_noted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO held_work (consumer, tenant_id, world_id, item, until)
    SELECT DISTINCT 'memory', tenant_id, world_id, 'accesses', 'step' FROM added ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE FUNCTION memory_accesses_taken() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM held_work h USING (SELECT DISTINCT tenant_id, world_id FROM removed) r
     WHERE h.consumer = 'memory' AND h.tenant_id = r.tenant_id AND h.world_id = r.world_id
       AND h.item = 'accesses'
       AND NOT EXISTS (SELECT 1 FROM memory_accesses_pending p
                        WHERE p.tenant_id = r.tenant_id AND p.world_id = r.world_id);
    RETURN NULL;
END $$;
CREATE TRIGGER memory_accesses_noted AFTER INSERT ON memory_accesses_pending
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION memory_accesses_noted();
CREATE TRIGGER memory_accesses_taken AFTER DELETE ON memory_accesses_pending
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION memory_accesses_taken();

-- The why view finds the accesses a handling made inside the batched events.
CREATE INDEX events_access_causes_idx ON events USING gin ((payload -> 'retrievals') jsonb_path_ops)
    WHERE type = 'MemoriesAccessed';

-- The memory service now claims its own MemoryRecorded events where it appends them, and its consumer no
-- longer reads them back. Those it had not read back yet at the upgrade have their rows already (the
-- recording wrote them): claim them, so a rebuild folds exactly what the live read model holds. (An own
-- MemoriesAccessed not read back yet was not applied either: it stays unclaimed, out of both.)
INSERT INTO processed_events (consumer, event_id)
SELECT 'memory', event_id FROM events WHERE type = 'MemoryRecorded' AND forked_from IS NULL
ON CONFLICT DO NOTHING;
