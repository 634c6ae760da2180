-- Long research runs (CONTRACT §10): a proposal Luna previews with research_start, the run
-- a person starts by accepting the `investigar` card, its per-phase checkpoints, and
-- the steering messages the person sends while it runs.
-- Invariants:
--   * a row leaves 'propuesta' exactly once, through a guarded update (accepting the
--     card twice starts one run);
--   * `next_phase` and `checkpoints` only move forward, in the same transaction as the
--     phase's `run.progress` event, and only while the run is 'running' (a cancelled
--     run never gets another checkpoint); a restart resumes at `next_phase`, so a
--     finished phase's tool calls (and their charges) are never repeated;
--   * steering rows are insert-only except `applied_phase`, set once by the phase that
--     picked them up.

create table research_runs (
    id             text primary key,          -- run_…
    proposal_id    text not null unique,      -- rsp_…, what research_start returns
    workspace_id   text not null references workspaces(id) on delete cascade,
    session_id     text,                      -- where run.progress goes
    user_id        text not null,             -- who accepted (the run calls tools as them)
    brief          text not null,
    refs           text not null default '[]', -- JSON [ref] the brief starts from
    title          text not null,
    status         text not null default 'propuesta'
                   check (status in ('propuesta', 'running', 'finished', 'failed', 'cancelled')),
    inference_cap  integer not null check (inference_cap >= 0),
    inference_used integer not null default 0,
    next_phase     integer not null default 0,
    checkpoints    text not null default '[]', -- JSON [Checkpoint], one per finished phase
    result         text,                      -- JSON {text, anchors, refs}
    error          text,
    resumes        integer not null default 0, -- start-ups that picked it up again
    created_at     integer not null,
    started_at     integer,
    finished_at    integer,
    updated_at     integer not null
);
create index research_runs_by_status on research_runs(workspace_id, status);
create index research_runs_unfinished on research_runs(status) where status = 'running';

create table research_steering (
    id            integer primary key autoincrement,
    run_id        text not null references research_runs(id) on delete cascade,
    text          text not null,
    created_at    integer not null,
    applied_phase integer                     -- the phase that picked it up
);
create index research_steering_by_run on research_steering(run_id, id);
