-- CRM records saved together and receipts charged together (the same millisecond) keep
-- the order they were written in: `ord` is the insertion order (SQLite uses its rowid).
alter table crm_records add column ord bigint generated always as identity;
alter table receipts add column ord bigint generated always as identity;
