-- Market query performance (issue 4, profiled with EXPLAIN QUERY PLAN on generated data).
--   * Supplier evidence asks for a supplier's largest awards: (supplier_id, amount desc)
--     answers it from the index instead of sorting every award of a large supplier.
--   * `market_aggregate` / `market_compare` scan Adjudicaciones of a state (or of all
--     states) and group them: a covering index with every column they group, filter
--     or sum (except buyer_name) lets them read the index only, never the wide rows.
create index if not exists mk_awards_supplier_amount on mk_awards(supplier_id, amount desc);
create index if not exists mk_awards_cover on mk_awards(
    state_code, buyer, supplier_id, year, date, scian, procedure, currency, amount);
