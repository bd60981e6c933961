-- A recorded call is found by an 8-byte digest of (tenant, request hash) instead of the two texts: the index
-- entry held the tenant (36 characters) and the 64-character hash, ~200 bytes a call in pages that random
-- hashes leave half full, against ~30 now. Reads say for_request(tenant_id, request_hash, %s, %s), which
-- compares the digest (for the index) and the texts (for exactness), like in_world() (migration 0124).
CREATE FUNCTION llm_request_key(tenant text, request_hash text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT
    PARALLEL SAFE AS $$ SELECT hashtextextended(tenant || '/' || request_hash, 0) $$;
CREATE FUNCTION for_request(tenant_id text, request_hash text, tenant text, hash text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT llm_request_key(tenant_id, request_hash) = llm_request_key(tenant, hash)
                 AND tenant_id = tenant AND request_hash = hash $$;
DROP INDEX llm_calls_request_hash_idx;
CREATE INDEX llm_calls_request_key_idx ON llm_calls (llm_request_key(tenant_id, request_hash), id);
