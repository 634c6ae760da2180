-- Tool registry and billing core: credit ledgers, receipts, usage counters and the
-- tool-call telemetry row.
-- Invariants:
--   * a ledger never goes below zero: `used <= allowance` is checked by the database,
--     and charges spend with a conditional update inside the receipt's transaction;
--   * an idempotency key charges at most once per workspace (unique index);
--   * every row hangs off a workspace and is read scoped by workspace_id;
--   * timestamps are unix milliseconds.

-- One row per workspace, ledger and period. `intelligence` (créditos de inteligencia)
-- uses the calendar month 'YYYY-MM' as its period and the plan's monthly allowance;
-- `contact` (créditos de contacto) is prepaid and uses the single period 'prepaid'.
create table credit_ledgers (
    workspace_id text not null references workspaces(id) on delete cascade,
    ledger       text not null check (ledger in ('intelligence', 'contact')),
    period       text not null,
    allowance    integer not null check (allowance >= 0),
    used         integer not null default 0 check (used >= 0),
    updated_at   integer not null,
    primary key (workspace_id, ledger, period),
    check (used <= allowance)
);

-- Every charge, from any surface. `branch` is what actually executed (e.g. the
-- supplier or the opportunity branch of market_get), never a fixed action.
create table receipts (
    id              text primary key,
    workspace_id    text not null references workspaces(id) on delete cascade,
    user_id         text not null,
    action          text not null,
    branch          text not null,
    amount          integer not null check (amount >= 0),
    ledger          text not null check (ledger in ('intelligence', 'contact')),
    period          text not null,
    idempotency_key text not null,
    surface         text not null check (surface in ('ui', 'mcp', 'luna')),
    auto_policy     text,                       -- "automático por la política que X fijó a las HH:MM"
    call_ref        text,
    created_at      integer not null,
    unique (workspace_id, idempotency_key)
);
create index receipts_by_workspace on receipts(workspace_id, created_at);

-- Windowed counters: 'reads_hour' (bucket = unix hour) and 'searches_day' (bucket = unix day).
create table usage_counters (
    workspace_id text not null references workspaces(id) on delete cascade,
    counter      text not null check (counter in ('reads_hour', 'searches_day')),
    bucket       integer not null,
    count        integer not null check (count >= 0),
    primary key (workspace_id, counter, bucket)
);

-- Telemetry: one `agent_tool_used {tool, ok, duration_ms, surface}` row per tool call.
create table tool_calls (
    id           integer primary key autoincrement,
    event        text not null default 'agent_tool_used',
    workspace_id text not null,
    user_id      text,
    tool         text not null,
    ok           integer not null check (ok in (0, 1)),
    duration_ms  integer not null,
    surface      text not null,
    error_code   text,
    created_at   integer not null
);
create index tool_calls_by_workspace on tool_calls(workspace_id, id);
