-- Decision cards (CONTRACT §7.2, §8) and auto mode with a budget.
-- Invariants:
--   * a decision row is written in the same transaction as its `decision.proposed`
--     event, and its resolution in the same transaction as `decision.resolved`;
--   * `status` leaves 'pending' exactly once (guarded `where status = 'pending'`), so
--     two tabs accepting at once resolve it once;
--   * `target` is server-only (proposal ids, quote ids); the card shown to people is
--     `card`, and the idempotency key of the execution is minted here, never by a model;
--   * `credits` and `contacts` record what an accepted decision spent, so the session's
--     auto budget and the per-turn contact lock are computed from facts, not promises.

create table decisions (
    id              text primary key,
    session_id      text not null references work_sessions(id) on delete cascade,
    workspace_id    text not null,
    turn_id         text,
    kind            text not null,
    target          text not null,          -- JSON, server-only execution handle
    card            text not null,          -- JSON, luna_protocol::decision::DecisionCard
    idempotency_key text not null unique,   -- minted by the server at proposal time
    expires_at      integer,
    status          text not null default 'pending'
                    check (status in ('pending', 'accepted', 'declined', 'expired')),
    resolved_by     text,
    resolved_via    text check (resolved_via in ('person', 'auto')),
    resolved_at     integer,
    result          text,                   -- JSON, luna_protocol::decision::DecisionResult
    credits         integer not null default 0,
    contacts        integer not null default 0,
    created_at      integer not null
);
create index decisions_by_session on decisions(session_id, status);

-- Who set the session's auto mode, when, and which decision classes it covers.
alter table work_sessions add column auto_set_by text;
alter table work_sessions add column auto_set_at integer;
alter table work_sessions add column auto_classes text not null default '[]';

-- Per-workspace auto-mode policy (admin settings). No row = the defaults.
create table workspace_auto_policy (
    workspace_id        text primary key references workspaces(id) on delete cascade,
    allowed             integer not null default 1 check (allowed in (0, 1)),
    default_credit_cap  integer not null default 50 check (default_credit_cap >= 0),
    default_contact_cap integer not null default 10 check (default_contact_cap >= 0),
    classes             text not null,      -- JSON array of decision kinds auto may run
    updated_by          text,
    updated_at          integer not null
);
