-- CRM (CONTRACT §5 "CRM invariants") and the Empresas directory.
-- Invariants:
--   * every row carries `workspace_id`; a reference from another workspace reads as
--     NOT_FOUND (the engine always filters by the caller's workspace);
--   * a collection's `stages` is an ordered JSON array of names; a record's `stage` must
--     be one of them (membership, not transition); an archived collection is read-only;
--   * `crm_records.version` starts at 1 and grows by one on every change (including an
--     undo), so optimistic concurrency can compare it (VERSION_CONFLICT);
--   * `entity_id` (the company key: RFC or directory id) is unique among the live
--     records of a collection, so two saves of the same company never duplicate;
--   * `crm_history` is append-only: who, from which surface, what changed;
--   * an undo token restores the snapshot taken before the write, only while the
--     record still has the version the write left (`version_after`); it is used once;
--   * a proposal (level 1) writes nothing until executed; executing twice is a no-op.

create table crm_collections (
    id            text primary key,
    workspace_id  text not null references workspaces(id) on delete cascade,
    name          text not null,
    stages        text not null,                 -- JSON array of stage names, in order
    primary_field text not null,                 -- key of the field shown as the record's name
    fields        text not null,                 -- JSON array of {key,label,type,locked}
    status        text not null default 'active' check (status in ('active', 'archived')),
    created_at    integer not null,
    updated_at    integer not null
);
create index crm_collections_ws on crm_collections(workspace_id, status, name);

create table crm_records (
    id            text primary key,
    workspace_id  text not null references workspaces(id) on delete cascade,
    collection_id text not null references crm_collections(id) on delete cascade,
    entity_id     text,
    title         text not null,                 -- the primary field's value
    title_folded  text not null default '',      -- title lower-cased without accents (search)
    stage         text not null,
    fields        text not null default '{}',    -- JSON object of typed values
    version       integer not null default 1 check (version >= 1),
    deleted_at    integer,                       -- set when an add is undone
    created_by    text not null,
    created_at    integer not null,
    updated_at    integer not null
);
create index crm_records_coll on crm_records(workspace_id, collection_id, deleted_at, updated_at);
create unique index crm_records_entity on crm_records(collection_id, entity_id)
    where entity_id is not null and deleted_at is null;

create table crm_history (
    id           integer primary key,
    workspace_id text not null,
    record_id    text not null references crm_records(id) on delete cascade,
    version      integer not null,               -- the record's version after the change
    action       text not null,                  -- add | update | stage | undo | activity | save
    actor_id     text not null,
    surface      text not null,                  -- ui | mcp | luna
    changes      text not null,                  -- JSON object {field: {from, to}}
    created_at   integer not null
);
create index crm_history_record on crm_history(record_id, id);

create table crm_activities (
    id           text primary key,
    workspace_id text not null,
    record_id    text not null references crm_records(id) on delete cascade,
    due_at       text not null,                  -- ISO date or date-time
    reason       text not null,
    status       text not null default 'open' check (status in ('open', 'done', 'cancelled')),
    created_by   text not null,
    surface      text not null,
    created_at   integer not null
);
create index crm_activities_record on crm_activities(record_id, due_at);

create table crm_undo (
    token         text not null,
    seq           integer not null,
    workspace_id  text not null,
    kind          text not null check (kind in ('record', 'activity')),
    target_id     text not null,                 -- record id or activity id
    version_after integer,                       -- the record version the write left
    snapshot      text,                          -- JSON record state before; NULL = did not exist
    created_at    integer not null,
    used_at       integer,
    primary key (token, seq)
);

create table crm_claims (
    workspace_id  text not null,
    collection_id text not null,
    claim_token   text not null,
    record_id     text not null,
    created_at    integer not null,
    primary key (workspace_id, collection_id, claim_token)
);

create table crm_proposals (
    id            text primary key,
    workspace_id  text not null,
    kind          text not null check (kind in ('save_companies', 'bulk_update')),
    collection_id text not null,
    payload       text not null,                 -- JSON of what to do
    created_by    text not null,
    surface       text not null,
    created_at    integer not null,
    executed_at   integer,
    result        text                           -- JSON outcome of the execution
);

create table crm_settings (
    key   text primary key,
    value text not null
);

-- The Empresas directory: companies (not Proveedores). A company is linked to a
-- market supplier when the RFC or the folded name matches (`supplier_id`).
create table co_companies (
    id           text primary key,               -- RFC when known, else 'emp-<n>'
    rfc          text,
    name         text not null,
    name_folded  text not null,                  -- lower-case, no accents: for search and name links
    state        text,
    city         text,
    sector       text,
    employees    text,                           -- band: 1-10 | 11-50 | 51-200 | 201-1000 | 1000+
    domain       text,
    supplier_id  text,                           -- mk_suppliers.id when linked
    source       text not null,
    created_at   integer not null
);
create index co_companies_name on co_companies(name_folded);
create index co_companies_rfc on co_companies(rfc);
