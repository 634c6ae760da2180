-- The workspace's commercial profile (CONTRACT §7.1); the SQLite twin is 0031_commercial_profile.
-- One row per workspace; `body` is the JSON of `luna_protocol::session::CommercialProfile`,
-- validated by the engine before it is written.
create table workspace_profiles (
    workspace_id text primary key references workspaces(id) on delete cascade,
    body text not null,
    updated_by text not null,
    updated_at bigint not null
);
