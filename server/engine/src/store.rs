//! The database handle. SQLite is the embedded default (one file, zero set-up);
//! migrations are embedded at compile time and applied at start.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use crate::error::{EngineError, EngineResult};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    /// For `open_temp`: removes the database files when the last clone is dropped.
    _temp: Option<std::sync::Arc<TempFiles>>,
}

/// Deletes a temporary database and its WAL/SHM files on drop. Unlinking files that
/// are still open is safe on Unix: their space is freed when the last handle closes.
#[derive(Debug)]
struct TempFiles(std::path::PathBuf);

impl Drop for TempFiles {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Store {
    /// Opens (creating if needed) the database at `url` and applies pending migrations.
    /// `url` is a `sqlite:` URL; the parent directory of a file database is created.
    pub async fn open(url: &str) -> EngineResult<Store> {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            return Err(EngineError::Internal(
                "PostgreSQL is not supported by this build yet; use a sqlite: URL".into(),
            ));
        }
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        if let Some(parent) = Path::new(options.get_filename()).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| EngineError::Internal(format!("cannot create {parent:?}: {e}")))?;
            }
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Store { pool, _temp: None })
    }

    /// A fresh, empty database in a temporary file, for tests and benchmarks.
    pub async fn open_temp() -> EngineResult<Store> {
        let path =
            std::env::temp_dir().join(format!("luna-test-{}.db", uuid::Uuid::new_v4().simple()));
        let guard = std::sync::Arc::new(TempFiles(path.clone()));
        let store = Store::open(&format!("sqlite://{}", path.display())).await?;
        Ok(Store {
            _temp: Some(guard),
            ..store
        })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Begins a write transaction that takes SQLite's write lock up front
    /// (`BEGIN IMMEDIATE`). A deferred transaction that reads first and writes later
    /// can fail with `SQLITE_BUSY` when another writer committed in between; taking
    /// the lock first makes concurrent writers queue on the busy timeout instead.
    pub async fn begin_write(&self) -> EngineResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// True when the database answers a trivial query (used by `/readyz`).
    pub async fn ping(&self) -> bool {
        sqlx::query_scalar::<_, i64>("select 1")
            .fetch_one(&self.pool)
            .await
            .is_ok()
    }
}
