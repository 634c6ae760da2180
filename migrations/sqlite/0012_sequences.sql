-- Email sequences (CONTRACT §9): drafts, immutable per-step authorizations, the frozen
-- audience of each authorized version, the send log and suppressions.
-- Invariants:
--   * a draft is inert: nothing is sent from a sequence whose status is 'borrador';
--   * every edit bumps `version`; authorizations and sends belong to one version, so an
--     edit after authorization leaves the old ones unusable (the dispatcher checks);
--   * sequence_authorizations and sequence_audience are insert-only;
--   * sequence_sends has one row per (sequence, step, recipient): a step is never sent
--     twice to one person, whatever the number of dispatchers or restarts; a row leaves
--     'pending' only through a guarded update (the claim).

create table sequences (
    id            text primary key,
    workspace_id  text not null references workspaces(id) on delete cascade,
    session_id    text,                    -- where it was drafted (board updates go there)
    name          text not null,
    collection_id text not null,
    audience      text not null,           -- JSON {record_ids?: [...], stage?: "..."}
    steps         text not null,           -- JSON [{delay_days, subject, body}]
    sender        text not null,           -- "Nombre <correo>"
    status        text not null default 'borrador'
                  check (status in ('borrador', 'activa', 'terminada')),
    version       integer not null default 1 check (version >= 1),
    created_by    text not null,
    created_at    integer not null,
    updated_at    integer not null,
    activated_at  integer
);
create index sequences_by_workspace on sequences(workspace_id, updated_at);

create table sequence_authorizations (
    sequence_id   text not null references sequences(id) on delete cascade,
    version       integer not null,
    step          integer not null,
    fingerprint   text not null,           -- SHA-256 over sender + audience + rendered content
    authorized_by text not null,
    authorized_at integer not null,
    primary key (sequence_id, version, step)
);

create table sequence_audience (
    sequence_id text not null references sequences(id) on delete cascade,
    version     integer not null,
    email       text not null,
    record_id   text not null,
    vars        text not null,             -- JSON personalisation variables
    primary key (sequence_id, version, email)
);

create table sequence_sends (
    id              text primary key,
    workspace_id    text not null,
    sequence_id     text not null references sequences(id) on delete cascade,
    version         integer not null,
    step            integer not null,
    email           text not null,
    due_at          integer not null,
    status          text not null default 'pending'
                    check (status in ('pending', 'sending', 'sent', 'failed', 'suppressed',
                                      'blocked', 'unknown')),
    attempts        integer not null default 0,
    next_attempt_at integer not null,
    claimed_by      text,
    claimed_at      integer,
    message_id      text,
    error           text,
    sent_at         integer,
    unique (sequence_id, step, email)
);
create index sequence_sends_due on sequence_sends(status, next_attempt_at);

create table email_suppressions (
    workspace_id text not null references workspaces(id) on delete cascade,
    email        text not null,
    reason       text not null check (reason in ('baja', 'rebote', 'manual')),
    created_at   integer not null,
    primary key (workspace_id, email)
);
