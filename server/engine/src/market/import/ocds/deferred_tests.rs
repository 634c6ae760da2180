//! A bulk import with the search indexes set aside ends exactly like a plain one (same
//! rows, same full-text matches, every index and trigger back), and indexes a killed
//! bulk import left aside come back when Luna next opens the database. Both backends.

use super::{defer, set_aside_on};
use crate::base::store::{Backend, Store};
use crate::market::import::ocds::{import_ocds_from, sample, Input, Options};

/// The query indexes and full-text triggers the database has now.
async fn search_ddl(store: &Store) -> Vec<String> {
    let lookup = match store.backend() {
        Backend::Sqlite => "select name from sqlite_master where name = $1",
        Backend::Postgres => {
            "select indexname::text from pg_indexes where indexname = $1 \
             and schemaname = current_schema()"
        }
    };
    let mut have: Vec<String> = Vec::new();
    for (_, name, _) in set_aside_on(store.backend()) {
        let found: Option<String> = sqlx::query_scalar(lookup)
            .bind(name)
            .fetch_optional(store.pool())
            .await
            .unwrap();
        have.extend(found);
    }
    have
}

/// How many rows of `table` the full-text index finds for the word `term`.
async fn text_matches(store: &Store, table: &str, term: &str) -> i64 {
    let sql = match store.backend() {
        Backend::Sqlite => {
            format!("select count(*) from {table}_fts where {table}_fts match $1")
        }
        Backend::Postgres => {
            format!("select count(*) from {table} where tsv @@ to_tsquery('simple', $1)")
        }
    };
    sqlx::query_scalar(&sql)
        .bind(term)
        .fetch_one(store.pool())
        .await
        .unwrap()
}

/// What searches see: full-text matches per table for a few terms, and row counts.
async fn seen_by_search(store: &Store) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for (table, term) in [
        ("mk_awards", "adquisicion"),
        ("mk_suppliers", "sa"),
        ("mk_opportunities", "adquisicion"),
    ] {
        let n = text_matches(store, table, term).await;
        out.push((format!("{table} {term}"), n));
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
    let bulk = Store::open_temp().await.unwrap();
    let before = search_ddl(&bulk).await;
    let expected = match bulk.backend() {
        Backend::Sqlite => 21,   // 13 indexes, 8 triggers
        Backend::Postgres => 16, // 13 indexes, 3 GIN
    };
    assert_eq!(before.len(), expected, "{before:?}");

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
    let store = Store::open_temp().await.unwrap();
    let before = search_ddl(&store).await;
    // The import set the indexes aside, wrote a supplier, and was killed.
    let mut conn = store.pool().acquire().await.unwrap();
    let set_aside = defer(&mut conn, store.backend()).await.unwrap();
    assert_eq!(set_aside, before.len());
    drop(conn);
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, source, created_at) \
         values ('s-1', 'ABC010101AB1', 1, 'Cartonera del Bajío', 11, 'ocds:test', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    assert!(search_ddl(&store).await.is_empty());

    // The server starts again on the same database (`store` keeps the temporary
    // database alive until the end of the test).
    let engine = crate::Engine::open(store.url(), "a-secret-of-32-bytes-or-more-000")
        .await
        .unwrap();
    assert_eq!(search_ddl(&engine.store).await, before);
    assert_eq!(
        text_matches(&engine.store, "mk_suppliers", "cartonera").await,
        1,
        "the row written while the index was aside is searchable"
    );
}
