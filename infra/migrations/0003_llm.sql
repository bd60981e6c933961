-- LLM layer: every call recorded (audit, metrics, replay by request hash) and token budgets.

CREATE TABLE llm_calls (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id        text        NOT NULL,
    world_id         text        NOT NULL,
    npc_id           text,
    prompt_kind      text        NOT NULL,
    template_version integer     NOT NULL,
    request_hash     text        NOT NULL,
    model            text        NOT NULL,   -- the model that answered (the offline label for fallbacks)
    provider         text        NOT NULL CHECK (provider IN ('openai', 'offline', 'replay')),
    parameters       jsonb       NOT NULL,
    request          jsonb       NOT NULL,   -- the rendered messages
    response         jsonb,                  -- the validated output; NULL when there is none
    response_text    text,                   -- the last raw answer (kept for malformed output)
    tokens_in        integer     NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out       integer     NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    latency_ms       double precision NOT NULL DEFAULT 0,
    attempts         integer     NOT NULL DEFAULT 0,
    outcome          text        NOT NULL CHECK (outcome IN
                         ('ok', 'malformed', 'error', 'budget_fallback', 'outage_fallback', 'replayed')),
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((response IS NULL) = (outcome IN ('malformed', 'error')))
);
CREATE INDEX llm_calls_request_hash_idx ON llm_calls (tenant_id, request_hash, id);
CREATE INDEX llm_calls_world_idx ON llm_calls (tenant_id, world_id, created_at);

-- Token usage and optional limits per tenant (world_id = '') and per world. A NULL limit means the
-- deployment default (LLM_TENANT_TOKEN_BUDGET / LLM_WORLD_TOKEN_BUDGET). fallback_since marks when the
-- world started being answered offline, so the LLMBudgetExhausted event is emitted once.
CREATE TABLE llm_budgets (
    tenant_id      text        NOT NULL,
    world_id       text        NOT NULL,
    limit_tokens   bigint      CHECK (limit_tokens IS NULL OR limit_tokens >= 0),
    used_tokens    bigint      NOT NULL DEFAULT 0,
    fallback_since timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, world_id)
);
