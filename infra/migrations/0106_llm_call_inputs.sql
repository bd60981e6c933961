-- The template inputs of each model call (the prompt template's validated input model, as JSON), so that a
-- recorded decision can be re-run with another model or the current prompt version as a dry run (the
-- console's "re-run"). NULL for calls recorded before this column: those can only be re-run with the same
-- rendered messages.
ALTER TABLE llm_calls ADD COLUMN inputs jsonb;
