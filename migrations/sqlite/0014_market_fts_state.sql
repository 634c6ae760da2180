-- Free text + state, the shape that drove `market_search` p95 (docs/BENCH.md): the
-- text matches were materialised (≈ 1/6 of all Adjudicaciones for "cartón") and each
-- one looked up to test its state. Now the state is a token of the full-text index
-- (`st`, e.g. `e14` for Jalisco, `e0` when unknown), so FTS5 intersects text and state
-- itself and SQLite only sees the rows of that state.
--   * `st` is a virtual generated column of the content table: nothing is stored
--     twice, and `rebuild` reads it like any other column;
--   * text terms are matched only in the text columns (`{title supplier_name}`,
--     `{name}`), never in `st`;
--   * the suppliers' update trigger now also fires when an import fills in a state.
alter table mk_awards add column st text generated always as ('e' || coalesce(state_code, 0)) virtual;
drop trigger mk_awards_ai;
drop trigger mk_awards_ad;
drop table mk_awards_fts;
create virtual table mk_awards_fts using fts5(
    title, supplier_name, st, content='mk_awards', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_awards_ai after insert on mk_awards begin
    insert into mk_awards_fts(rowid, title, supplier_name, st)
        values (new.id, new.title, new.supplier_name, new.st);
end;
create trigger mk_awards_ad after delete on mk_awards begin
    insert into mk_awards_fts(mk_awards_fts, rowid, title, supplier_name, st)
        values ('delete', old.id, old.title, old.supplier_name, old.st);
end;
insert into mk_awards_fts(mk_awards_fts) values ('rebuild');

alter table mk_suppliers add column st text generated always as ('e' || coalesce(state_code, 0)) virtual;
drop trigger mk_suppliers_ai;
drop trigger mk_suppliers_ad;
drop trigger mk_suppliers_au;
drop table mk_suppliers_fts;
create virtual table mk_suppliers_fts using fts5(
    name, st, content='mk_suppliers', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_suppliers_ai after insert on mk_suppliers begin
    insert into mk_suppliers_fts(rowid, name, st) values (new.rowid, new.name, new.st);
end;
create trigger mk_suppliers_ad after delete on mk_suppliers begin
    insert into mk_suppliers_fts(mk_suppliers_fts, rowid, name, st)
        values ('delete', old.rowid, old.name, old.st);
end;
create trigger mk_suppliers_au after update of name, state_code on mk_suppliers begin
    insert into mk_suppliers_fts(mk_suppliers_fts, rowid, name, st)
        values ('delete', old.rowid, old.name, old.st);
    insert into mk_suppliers_fts(rowid, name, st) values (new.rowid, new.name, new.st);
end;
insert into mk_suppliers_fts(mk_suppliers_fts) values ('rebuild');
