-- `market_search` on Adjudicaciones with free text (issue 4, docs/BENCH.md): every match
-- was looked up and sorted by date before the first page came back, so a common word in
-- a large state cost hundreds of ms at full size, growing with the data. Now the
-- full-text index's rowid is the award's date order: `ord` = days since 1970 × 2^32 +
-- id, the order of `date desc, id desc` (up to the time of day). FTS5 hands matches
-- back newest first and a page stops after its rows (`market::fulltext::AWARDS_FROM`).
--   * `ord` is a virtual generated column with a unique index (FTS5 reads the content
--     table by it); an award without a date sorts last, as `date desc` does;
--   * awards are never updated in place (imports insert or skip), so the insert and
--     delete triggers keep the index true.
alter table mk_awards add column ord integer generated always as (
    coalesce(cast(julianday(date) - 2440587.5 as integer), 0) * 4294967296 + id) virtual;
create unique index mk_awards_ord on mk_awards(ord);
drop trigger mk_awards_ai;
drop trigger mk_awards_ad;
drop table mk_awards_fts;
create virtual table mk_awards_fts using fts5(
    title, supplier_name, st, content='mk_awards', content_rowid='ord',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_awards_ai after insert on mk_awards begin
    insert into mk_awards_fts(rowid, title, supplier_name, st)
        values (new.ord, new.title, new.supplier_name, new.st);
end;
create trigger mk_awards_ad after delete on mk_awards begin
    insert into mk_awards_fts(mk_awards_fts, rowid, title, supplier_name, st)
        values ('delete', old.ord, old.title, old.supplier_name, old.st);
end;
insert into mk_awards_fts(mk_awards_fts) values ('rebuild');
