//! Import runs (`mk_import_runs`): one row per import of one input, keyed by the
//! input's sha256. A run's `releases_done` advances in the same transaction as each
//! batch it commits, so a killed import resumes exactly after its last batch; a
//! finished run makes a re-import of the same bytes a no-op.

use sqlx::Row;

use crate::base::error::EngineResult;
use crate::base::store::{Conn, Store};
use crate::market::import::ImportReport;

/// Where a run starts.
pub(super) enum Start {
    /// The same bytes were imported completely at `finished_at` (ms).
    Done { finished_at: i64 },
    /// A run to carry on: skip the first `resume_after` releases.
    Run { id: i64, resume_after: u64 },
}

/// Finds the run of these bytes, or starts one. An interrupted run of the same bytes
/// (status `running`, or `failed` after a broken tail) is resumed; its counts so far
/// are loaded into `report`.
pub(super) async fn start(
    store: &Store,
    sha256: Option<&str>,
    path: &str,
    report: &mut ImportReport,
) -> EngineResult<Start> {
    if let Some(sha) = sha256 {
        let done = sqlx::query(
            "select finished_at from mk_import_runs where sha256 = $1 and status = 'done' order by id desc limit 1",
        )
        .bind(sha)
        .fetch_optional(store.pool())
        .await?;
        if let Some(row) = done {
            return Ok(Start::Done {
                finished_at: row.get::<Option<i64>, _>(0).unwrap_or_default(),
            });
        }
        let open = sqlx::query(
            "select id, releases_done, suppliers, opportunities, awards, updated, unchanged, skipped from mk_import_runs \
             where sha256 = $1 and status in ('running', 'failed') order by id desc limit 1",
        )
        .bind(sha)
        .fetch_optional(store.pool())
        .await?;
        if let Some(row) = open {
            let id: i64 = row.get(0);
            let done = row.get::<i64, _>(1).max(0) as u64;
            let n = |i: usize| row.get::<i64, _>(i).max(0) as u64;
            report.inserted.suppliers = n(2);
            report.inserted.opportunities = n(3);
            report.inserted.awards = n(4);
            report.updated = n(5);
            report.unchanged = n(6);
            report.skipped_total = n(7);
            sqlx::query(
                "update mk_import_runs set status = 'running', source_path = $1 where id = $2",
            )
            .bind(path)
            .bind(id)
            .execute(store.pool())
            .await?;
            return Ok(Start::Run {
                id,
                resume_after: done,
            });
        }
    }
    let row = sqlx::query(
        "insert into mk_import_runs (sha256, source_path, status, started_at) values ($1, $2, 'running', $3) returning id",
    )
    .bind(sha256)
    .bind(path)
    .bind(crate::base::clock::now_ms())
    .fetch_one(store.pool())
    .await?;
    Ok(Start::Run {
        id: row.get(0),
        resume_after: 0,
    })
}

/// Records the progress of run `id` inside the transaction that committed the batch.
pub(super) async fn checkpoint(
    conn: &mut Conn,
    id: i64,
    releases_done: u64,
    publisher: &str,
    report: &ImportReport,
) -> EngineResult<()> {
    let i = &report.inserted;
    sqlx::query(
        "update mk_import_runs set releases_done = $1, source = $2, suppliers = $3, opportunities = $4, awards = $5, updated = $6, unchanged = $7, skipped = $8, publisher = $10 where id = $9",
    )
    .bind(releases_done as i64)
    .bind(&report.source)
    .bind(i.suppliers as i64)
    .bind(i.opportunities as i64)
    .bind(i.awards as i64)
    .bind(report.updated as i64)
    .bind(report.unchanged as i64)
    .bind(report.skipped_total as i64)
    .bind(id)
    .bind(publisher)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Closes run `id` as `done` (or `failed`), with the input's hash and size.
pub(super) async fn finish(
    store: &Store,
    id: i64,
    status: &str,
    sha256: Option<&str>,
    bytes: u64,
) -> EngineResult<()> {
    sqlx::query(
        "update mk_import_runs set status = $1, sha256 = coalesce(sha256, $2), bytes = $3, finished_at = $4 where id = $5",
    )
    .bind(status)
    .bind(sha256)
    .bind(bytes as i64)
    .bind(crate::base::clock::now_ms())
    .bind(id)
    .execute(store.pool())
    .await?;
    Ok(())
}
