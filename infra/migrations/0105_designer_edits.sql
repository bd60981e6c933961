-- Designers' edits (NpcRetired, MemoryForgotten): what each owning service keeps of them.

-- Planning gives a retired NPC no next action; dialogue opens no conversation with it.
ALTER TABLE planning_npcs ADD COLUMN retired boolean NOT NULL DEFAULT false;
ALTER TABLE dialogue_npcs ADD COLUMN retired boolean NOT NULL DEFAULT false;

-- Memories a designer removed. The memory row itself is deleted; this keeps the memory's own MemoryRecorded,
-- when the memory consumer reads it back after the removal, from putting it back.
CREATE TABLE memory_forgotten (
    npc_key   bigint NOT NULL REFERENCES memory_npcs (npc_key) ON DELETE CASCADE,
    memory_id uuid   NOT NULL,
    PRIMARY KEY (npc_key, memory_id)
);
