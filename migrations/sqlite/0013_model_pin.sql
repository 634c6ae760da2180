-- The pin gate (CONTRACT §7.5: spend cap → pin → primary → escalation → refusal).
-- An operator may pin a workspace to one model route:
--   'none'     — the default: the primary answers, escalation as the gates allow;
--   'primary'  — never escalate: a step the primary cannot answer is refused;
--   'fallback' — every step goes to the fallback (still refused at the spend cap:
--                a workspace at its cap never leaves the primary).
-- Set with `luna-server model-pin`; never shown to the browser.
alter table workspaces add column model_pin text not null default 'none'
    check (model_pin in ('none', 'primary', 'fallback'));

-- Attempts made on the fallback because of the pin carry reason 'pin'. SQLite cannot
-- change a CHECK in place, so the table is rebuilt with its rows.
create table model_attempts_new (
    id             integer primary key autoincrement,
    workspace_id   text not null,
    turn_id        text,
    route          text not null check (route in ('primary', 'fallback')),
    -- Why this attempt left the primary: 'capability' (invalid output after the one
    -- repair), 'technical' (provider error or timeout) or 'pin' (the workspace is
    -- pinned to the fallback); NULL on the primary.
    reason         text check (reason in ('capability', 'technical', 'pin')),
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
insert into model_attempts_new select * from model_attempts;
drop table model_attempts;
alter table model_attempts_new rename to model_attempts;
create index model_attempts_by_workspace on model_attempts(workspace_id, created_at);
