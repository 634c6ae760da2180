-- Scheduled updates and provenance of market rows (issue 24).
--   * `luna-server sync` reads the configured sources (files, or directories where an
--     operator drops dumps) and imports only the files whose bytes were never imported
--     completely (`mk_import_runs.sha256`); each sync is one row here.
--   * Licitaciones and Adjudicaciones remember the release their figures come from
--     (`release_id`, beside the existing `ocid` and `release_date`) and the import run
--     that wrote them (`import_run` → `mk_import_runs`: the file and its publisher), so
--     tool results and the evidence drawer can say where every figure came from.
create table mk_sync_runs (
    id          integer primary key,
    sources     text not null,               -- the configured sources, one per line
    status      text not null,               -- running | done | failed
    files       integer not null default 0,  -- files seen
    imported    integer not null default 0,  -- files imported (new, or an interrupted run resumed)
    already     integer not null default 0,  -- files whose bytes were already imported completely
    failed      integer not null default 0,  -- files that could not be read or parsed
    started_at  integer not null,
    finished_at integer
);

alter table mk_import_runs add column publisher text;
alter table mk_awards add column release_id text;
alter table mk_awards add column import_run integer;
alter table mk_opportunities add column release_id text;
alter table mk_opportunities add column import_run integer;
