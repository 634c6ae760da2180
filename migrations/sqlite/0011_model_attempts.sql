-- Model attempts (CONTRACT §7.5): one row per call to a configured model, so usage is
-- recorded per attempt and a workspace's monthly model spend can be capped.
-- Invariants:
--   * tokens and cost are NULL when the provider did not report them (never guessed);
--   * cost is in millionths of a US dollar (the providers' price unit);
--   * route and model stay on the server: no provider, tier or model id reaches the
--     browser (the session log never holds them);
--   * timestamps are unix milliseconds.
create table model_attempts (
    id             integer primary key autoincrement,
    workspace_id   text not null,
    turn_id        text,
    route          text not null check (route in ('primary', 'fallback')),
    -- Why this attempt left the primary: 'capability' (invalid output after the one
    -- repair) or 'technical' (provider error or timeout); NULL on the primary.
    reason         text check (reason in ('capability', 'technical')),
    model          text not null,
    outcome        text not null check (outcome in ('ok', 'invalid', 'error', 'timeout')),
    http_status    integer,
    tokens_in      integer,
    tokens_out     integer,
    cached_tokens  integer,
    cost_micro_usd integer,
    duration_ms    integer not null,
    created_at     integer not null
);
create index model_attempts_by_workspace on model_attempts(workspace_id, created_at);
