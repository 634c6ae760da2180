-- Personas (contact reveals) and Cerebro (team knowledge).
-- Invariants:
--   * every row hangs off a workspace and is read scoped by workspace_id; a reference
--     from another workspace is NOT_FOUND;
--   * a person is revealed at most once per workspace: (workspace_id, person_id) is the
--     primary key of people_reveals, and a reveal claims its people and charges its
--     receipt in ONE write transaction, so a person is never charged twice;
--   * the quote token (the provider's sealed token) lives only here, never in a result;
--   * a reveal idempotency key runs at most once per workspace (people_reveal_runs);
--   * topics are searched through an FTS5 index folding accents, ñ and case
--     (`unicode61 remove_diacritics 2`), kept in sync by triggers;
--   * timestamps are unix milliseconds.

-- A price quote over a set of people (handles), valid for 10 minutes.
create table people_quotes (
    id               text primary key,          -- quote_id, 'quo_…'
    workspace_id     text not null references workspaces(id) on delete cascade,
    user_id          text not null,
    token            text not null,             -- provider's sealed quote token (server-only)
    handles          text not null,             -- JSON array of person handles
    price            integer not null check (price >= 0),
    already_revealed integer not null check (already_revealed >= 0),
    created_at       integer not null,
    expires_at       integer not null
);
create index people_quotes_by_workspace on people_quotes(workspace_id, created_at);

-- One row per person revealed in a workspace (metadata + the revealed contact data).
create table people_reveals (
    workspace_id text not null references workspaces(id) on delete cascade,
    person_id    text not null,                 -- the person's handle
    company_ref  text not null,                 -- company:<id>
    company_name text not null,
    role         text not null,
    full_name    text not null,
    email        text not null,
    revealed_by  text not null,                 -- user id
    quote_id     text not null,
    receipt_id   text,
    surface      text not null,
    revealed_at  integer not null,
    primary key (workspace_id, person_id)
);
create index people_reveals_by_time on people_reveals(workspace_id, revealed_at);

-- One row per executed reveal, keyed by its idempotency key (replays return it).
create table people_reveal_runs (
    workspace_id    text not null references workspaces(id) on delete cascade,
    idempotency_key text not null,
    quote_id        text not null,
    receipt_id      text,
    charged         integer not null check (charged >= 0),
    newly_revealed  text not null,              -- JSON array of handles charged in this run
    created_at      integer not null,
    primary key (workspace_id, idempotency_key)
);
create index people_reveal_runs_by_quote on people_reveal_runs(workspace_id, quote_id);

-- Cerebro topics. `status`: en_revision (a note awaiting an owner/admin) or knowledge.
create table kn_topics (
    id           text primary key,              -- 'tpc_…'
    workspace_id text not null references workspaces(id) on delete cascade,
    slug         text not null,
    area         text not null,
    title        text not null,
    body         text not null,
    patterns     text not null default '[]',    -- JSON array of file patterns (globs)
    status       text not null check (status in ('en_revision', 'knowledge')),
    stale_marked integer not null default 0 check (stale_marked in (0, 1)),
    created_by   text not null,
    updated_by   text not null,
    created_at   integer not null,
    updated_at   integer not null,
    unique (workspace_id, slug)
);
create index kn_topics_by_area on kn_topics(workspace_id, area, updated_at desc);

create virtual table kn_topics_fts using fts5(
    title, body, area,
    content = 'kn_topics', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
create trigger kn_topics_ai after insert on kn_topics begin
    insert into kn_topics_fts(rowid, title, body, area) values (new.rowid, new.title, new.body, new.area);
end;
create trigger kn_topics_ad after delete on kn_topics begin
    insert into kn_topics_fts(kn_topics_fts, rowid, title, body, area)
    values ('delete', old.rowid, old.title, old.body, old.area);
end;
create trigger kn_topics_au after update of title, body, area on kn_topics begin
    insert into kn_topics_fts(kn_topics_fts, rowid, title, body, area)
    values ('delete', old.rowid, old.title, old.body, old.area);
    insert into kn_topics_fts(rowid, title, body, area) values (new.rowid, new.title, new.body, new.area);
end;

-- Proposals: a note (kind 'note', its topic is en_revision) or a suggested edit to a
-- topic (kind 'edit', `patch` = proposed body or NULL for a question to the reviewer,
-- `diff` = unified diff). `borrador`: previewed by Luna, awaiting the person's tap;
-- `pendiente`: awaiting an owner/admin; then `fusionada` or `rechazada`.
create table kn_proposals (
    id              text primary key,           -- 'prp_…'
    workspace_id    text not null references workspaces(id) on delete cascade,
    kind            text not null check (kind in ('note', 'edit')),
    topic_id        text,                       -- edit: target; note: set once applied
    title           text not null,
    area            text not null,
    summary         text not null,
    body            text,                       -- note: content
    patterns        text not null default '[]',
    patch           text,                       -- edit: proposed body (NULL = question)
    diff            text,
    base_updated_at integer,                    -- edit: topic version the diff is against
    status          text not null check (status in ('borrador', 'pendiente', 'fusionada', 'rechazada')),
    proposed_by     text not null,
    surface         text not null,
    created_at      integer not null,
    resolved_by     text,
    resolved_at     integer
);
create index kn_proposals_by_status on kn_proposals(workspace_id, status, created_at);
