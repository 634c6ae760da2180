//! Bulk loads build the market's query indexes once, at the end, instead of row by
//! row. A large OCDS import into a database it will at least double spends most of its
//! time keeping indexes that only searches read: seven on Adjudicaciones, three on
//! Licitaciones, three on Proveedores, and the three full-text indexes (on SQLite the
//! FTS5 tables the insert triggers feed, on PostgreSQL the GIN indexes over the
//! `tsv` columns) (docs/BENCH.md, «OCDS import at scale»). [`defer`] saves each one's
//! definition as the database holds it (`sqlite_master.sql`, `pg_indexes.indexdef`)
//! in `mk_deferred_ddl` and drops it, in one transaction; [`restore`] recreates them
//! (and rebuilds the FTS5 tables), in one transaction, and empties the table.
//!
//! Crash safety: a killed import leaves the definitions in the table, so nothing is
//! lost; the next import (which then goes on deferred) or the next start of the
//! server (`Engine::open`, on any instance) restores them. The importer's own lookups
//! use the unique keys and the indexes not listed here (`mk_suppliers_rfc`,
//! `…_name_key`, `…_rfc_claimed`, `mk_awards_supplier`), which always stay. On
//! PostgreSQL the instances serving searches meanwhile answer from sequential scans:
//! a bulk load is a first load or a migration, not a daily sync (those are small).

use crate::base::error::EngineResult;
use crate::base::store::{Backend, Conn};

/// Indexes that only searches read.
const INDEXES: [&str; 13] = [
    "mk_awards_buyer",
    "mk_awards_cover",
    "mk_awards_date",
    "mk_awards_state",
    "mk_awards_state_scian",
    "mk_awards_supplier_amount",
    "mk_awards_year",
    "mk_opps_buyer",
    "mk_opps_published",
    "mk_opps_state",
    "mk_suppliers_scian",
    "mk_suppliers_state",
    "mk_suppliers_total",
];

/// The full-text tables kept by triggers, with those triggers.
const FULL_TEXT: [(&str, &[&str]); 3] = [
    ("mk_awards_fts", &["mk_awards_ai", "mk_awards_ad"]),
    (
        "mk_opportunities_fts",
        &["mk_opps_ai", "mk_opps_ad", "mk_opps_au"],
    ),
    (
        "mk_suppliers_fts",
        &["mk_suppliers_ai", "mk_suppliers_ad", "mk_suppliers_au"],
    ),
];

/// PostgreSQL's full-text indexes (GIN over the generated `tsv` columns, which stay
/// and are computed on insert).
const PG_FULL_TEXT: [&str; 3] = ["mk_awards_tsv", "mk_opps_tsv", "mk_suppliers_tsv"];

/// Roughly how many bytes one OCDS release takes in the real publications (a
/// compiled release of the federal administration is 2–3 KB).
const BYTES_PER_RELEASE: u64 = 2_000;

/// Smallest input worth it: below this, rebuilding costs more than it saves.
const MIN_BYTES: u64 = 64 << 20;

/// Whether an input of `bytes` is a bulk load here: at least [`MIN_BYTES`], and about
/// as many releases as the Adjudicaciones already stored, or more.
pub(super) async fn worth_it(conn: &mut Conn, bytes: Option<u64>) -> EngineResult<bool> {
    let Some(bytes) = bytes.filter(|b| *b >= MIN_BYTES) else {
        return Ok(false);
    };
    let awards: i64 = sqlx::query_scalar("select count(*) from mk_awards")
        .fetch_one(&mut *conn)
        .await?;
    Ok(bytes / BYTES_PER_RELEASE >= u64::try_from(awards).unwrap_or(0))
}

/// What a backend sets aside: (kind, name, for a trigger the FTS5 table it feeds).
fn set_aside_on(backend: Backend) -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    let indexes = INDEXES.iter().map(|n| ("index", *n, None));
    match backend {
        Backend::Sqlite => {
            let triggers = FULL_TEXT
                .iter()
                .flat_map(|(fts, names)| names.iter().map(move |n| ("trigger", *n, Some(*fts))));
            indexes.chain(triggers).collect()
        }
        Backend::Postgres => indexes
            .chain(PG_FULL_TEXT.iter().map(|n| ("index", *n, None)))
            .collect(),
    }
}

/// Saves and drops the query indexes and full-text triggers (one transaction).
/// Returns how many it set aside.
pub(super) async fn defer(conn: &mut Conn, backend: Backend) -> EngineResult<usize> {
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let mut set_aside = 0;
    let definition = match backend {
        Backend::Sqlite => "select sql from sqlite_master where type = $1 and name = $2",
        Backend::Postgres => {
            "select indexdef from pg_indexes where $1 = 'index' and indexname = $2 \
             and schemaname = current_schema()"
        }
    };
    for (kind, name, fts) in set_aside_on(backend) {
        let sql: Option<String> = sqlx::query_scalar(definition)
            .bind(kind)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(sql) = sql else { continue };
        sqlx::query("insert into mk_deferred_ddl (name, kind, fts, sql) values ($1, $2, $3, $4) on conflict (name) do nothing")
            .bind(name)
            .bind(kind)
            .bind(fts)
            .bind(&sql)
            .execute(&mut *tx)
            .await?;
        // Names come from the constants above, never from input.
        sqlx::query(&format!("drop {kind} {name}"))
            .execute(&mut *tx)
            .await?;
        set_aside += 1;
    }
    tx.commit().await?;
    Ok(set_aside)
}

/// Recreates whatever [`defer`] set aside and rebuilds the full-text indexes its
/// triggers fed (one transaction). Returns how many it recreated; 0 when nothing was
/// set aside. On PostgreSQL the rows are locked first, so two instances starting at
/// once build each index once (the second finds the table empty).
pub async fn restore(conn: &mut Conn, backend: Backend) -> EngineResult<usize> {
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let rows: Vec<(String, Option<String>, String)> = match backend {
        Backend::Sqlite => {
            sqlx::query_as("select name, fts, sql from mk_deferred_ddl order by kind, name")
                .fetch_all(&mut *tx)
                .await?
        }
        Backend::Postgres => {
            let rows = sqlx::query_as(
                "select name, fts, sql from mk_deferred_ddl order by kind, name for update",
            )
            .fetch_all(&mut *tx)
            .await?;
            if !rows.is_empty() {
                // The index builds sort in memory rather than on disk (server side).
                sqlx::query("set local maintenance_work_mem = '256MB'")
                    .execute(&mut *tx)
                    .await?;
            }
            rows
        }
    };
    let mut rebuild: Vec<&str> = Vec::new();
    for (_, fts, sql) in &rows {
        sqlx::query(sql).execute(&mut *tx).await?;
        if let Some(fts) = fts {
            // Only the known tables: the name is matched against the constants.
            if let Some((known, _)) = FULL_TEXT.iter().find(|(t, _)| t == fts) {
                if !rebuild.contains(known) {
                    rebuild.push(known);
                }
            }
        }
    }
    for fts in rebuild {
        sqlx::query(&format!("insert into {fts}({fts}) values ('rebuild')"))
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("delete from mk_deferred_ddl")
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(rows.len())
}

#[cfg(test)]
#[path = "deferred_tests.rs"]
mod tests;
