-- Idempotency keys bound to their exact request (issue 19). A key a caller sends with a
-- tool call is claimed here before the tool runs, with the SHA-256 fingerprint of the
-- request (tool, canonical arguments, caller). The same key with another request is
-- IDEMPOTENCY_CONFLICT; the same request again returns `response`, the stored outcome,
-- instead of running the tool (and its charge) a second time. `response` is null while
-- the first call runs; a failed call deletes its claim so that a retry may run.
create table tool_requests (
    workspace_id    text not null references workspaces(id) on delete cascade,
    idempotency_key text not null,
    fingerprint     text not null,
    tool            text not null,
    response        text,
    created_at      bigint not null,
    primary key (workspace_id, idempotency_key)
);
