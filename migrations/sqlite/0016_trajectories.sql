-- Turn trajectories (CONTRACT §14, issues 6 and 11): what every turn did, step by step, in
-- the form the blocking evals read (`luna_engine::turn::trajectory`). The runner writes
-- a step in the same places it appends session events; resolving a decision appends
-- its step (who resolved it, what it charged) in the same transaction as
-- `decision.resolved`.
-- Invariants:
--   * server-only: never sent to a browser or a model (the session log is what the
--     client folds); no idempotency key or quote token is ever stored in a step;
--   * append-only: steps are ordered by `id`; a step is never edited;
--   * `body` is the JSON of one `Step` (tagged by `kind`); timestamps are unix ms.
create table turn_trajectories (
    session_id   text not null,
    turn_id      text not null,
    workspace_id text not null,
    message      text not null,
    stage        text not null,
    facts        text not null,
    created_at   integer not null,
    primary key (session_id, turn_id)
);

create table trajectory_steps (
    id         integer primary key autoincrement,
    session_id text not null,
    turn_id    text not null,
    kind       text not null,
    body       text not null,
    created_at integer not null
);
create index trajectory_steps_by_turn on trajectory_steps(session_id, turn_id, id);
