-- Each model call names the event being handled when it was made (npcworld.cause), so `npcworld why` can
-- show the calls behind an event. NULL for calls made outside any handling (and for older rows).
ALTER TABLE llm_calls ADD COLUMN cause_event_id uuid;
CREATE INDEX llm_calls_cause_idx ON llm_calls (cause_event_id) WHERE cause_event_id IS NOT NULL;
