//! A write batch commits what it sent, in order and together, answers each statement's
//! rows by ticket, and leaves nothing behind when it fails or is dropped open — on
//! SQLite (one round trip per flush) and on PostgreSQL (one statement at a time).

use super::*;

async fn store() -> Store {
    let store = Store::open_temp().await.unwrap();
    sqlx::query("create table kv (k text primary key, v bigint not null)")
        .execute(store.pool())
        .await
        .unwrap();
    store
}

fn put(k: &str, v: i64) -> Statement {
    Statement::new("insert into kv (k, v) values ($1, $2) returning v + 1")
        .bind(k)
        .bind(v)
}

async fn rows(store: &Store) -> Vec<(String, i64)> {
    sqlx::query_as("select k, v from kv order by k")
        .fetch_all(store.pool())
        .await
        .unwrap()
}

#[test]
fn placeholders_shift_outside_quoted_text() {
    assert_eq!(
        shifted("select $1, '$2', $10 where a = $2", 3),
        "select $4, '$2', $13 where a = $5"
    );
    assert_eq!(shifted("select $1", 0), "select $1");
}

#[tokio::test]
async fn queued_statements_commit_together_and_answer_by_ticket() {
    let store = store().await;
    let mut batch = store.begin_batch(None).await.unwrap();
    let a = batch.push(put("a", 1)).await.unwrap();
    let b = batch.push(put("b", 2)).await.unwrap();
    let c = batch
        .push(Statement::new("update kv set v = v * 10 where k = $1").bind("a"))
        .await
        .unwrap();
    if store.backend() == Backend::Sqlite {
        assert!(rows(&store).await.is_empty(), "nothing runs before a flush");
    }
    let outcomes = batch.commit().await.unwrap();
    let first = |t: Ticket| -> i64 { sqlx::Row::get(&outcomes[t.index()].rows[0], 0) };
    assert_eq!((first(a), first(b)), (2, 3));
    assert_eq!(outcomes[c.index()].rows_affected, 1);
    assert_eq!(rows(&store).await, vec![("a".into(), 10), ("b".into(), 2)]);
}

#[tokio::test]
async fn a_failing_statement_rolls_back_the_batch_and_the_next_write_goes_through() {
    let store = store().await;
    let mut batch = store.begin_batch(None).await.unwrap();
    batch.push(put("a", 1)).await.unwrap();
    let failed = async {
        batch.push(put("a", 2)).await?; // the same key twice
        batch.commit().await
    }
    .await;
    assert!(failed.is_err());
    assert!(rows(&store).await.is_empty());

    // The transaction did not stay open on a pooled connection: a new batch writes.
    let mut batch = store.begin_batch(None).await.unwrap();
    batch.push(put("c", 3)).await.unwrap();
    batch.commit().await.unwrap();
    assert_eq!(rows(&store).await, vec![("c".into(), 3)]);
}

#[tokio::test]
async fn a_batch_dropped_open_rolls_back_and_frees_the_write_lock() {
    let store = store().await;
    let mut batch = store.begin_batch(None).await.unwrap();
    batch.push(put("a", 1)).await.unwrap();
    batch.flush().await.unwrap(); // sent: the transaction is open and holds the lock
    drop(batch);
    let mut batch = store.begin_batch(None).await.unwrap();
    batch.push(put("b", 2)).await.unwrap();
    batch.commit().await.unwrap();
    assert_eq!(rows(&store).await, vec![("b".into(), 2)]);
}
