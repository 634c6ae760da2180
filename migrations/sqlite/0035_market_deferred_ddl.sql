-- Query indexes and full-text triggers that a bulk OCDS import set aside, with their
-- definitions exactly as SQLite kept them (`market::import::deferred`): the import
-- builds them once at its end instead of row by row. A row here means the index or
-- trigger is missing now; whoever opens the database next (a later import, the server
-- at start) recreates it and rebuilds the full-text index it feeds.
create table mk_deferred_ddl (
    name  text primary key,
    kind  text not null,   -- index | trigger
    fts   text,            -- for a trigger: the full-text table it keeps
    sql   text not null
);
