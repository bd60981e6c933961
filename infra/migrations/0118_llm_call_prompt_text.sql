-- A call record keeps its template's kind, version and validated inputs, which render its prompt again
-- (npcworld.llm.prompts.render_recorded), instead of the rendered messages as well: they were most of the
-- record. request stays filled for calls recorded before this (and for copies that carry it).
-- prompt_chars is the rendered prompt's length: token use is estimated from it where the provider counts none
-- (the offline provider).
ALTER TABLE llm_calls ALTER COLUMN request DROP NOT NULL;
ALTER TABLE llm_calls ADD COLUMN prompt_chars integer CHECK (prompt_chars >= 0);
