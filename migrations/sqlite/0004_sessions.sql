-- Work sessions (CONTRACT §2, §12): the one owner of a conversation's state.
-- Invariants:
--   * a session belongs to one workspace; only that workspace's members may read it;
--   * session_events is append-only: rows are never updated or deleted (except by
--     cascade when the session goes), and `seq` is gap-free per session, 1, 2, 3…;
--   * `work_sessions.last_seq` is the counter that hands out seqs: an appender bumps it
--     and inserts the event in the same transaction, so concurrent appends serialize
--     on the session row and a rolled-back append leaves no gap;
--   * board and chat are NOT stored here as tables: they are projections of the log by
--     the shared reducer; session_snapshots only caches that projection at some seq
--     and can always be rebuilt from session_events.

create table work_sessions (
    id             text primary key,
    workspace_id   text not null references workspaces(id) on delete cascade,
    user_id        text not null references users(id) on delete cascade,
    -- The stage of the latest accepted turn (derived from the log, kept for queries).
    stage          text not null default 'sin_criterio'
                   check (stage in ('sin_criterio', 'buscando', 'con_seleccion',
                                    'con_lista_guardada', 'decision_pendiente')),
    mode           text not null default 'preguntar'
                   check (mode in ('preguntar', 'automatico', 'ajuste_fino')),
    -- Auto-mode budget for this session (CONTRACT §8) and what was spent against it.
    credit_cap     integer not null default 50 check (credit_cap >= 0),
    contact_cap    integer not null default 10 check (contact_cap >= 0),
    credits_spent  integer not null default 0 check (credits_spent >= 0),
    contacts_spent integer not null default 0 check (contacts_spent >= 0),
    last_seq       integer not null default 0 check (last_seq >= 0),
    created_at     integer not null,
    updated_at     integer not null
);
create index work_sessions_by_user on work_sessions(workspace_id, user_id, created_at);

create table session_events (
    session_id text not null references work_sessions(id) on delete cascade,
    seq        integer not null check (seq >= 1),
    kind       text not null,         -- the dotted event name, e.g. 'turn.accepted'
    payload    text not null,         -- the event as JSON (luna_protocol::event::SessionEvent)
    created_at integer not null,
    primary key (session_id, seq)     -- UNIQUE(session_id, seq): no seq is ever handed out twice
);

create table session_snapshots (
    session_id text not null references work_sessions(id) on delete cascade,
    seq        integer not null check (seq >= 1),
    view       text not null,         -- luna_protocol::view::SessionView as JSON, as of `seq`
    created_at integer not null,
    primary key (session_id, seq)
);
