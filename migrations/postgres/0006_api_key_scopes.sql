-- API keys get scopes, an optional monthly credit budget, an optional expiry and the
-- time they were last used.
--
-- `scopes` lists what a key may do beyond reading, space separated (`contacts:reveal`,
-- `crm:write`, `knowledge:write`, `knowledge:delete`). Keys that existed before this
-- migration get none: they become READ-ONLY, the safe default. An admin who needs an
-- integration to write creates a new key with the scopes it needs in Ajustes.
alter table api_keys add column scopes text not null default '';
-- Credits (of either ledger) the key may spend per calendar month (UTC); NULL: no cap.
alter table api_keys add column credit_budget bigint;
-- Unix ms after which the key authenticates as nothing; NULL: never expires.
alter table api_keys add column expires_at bigint;
-- Written at most once a minute per key.
alter table api_keys add column last_used_at bigint;

-- What each key spent per month, moved in the same transaction as the charge
-- (`billing::key_budget`).
create table api_key_spend (
    key_id  text not null references api_keys(id) on delete cascade,
    period  text not null,                -- YYYY-MM (UTC)
    spent   bigint not null default 0,
    primary key (key_id, period)
);
