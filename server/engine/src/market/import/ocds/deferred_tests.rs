//! A bulk import with the search indexes set aside ends exactly like a plain one (same
//! rows, same full-text matches, every index and trigger back), and indexes a killed
//! bulk import left aside come back when Luna next opens the database.

use super::{defer, FULL_TEXT, INDEXES};
use crate::base::store::{Backend, Store};
use crate::market::import::ocds::{import_ocds_from, sample, Input, Options};

/// The query indexes and full-text triggers the database has now.
async fn search_ddl(store: &Store) -> Vec<String> {
    let names: Vec<&str> = INDEXES
        .iter()
        .copied()
        .chain(FULL_TEXT.iter().flat_map(|(_, t)| t.iter().copied()))
        .collect();
    let mut have: Vec<String> = Vec::new();
    for name in names {
        let found: Option<String> =
            sqlx::query_scalar("select name from sqlite_master where name = $1")
                .bind(name)
                .fetch_optional(store.pool())
                .await
                .unwrap();
        have.extend(found);
    }
    have
}

/// What searches see: full-text matches per table for a few terms, and row counts.
async fn seen_by_search(store: &Store) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for (fts, term) in [
        ("mk_awards_fts", "st:e14"),
        ("mk_awards_fts", "adquisicion"),
        ("mk_suppliers_fts", "st:e9"),
        ("mk_suppliers_fts", "sa"),
        ("mk_opportunities_fts", "adquisicion"),
    ] {
        let n: i64 =
            sqlx::query_scalar(&format!("select count(*) from {fts} where {fts} match $1"))
                .bind(term)
                .fetch_one(store.pool())
                .await
                .unwrap();
        out.push((format!("{fts} {term}"), n));
    }
    for table in ["mk_awards", "mk_suppliers", "mk_opportunities"] {
        let n: i64 = sqlx::query_scalar(&format!("select count(*) from {table}"))
            .fetch_one(store.pool())
            .await
            .unwrap();
        out.push((table.to_owned(), n));
    }
    out
}

#[tokio::test]
async fn a_bulk_import_ends_with_the_rows_matches_and_indexes_of_a_plain_one() {
    let mut bytes = Vec::new();
    sample::write_record_package(&mut bytes, 400, 11).unwrap();
    let plain = Store::open_temp().await.unwrap();
    if plain.backend() != Backend::Sqlite {
        return; // PostgreSQL keeps its indexes during an import (BENCH.md).
    }
    let bulk = Store::open_temp().await.unwrap();
    let before = search_ddl(&bulk).await;
    assert_eq!(before.len(), 21, "{before:?}");

    import_ocds_from(&plain, Input::Bytes(bytes.clone()), Options::default())
        .await
        .unwrap();
    let r = import_ocds_from(
        &bulk,
        Input::Bytes(bytes),
        Options {
            defer_indexes: Some(true),
            ..Options::default()
        },
    )
    .await
    .unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("índices de búsqueda")),
        "{:?}",
        r.notes
    );
    assert_eq!(
        search_ddl(&bulk).await,
        before,
        "every index and trigger is back"
    );
    let left: i64 = sqlx::query_scalar("select count(*) from mk_deferred_ddl")
        .fetch_one(bulk.pool())
        .await
        .unwrap();
    assert_eq!(left, 0);
    let seen = seen_by_search(&bulk).await;
    assert!(seen.iter().all(|(_, n)| *n > 0), "{seen:?}");
    assert_eq!(seen, seen_by_search(&plain).await);
}

#[tokio::test]
async fn indexes_a_killed_bulk_import_left_aside_come_back_when_luna_opens_the_database() {
    let dir = std::env::temp_dir().join(format!("luna-deferred-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("luna.db").display());
    let store = Store::open(&url).await.unwrap();
    let before = search_ddl(&store).await;
    // The import set the indexes aside, wrote a supplier, and was killed.
    let mut conn = store.pool().acquire().await.unwrap();
    assert_eq!(defer(&mut conn).await.unwrap(), 21);
    drop(conn);
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, source, created_at) \
         values ('s-1', 'ABC010101AB1', 1, 'Cartonera del Bajío', 11, 'ocds:test', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    assert!(search_ddl(&store).await.is_empty());
    store.pool().close().await;

    let engine = crate::Engine::open(&url, "a-secret-of-32-bytes-or-more-000")
        .await
        .unwrap();
    assert_eq!(search_ddl(&engine.store).await, before);
    let found: i64 = sqlx::query_scalar(
        "select count(*) from mk_suppliers_fts where mk_suppliers_fts match 'cartonera'",
    )
    .fetch_one(engine.store.pool())
    .await
    .unwrap();
    assert_eq!(
        found, 1,
        "the row written while the index was aside is searchable"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
