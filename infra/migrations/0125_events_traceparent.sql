-- An event's W3C trace context in 26 bytes instead of a JSON object of ~80.
--
-- Nearly every event carries only a traceparent ("00-<32 hex>-<16 hex>-<2 hex>"), which as jsonb
-- ({"traceparent": "..."}) took 79 bytes of each row. It is now stored as its bytes (version, trace id, span
-- id, flags) in `traceparent`; `trace` keeps what does not fit that form (a tracestate, or a traceparent of
-- another shape) and is '{}' otherwise. event_trace() gives the context back as the JSON object it was, so
-- readers select event_trace(trace, traceparent) where they selected trace.
ALTER TABLE events ADD COLUMN traceparent bytea CHECK (length(traceparent) = 26);

CREATE FUNCTION event_trace(trace jsonb, traceparent bytea) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN traceparent IS NULL THEN trace ELSE trace || jsonb_build_object('traceparent',
              encode(substr(traceparent, 1, 1), 'hex') || '-' || encode(substr(traceparent, 2, 16), 'hex') || '-'
              || encode(substr(traceparent, 18, 8), 'hex') || '-' || encode(substr(traceparent, 26, 1), 'hex'))
          END $$;
