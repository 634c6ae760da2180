-- Turns: one row per accepted turn, so creating a turn is idempotent per session and
-- Idempotency-Key (the same key returns the same turn). Chat and board stay in the
-- session event log; this table holds no message content beyond the request.
create table turns (
    id              text primary key,
    session_id      text not null references work_sessions(id) on delete cascade,
    workspace_id    text not null,
    idempotency_key text not null,
    message         text not null,
    status          text not null check (status in ('running', 'finished', 'failed')),
    route           text,
    steps           integer,
    created_at      integer not null,
    finished_at     integer,
    unique (session_id, idempotency_key)
);
create index turns_by_session on turns(session_id, created_at);
