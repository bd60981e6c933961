-- Inner-voice directives an NPC has adopted (newest last): the speaker's own intentions in conversations.
ALTER TABLE dialogue_npcs ADD COLUMN intentions text[] NOT NULL DEFAULT '{}';
