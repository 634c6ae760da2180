-- Query indexes (btree and the GIN full-text ones) that a bulk OCDS import set aside,
-- with their definitions exactly as PostgreSQL reports them (`pg_indexes.indexdef`,
-- `market::import::ocds::deferred`): the import builds them once at its end instead of
-- row by row. A row here means the index is missing now; whoever opens the database
-- next (a later import, an instance at start) recreates it.
create table mk_deferred_ddl (
    name  text primary key,
    kind  text not null,   -- index | trigger (triggers only on SQLite)
    fts   text,            -- for a trigger: the full-text table it keeps
    sql   text not null
);
