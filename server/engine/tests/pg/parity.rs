//! Schema parity: after every migration, the SQLite and the PostgreSQL schema have the
//! same tables, columns, nullability, unique keys and indexes (as column lists; names
//! may differ). Every difference must be listed in `EXCEPTIONS` with its reason, and
//! every listed exception must still occur (a fixed drift leaves the list).

use std::collections::{BTreeMap, BTreeSet};

use libtest_mimic::Failed;
use luna_engine::Store;
use sqlx::Row;

/// Differences that are by design, each with why.
const EXCEPTIONS: &[(&str, &str)] = &[
    // Insertion order: SQLite pages by its implicit rowid, PostgreSQL by an identity column.
    ("column crm_records.ord: only on postgres", INSERTION_ORDER),
    ("column kn_proposals.ord: only on postgres", INSERTION_ORDER),
    ("column receipts.ord: only on postgres", INSERTION_ORDER),
    (
        "column work_sessions.ord: only on postgres",
        INSERTION_ORDER,
    ),
    // Full text: SQLite keeps an FTS5 virtual table per searchable table, PostgreSQL a
    // generated tsvector column with a GIN index.
    ("table kn_topics_fts: only on sqlite", FULL_TEXT),
    ("column kn_topics.tsv: only on postgres", FULL_TEXT),
    ("index kn_topics(tsv): only on postgres", FULL_TEXT),
    ("table mk_awards_fts: only on sqlite", FULL_TEXT),
    ("column mk_awards.tsv: only on postgres", FULL_TEXT),
    ("index mk_awards(tsv): only on postgres", FULL_TEXT),
    ("table mk_opportunities_fts: only on sqlite", FULL_TEXT),
    ("column mk_opportunities.tsv: only on postgres", FULL_TEXT),
    ("index mk_opportunities(tsv): only on postgres", FULL_TEXT),
    ("table mk_permits_fts: only on sqlite", FULL_TEXT),
    ("column mk_permits.tsv: only on postgres", FULL_TEXT),
    ("column mk_permits.type_tsv: only on postgres", FULL_TEXT),
    ("index mk_permits(tsv): only on postgres", FULL_TEXT),
    ("table mk_risks_fts: only on sqlite", FULL_TEXT),
    ("column mk_risks.tsv: only on postgres", FULL_TEXT),
    ("index mk_risks(tsv): only on postgres", FULL_TEXT),
    ("table mk_suppliers_fts: only on sqlite", FULL_TEXT),
    ("column mk_suppliers.tsv: only on postgres", FULL_TEXT),
    ("index mk_suppliers(tsv): only on postgres", FULL_TEXT),
    // SQLite's FTS5 index over awards is keyed by a virtual generated column (date order,
    // migration sqlite/0020) that pragma_table_info does not list; only its unique index
    // shows. PostgreSQL orders awards with a plain (date, id) index.
    (
        "unique mk_awards(ord): only on sqlite",
        "FTS5 reads awards in date order by `ord`",
    ),
];

const INSERTION_ORDER: &str = "insertion order: SQLite's rowid, PostgreSQL's identity column";
const FULL_TEXT: &str = "full text: FTS5 virtual table on SQLite, tsvector + GIN on PostgreSQL";

/// One table as both engines are compared: column → NOT NULL, the unique keys and the
/// plain indexes as column lists (a partial index is marked `… where`).
#[derive(Debug, Default)]
struct Table {
    columns: BTreeMap<String, bool>,
    unique: BTreeSet<String>,
    indexes: BTreeSet<String>,
}

type Schema = BTreeMap<String, Table>;

fn fail(e: impl std::fmt::Display) -> Failed {
    Failed::from(e.to_string())
}

fn key(columns: &[String], partial: bool) -> String {
    let mut k = format!("({})", columns.join(", "));
    if partial {
        k.push_str(" where …");
    }
    k
}

async fn sqlite_schema(store: &Store) -> Result<Schema, Failed> {
    let pool = store.pool();
    let rows = sqlx::query(
        "select name, coalesce(sql, '') as sql from sqlite_master
          where type = 'table' and name not like 'sqlite\\_%' escape '\\'
            and name <> '_sqlx_migrations'",
    )
    .fetch_all(pool)
    .await
    .map_err(fail)?;
    let all: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.get::<String, _>("name"), r.get::<String, _>("sql")))
        .collect();
    // FTS5 virtual tables keep their data in shadow tables `<name>_data`, `_idx`,
    // `_content`, `_docsize`, `_config`: internals of the virtual table, not schema.
    let virtual_tables: Vec<&str> = all
        .iter()
        .filter(|(_, sql)| sql.to_ascii_lowercase().starts_with("create virtual table"))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut schema = Schema::new();
    for (name, _) in &all {
        if virtual_tables
            .iter()
            .any(|v| name != v && name.starts_with(&format!("{v}_")))
        {
            continue;
        }
        let mut t = Table::default();
        let mut pk: Vec<(i64, String)> = Vec::new();
        for c in sqlx::query("select name, \"notnull\" as nn, pk from pragma_table_info($1)")
            .bind(name)
            .fetch_all(pool)
            .await
            .map_err(fail)?
        {
            let col: String = c.get("name");
            let position: i64 = c.get("pk");
            // A primary key column is compared as NOT NULL (PostgreSQL makes it so).
            t.columns
                .insert(col.clone(), c.get::<i64, _>("nn") != 0 || position > 0);
            if position > 0 {
                pk.push((position, col));
            }
        }
        if !pk.is_empty() {
            pk.sort();
            let cols: Vec<String> = pk.into_iter().map(|(_, c)| c).collect();
            t.unique.insert(key(&cols, false));
        }
        for i in
            sqlx::query("select name, \"unique\" as uq, origin, partial from pragma_index_list($1)")
                .bind(name)
                .fetch_all(pool)
                .await
                .map_err(fail)?
        {
            let origin: String = i.get("origin");
            if origin == "pk" {
                continue;
            }
            let index: String = i.get("name");
            let cols: Vec<String> = sqlx::query(
                "select coalesce(name, '<expr>') as name from pragma_index_info($1) order by seqno",
            )
            .bind(&index)
            .fetch_all(pool)
            .await
            .map_err(fail)?
            .iter()
            .map(|r| r.get::<String, _>("name"))
            .collect();
            let k = key(&cols, i.get::<i64, _>("partial") != 0);
            if i.get::<i64, _>("uq") != 0 {
                t.unique.insert(k);
            } else {
                t.indexes.insert(k);
            }
        }
        schema.insert(name.clone(), t);
    }
    Ok(schema)
}

async fn postgres_schema(store: &Store) -> Result<Schema, Failed> {
    let pool = store.pool();
    let mut schema = Schema::new();
    for c in sqlx::query(
        "select cast(c.table_name as text) as t, cast(c.column_name as text) as c,
                cast(c.is_nullable as text) as n
           from information_schema.columns c
           join information_schema.tables t
             on t.table_schema = c.table_schema and t.table_name = c.table_name
          where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
            and c.table_name <> '_sqlx_migrations'",
    )
    .fetch_all(pool)
    .await
    .map_err(fail)?
    {
        schema
            .entry(c.get("t"))
            .or_default()
            .columns
            .insert(c.get("c"), c.get::<String, _>("n") == "NO");
    }
    for i in sqlx::query(
        "select cast(t.relname as text) as t,
                cast(case when ix.indisunique then 1 else 0 end as bigint) as uq,
                cast(case when ix.indpred is null then 0 else 1 end as bigint) as partial,
                cast(array_to_string(array(
                    select coalesce(cast(a.attname as text), '<expr>')
                      from unnest(ix.indkey) with ordinality as k(attnum, n)
                      left join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
                     order by k.n), ',') as text) as cols
           from pg_index ix
           join pg_class t on t.oid = ix.indrelid
           join pg_namespace ns on ns.oid = t.relnamespace
          where ns.nspname = current_schema() and t.relname <> '_sqlx_migrations'",
    )
    .fetch_all(pool)
    .await
    .map_err(fail)?
    {
        let cols: Vec<String> = i
            .get::<String, _>("cols")
            .split(',')
            .map(str::to_owned)
            .collect();
        let k = key(&cols, i.get::<i64, _>("partial") != 0);
        let t = schema.entry(i.get("t")).or_default();
        if i.get::<i64, _>("uq") != 0 {
            t.unique.insert(k);
        } else {
            t.indexes.insert(k);
        }
    }
    Ok(schema)
}

fn null(not_null: bool) -> &'static str {
    if not_null {
        "not null"
    } else {
        "null"
    }
}

/// Every difference, one line each, in a stable order.
fn differences(sqlite: &Schema, postgres: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = sqlite.keys().chain(postgres.keys()).collect();
    for name in names {
        let (s, p) = match (sqlite.get(name), postgres.get(name)) {
            (Some(s), Some(p)) => (s, p),
            (Some(_), None) => {
                out.push(format!("table {name}: only on sqlite"));
                continue;
            }
            (None, _) => {
                out.push(format!("table {name}: only on postgres"));
                continue;
            }
        };
        let columns: BTreeSet<&String> = s.columns.keys().chain(p.columns.keys()).collect();
        for c in columns {
            match (s.columns.get(c), p.columns.get(c)) {
                (Some(a), Some(b)) if a != b => out.push(format!(
                    "column {name}.{c}: {} on sqlite, {} on postgres",
                    null(*a),
                    null(*b)
                )),
                (Some(_), None) => out.push(format!("column {name}.{c}: only on sqlite")),
                (None, Some(_)) => out.push(format!("column {name}.{c}: only on postgres")),
                _ => {}
            }
        }
        for (what, a, b) in [
            ("unique", &s.unique, &p.unique),
            ("index", &s.indexes, &p.indexes),
        ] {
            for k in a.difference(b) {
                out.push(format!("{what} {name}{k}: only on sqlite"));
            }
            for k in b.difference(a) {
                out.push(format!("{what} {name}{k}: only on postgres"));
            }
        }
    }
    out
}

pub async fn sqlite_and_postgres_schemas_agree() -> Result<(), Failed> {
    let postgres = Store::open_temp().await.map_err(fail)?;
    let path = std::env::temp_dir().join(format!("luna_parity_{}.db", uuid::Uuid::new_v4()));
    let sqlite = Store::open(&format!("sqlite://{}", path.display()))
        .await
        .map_err(fail)?;
    let found = differences(
        &sqlite_schema(&sqlite).await?,
        &postgres_schema(&postgres).await?,
    );
    sqlite.pool().close().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let excused: BTreeSet<&str> = EXCEPTIONS.iter().map(|(d, _)| *d).collect();
    let unexplained: Vec<&String> = found
        .iter()
        .filter(|d| !excused.contains(d.as_str()))
        .collect();
    let stale: Vec<&&str> = excused
        .iter()
        .filter(|e| !found.iter().any(|d| d == **e))
        .collect();
    if unexplained.is_empty() && stale.is_empty() {
        return Ok(());
    }
    let mut msg = String::new();
    for d in &unexplained {
        msg.push_str(&format!("drift: {d}\n"));
    }
    for e in &stale {
        msg.push_str(&format!("listed exception no longer occurs: {e}\n"));
    }
    Err(Failed::from(msg))
}
