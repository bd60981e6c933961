-- Work a service holds for a world outside any consumer's claims: one row per held item, in a table of the
-- shared core, so the stepped clock (npcworld.quiescence) asks one library table instead of reading each
-- service's own. ``until`` says what lets it go: 'step' (the memory service's writes, held until the world's
-- StepCompleted, which the clock appends while any are held) or 'job' (a reflection run waiting for its
-- Celery job; the clock waits for it). Triggers on the services' tables keep it exact, in the transactions
-- that change them.
CREATE TABLE held_work (
    consumer   text NOT NULL,
    tenant_id  text NOT NULL,
    world_id   text NOT NULL,
    item       text NOT NULL,
    until      text NOT NULL CHECK (until IN ('step', 'job')),
    PRIMARY KEY (consumer, tenant_id, world_id, item)
);
CREATE INDEX held_work_world_idx ON held_work (tenant_id, world_id, until);

-- memory: each held event is an item (statement-level, so a step's thousands of rows cost one statement).
CREATE FUNCTION memory_held_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO held_work (consumer, tenant_id, world_id, item, until)
    SELECT 'memory', tenant_id, world_id, event_id::text, 'step' FROM added ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE FUNCTION memory_held_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM held_work h USING removed r
     WHERE h.consumer = 'memory' AND h.tenant_id = r.tenant_id AND h.world_id = r.world_id
       AND h.item = r.event_id::text;
    RETURN NULL;
END $$;
CREATE TRIGGER memory_held_added AFTER INSERT ON memory_held
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION memory_held_added();
CREATE TRIGGER memory_held_removed AFTER DELETE ON memory_held
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION memory_held_removed();

-- reflection: an NPC with a pending run is an item.
CREATE FUNCTION reflection_pending_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND NEW.pending_run IS NULL) THEN
        DELETE FROM held_work WHERE consumer = 'reflection' AND tenant_id = OLD.tenant_id
           AND world_id = OLD.world_id AND item = OLD.npc_id;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.pending_run IS NOT NULL THEN
        INSERT INTO held_work (consumer, tenant_id, world_id, item, until)
        VALUES ('reflection', NEW.tenant_id, NEW.world_id, NEW.npc_id, 'job') ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER reflection_pending_changed AFTER INSERT OR DELETE OR UPDATE OF pending_run ON reflection_npcs
    FOR EACH ROW EXECUTE FUNCTION reflection_pending_changed();

INSERT INTO held_work (consumer, tenant_id, world_id, item, until)
SELECT 'memory', tenant_id, world_id, event_id::text, 'step' FROM memory_held ON CONFLICT DO NOTHING;
INSERT INTO held_work (consumer, tenant_id, world_id, item, until)
SELECT 'reflection', tenant_id, world_id, npc_id, 'job' FROM reflection_npcs WHERE pending_run IS NOT NULL;
