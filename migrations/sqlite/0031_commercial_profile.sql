-- The workspace's commercial profile (CONTRACT §7.1): what the team sells and to whom,
-- set by an owner/admin in Ajustes and read by every turn. One row per workspace; the
-- body is the JSON of `luna_protocol::session::CommercialProfile`, validated by the
-- engine before it is written.
create table workspace_profiles (
    workspace_id text primary key references workspaces(id) on delete cascade,
    body text not null,
    updated_by text not null,
    updated_at bigint not null
);
