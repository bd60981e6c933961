-- Each process's model-provider circuit breakers as its last heartbeat saw them (a list of
-- {provider, state, since, failures, last_failure_at, last_failure}; empty: the process has no live
-- provider, it answers offline). The console shows them per process; a stale beat makes them unknown.
ALTER TABLE consumer_heartbeats ADD COLUMN llm_breakers jsonb NOT NULL DEFAULT '[]';
