-- Notes and suggested edits proposed in the same millisecond keep the order they were
-- made in on the review page: `ord` is the insertion order (SQLite uses its rowid).
alter table kn_proposals add column ord bigint generated always as identity;
