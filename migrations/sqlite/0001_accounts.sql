-- Accounts: users, workspaces, memberships, browser sessions and MCP API keys.
-- Invariants:
--   * every row a user can reach hangs off a workspace; reads are scoped by workspace_id;
--   * secrets (passwords, session tokens, API keys) are stored only as hashes;
--   * timestamps are unix milliseconds (INTEGER) so the same code runs on PostgreSQL (BIGINT).

create table users (
    id            text primary key,
    email         text not null unique,          -- stored lower-cased
    display_name  text not null,
    password_hash text not null,                 -- argon2id PHC string
    created_at    integer not null
);

create table workspaces (
    id         text primary key,
    name       text not null,
    plan       text not null check (plan in ('explorer', 'founder', 'commercial')),
    created_at integer not null
);

create table memberships (
    workspace_id text not null references workspaces(id) on delete cascade,
    user_id      text not null references users(id) on delete cascade,
    role         text not null check (role in ('owner', 'admin', 'member')),
    created_at   integer not null,
    primary key (workspace_id, user_id)
);
create index memberships_by_user on memberships(user_id);

-- A browser session. The cookie holds the random token; only its SHA-256 is stored,
-- so a leaked database does not leak live sessions. Login always mints a new row
-- (rotation); logout deletes it.
create table auth_sessions (
    token_hash   text primary key,
    user_id      text not null references users(id) on delete cascade,
    workspace_id text not null references workspaces(id) on delete cascade,
    created_at   integer not null,
    expires_at   integer not null
);
create index auth_sessions_by_user on auth_sessions(user_id);

-- Failed logins, for throttling. Keyed by the lower-cased email whether or not it exists,
-- so throttling does not reveal which emails are registered.
create table login_failures (
    email      text not null,
    failed_at  integer not null
);
create index login_failures_by_email on login_failures(email, failed_at);

-- Workspace API keys for MCP. `prefix` is shown in the settings page; the secret is hashed.
create table api_keys (
    id           text primary key,
    workspace_id text not null references workspaces(id) on delete cascade,
    name         text not null,
    prefix       text not null,
    key_hash     text not null unique,
    created_by   text not null references users(id),
    created_at   integer not null,
    revoked_at   integer
);
create index api_keys_by_workspace on api_keys(workspace_id);

-- Audit trail of administrative changes (roles, keys, policies) and decision resolutions.
create table audit_log (
    id           integer primary key autoincrement,
    workspace_id text not null references workspaces(id) on delete cascade,
    actor_id     text,
    action       text not null,
    detail       text not null,                  -- JSON
    created_at   integer not null
);
create index audit_log_by_workspace on audit_log(workspace_id, id);
