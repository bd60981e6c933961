-- A retrieval made for player traffic (a chat, a perception a studio posted, and what they cause) no longer
-- holds its stepped world's step: its accesses are turned into events within about a second, as a world that
-- does not step has them, and the stepped clock appends no StepCompleted for them. Before this, under steady
-- player traffic every step of a stepped world held work and so waited for the whole pipeline twice.
-- held: the access waits for its stepped world's step end (a retrieval the world's own life made).
ALTER TABLE memory_accesses_pending ADD COLUMN held boolean NOT NULL DEFAULT true;

CREATE OR REPLACE FUNCTION memory_accesses_noted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO held_work (consumer, tenant_id, world_id, item, until)
    SELECT DISTINCT 'memory', tenant_id, world_id, 'accesses', 'step' FROM added WHERE held
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory_accesses_taken() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM held_work h USING (SELECT DISTINCT tenant_id, world_id FROM removed) r
     WHERE h.consumer = 'memory' AND h.tenant_id = r.tenant_id AND h.world_id = r.world_id
       AND h.item = 'accesses'
       AND NOT EXISTS (SELECT 1 FROM memory_accesses_pending p
                        WHERE p.tenant_id = r.tenant_id AND p.world_id = r.world_id AND p.held);
    RETURN NULL;
END $$;
