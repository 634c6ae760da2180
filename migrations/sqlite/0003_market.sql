-- Market data (CONTRACT §4): public procurement records modelled on OCDS 1.1 plus Mexican
-- registries. Shared by every workspace (public data, no workspace_id).
-- Invariants:
--   * every row carries `source` (generator, ocds:<publisher>, sat69b, …) and a natural
--     key unique per source, so imports are idempotent (insert-or-ignore);
--   * dates are ISO `YYYY-MM-DD` text (lexicographic order = chronological order);
--   * `state_code` is the INEGI code 1..32 (NULL when unknown); amounts are REAL in
--     `currency` (MXN unless stated);
--   * FTS5 indexes fold accents, ñ and case (`unicode61 remove_diacritics 2`) and are
--     kept in sync by triggers.

create table mk_suppliers (
    id            text primary key,          -- RFC when known, else '<scheme>:<id>'
    rfc           text,                      -- normalised RFC or NULL (state-registry ids, hashed)
    rfc_valid     integer not null default 0, -- 1 when the check digit verifies
    name          text not null,
    state_code    integer,
    municipality  text,
    scian         text,
    size_band     text,                      -- micro | pequena | mediana | grande
    website       text,
    logo_url      text,
    source        text not null,
    awards_count  integer not null default 0, -- denormalised from mk_awards (refresh_stats)
    awards_total  real not null default 0,
    last_award    text,
    created_at    integer not null
);
create index mk_suppliers_state on mk_suppliers(state_code, scian, awards_total desc);
create index mk_suppliers_scian on mk_suppliers(scian, awards_total desc);
create index mk_suppliers_total on mk_suppliers(awards_total desc);
create index mk_suppliers_rfc on mk_suppliers(rfc);

create table mk_opportunities (
    id            integer primary key,
    ocid          text not null unique,
    title         text not null,
    description   text,
    buyer         text not null,             -- short name (IMSS, CFE, SEPAF Jalisco…)
    buyer_name    text,
    procedure     text,                      -- open | limited | direct
    state_code    integer,
    scian         text,
    amount        real,
    currency      text not null default 'MXN',
    published     text,
    closes        text,
    status        text,                      -- planning | active | complete | cancelled
    source        text not null
);
create index mk_opps_published on mk_opportunities(published desc);
create index mk_opps_state on mk_opportunities(state_code, published desc);
create index mk_opps_buyer on mk_opportunities(buyer, published desc);

create table mk_awards (
    id            integer primary key,
    award_key     text not null unique,      -- '<source>:<ocid>:<award id>:<supplier id>'
    ocid          text,
    supplier_id   text not null,
    supplier_name text not null,
    buyer         text not null,
    buyer_name    text,
    title         text not null,
    amount        real,
    currency      text not null default 'MXN',
    date          text,
    year          integer,
    procedure     text,
    state_code    integer,                   -- the supplier's state (denormalised for filters)
    scian         text,                      -- the supplier's SCIAN (denormalised)
    source        text not null
);
create index mk_awards_supplier on mk_awards(supplier_id, date desc);
create index mk_awards_state on mk_awards(state_code, date desc);
create index mk_awards_state_scian on mk_awards(state_code, scian, date, amount);
create index mk_awards_buyer on mk_awards(buyer, date desc);
create index mk_awards_date on mk_awards(date desc);
create index mk_awards_year on mk_awards(year, amount);

create table mk_permits (
    id            integer primary key,
    permit_key    text not null unique,
    holder_id     text,                      -- mk_suppliers.id when linked
    holder_rfc    text,
    holder_name   text not null,
    permit_type   text not null,             -- e.g. 'COFEPRIS registro sanitario'
    number        text,
    status        text not null,             -- vigente | vencido | en_tramite | revocado
    date          text,
    state_code    integer,
    source        text not null
);
create index mk_permits_holder on mk_permits(holder_rfc);
create index mk_permits_date on mk_permits(date desc);

create table mk_risks (
    id            integer primary key,
    risk_key      text not null unique,      -- '<source>:<rfc>:<notice>'
    rfc           text not null,
    name          text not null,
    mark_kind     text not null,             -- sat_69b_presunto | sat_69b_definitivo | …
    source        text not null,
    date          text,
    notice        text,
    note          text
);
create index mk_risks_rfc on mk_risks(rfc);
create index mk_risks_date on mk_risks(date desc);

-- One row per import run or generator build (coverage and freshness).
create table mk_imports (
    id            integer primary key,
    source        text not null,
    label         text not null,
    kind          text not null,             -- ocds | sat69b | generator
    inserted      integer not null,
    skipped       integer not null,
    finished_at   integer not null
);

create virtual table mk_suppliers_fts using fts5(
    name, content='mk_suppliers', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_suppliers_ai after insert on mk_suppliers begin
    insert into mk_suppliers_fts(rowid, name) values (new.rowid, new.name);
end;
create trigger mk_suppliers_ad after delete on mk_suppliers begin
    insert into mk_suppliers_fts(mk_suppliers_fts, rowid, name) values ('delete', old.rowid, old.name);
end;
create trigger mk_suppliers_au after update of name on mk_suppliers begin
    insert into mk_suppliers_fts(mk_suppliers_fts, rowid, name) values ('delete', old.rowid, old.name);
    insert into mk_suppliers_fts(rowid, name) values (new.rowid, new.name);
end;

create virtual table mk_opportunities_fts using fts5(
    title, buyer, content='mk_opportunities', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_opps_ai after insert on mk_opportunities begin
    insert into mk_opportunities_fts(rowid, title, buyer) values (new.id, new.title, new.buyer);
end;
create trigger mk_opps_ad after delete on mk_opportunities begin
    insert into mk_opportunities_fts(mk_opportunities_fts, rowid, title, buyer) values ('delete', old.id, old.title, old.buyer);
end;
create trigger mk_opps_au after update of title, buyer on mk_opportunities begin
    insert into mk_opportunities_fts(mk_opportunities_fts, rowid, title, buyer) values ('delete', old.id, old.title, old.buyer);
    insert into mk_opportunities_fts(rowid, title, buyer) values (new.id, new.title, new.buyer);
end;

create virtual table mk_awards_fts using fts5(
    title, supplier_name, content='mk_awards', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_awards_ai after insert on mk_awards begin
    insert into mk_awards_fts(rowid, title, supplier_name) values (new.id, new.title, new.supplier_name);
end;
create trigger mk_awards_ad after delete on mk_awards begin
    insert into mk_awards_fts(mk_awards_fts, rowid, title, supplier_name) values ('delete', old.id, old.title, old.supplier_name);
end;

create virtual table mk_permits_fts using fts5(
    holder_name, permit_type, content='mk_permits', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_permits_ai after insert on mk_permits begin
    insert into mk_permits_fts(rowid, holder_name, permit_type) values (new.id, new.holder_name, new.permit_type);
end;

create virtual table mk_risks_fts using fts5(
    name, content='mk_risks', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
create trigger mk_risks_ai after insert on mk_risks begin
    insert into mk_risks_fts(rowid, name) values (new.id, new.name);
end;
