-- Memory provenance (docs/studio-controls.md "Memory provenance"): where a memory came from (perceived, told,
-- inferred, designer), who told it (npc:<id> or player:<id>) and how far the NPC relies on it (high, medium,
-- low). Rows recorded before get what their events fold to (npcworld.contracts.memory.legacy_provenance).
ALTER TABLE memories
    ADD COLUMN source text NOT NULL DEFAULT 'perceived'
        CHECK (source IN ('perceived', 'told', 'inferred', 'designer')),
    ADD COLUMN told_by text,
    ADD COLUMN trust text NOT NULL DEFAULT 'high' CHECK (trust IN ('high', 'medium', 'low'));

UPDATE memories SET source = 'designer' WHERE kind = 'seed';
UPDATE memories SET source = 'inferred' WHERE kind IN ('reflection', 'plan');
UPDATE memories SET trust = 'medium' WHERE kind = 'reflection';
UPDATE memories SET trust = 'low', source = 'told', told_by = 'player:' || substr(subject, 8)
    WHERE kind = 'observation' AND subject LIKE 'player %';
UPDATE memories SET trust = 'low' WHERE kind = 'dialogue' AND subject LIKE 'player %';
