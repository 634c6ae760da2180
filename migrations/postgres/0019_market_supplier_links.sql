-- Entity resolution of market suppliers (issue 24, `market::entities`).
-- The same supplier appears in procurement data with an RFC, a hashed RFC
-- (`rfc-hash:<hex>`), a state registry id (`<scheme>:<id>`) or only a name. An alias
-- (a supplier without an RFC) is linked to the one RFC'd supplier it is:
--   * method `rfc`, confidence 1.0: the alias publishes that RFC among its other
--     identifiers (`mk_suppliers.rfc_claimed`);
--   * method `nombre`, confidence 0.9 (same folded legal name) or 0.8 (same only once
--     the company suffixes are folded): exactly one RFC'd supplier has that name.
-- Two different RFCs are never linked: only suppliers without an RFC are aliases.
create table mk_supplier_links (
    alias_id      text primary key,          -- mk_suppliers.id of the alias (no RFC)
    canonical_id  text not null,             -- mk_suppliers.id of the RFC'd supplier
    method        text not null,             -- rfc | nombre
    confidence    double precision not null,            -- 1.0 rfc; 0.9 / 0.8 nombre
    linked_at     bigint not null
);
create index mk_supplier_links_canonical on mk_supplier_links(canonical_id);

-- The legal name folded for matching (`entities::name_key`: lowercase, no accents or
-- punctuation, company suffixes removed), filled by the resolution.
alter table mk_suppliers add column name_key text;
-- An RFC an alias publishes among its additional identifiers (OCDS
-- `additionalIdentifiers`), kept so a later run can link it once that RFC appears.
alter table mk_suppliers add column rfc_claimed text;
create index mk_suppliers_name_key on mk_suppliers(name_key);
create index mk_suppliers_rfc_claimed on mk_suppliers(rfc_claimed);
