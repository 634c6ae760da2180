-- Streaming OCDS imports (issue 24): each run of a file is recorded so a killed import
-- resumes after its last committed batch and a finished file is not imported twice;
-- market rows remember the date of the release their figures come from, so a newer
-- release of the same process updates them (an older one never does), and the figures
-- it replaced are kept in mk_history.

create table mk_import_runs (
    id            integer primary key,
    sha256        text,                      -- of the input bytes (NULL until known for standard input)
    source_path   text not null,             -- the file as given, or '-' for standard input
    source        text,                      -- ocds:<publisher>
    status        text not null,             -- running | done | failed
    releases_done integer not null default 0, -- releases committed (the resume point)
    bytes         integer,
    suppliers     integer not null default 0,
    opportunities integer not null default 0,
    awards        integer not null default 0,
    updated       integer not null default 0,
    unchanged     integer not null default 0,
    skipped       integer not null default 0,
    started_at    integer not null,
    finished_at   integer
);
create index mk_import_runs_sha on mk_import_runs(sha256, status);

alter table mk_opportunities add column release_date text;
alter table mk_awards add column release_date text;

-- Figures a newer release replaced: kind 'opportunity' (row_key = ocid) or 'award'
-- (row_key = award_key).
create table mk_history (
    id            integer primary key,
    kind          text not null,
    row_key       text not null,
    release_date  text,                      -- the release the old figures came from
    amount        real,
    currency      text,
    status        text,
    date          text,
    closes        text,
    replaced_by   text,                      -- the newer release's date
    replaced_at   integer not null
);
create index mk_history_row on mk_history(kind, row_key, id);
