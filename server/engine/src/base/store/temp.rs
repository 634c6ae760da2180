//! Throwaway databases: a fresh one for tests and benchmarks (`Store::open_temp`: a
//! temporary SQLite file, or a schema of its own on the PostgreSQL server that
//! `LUNA_TEST_DATABASE_URL` names) and a copy of the database as it is now
//! (`Store::fork`), each removed when the last clone of its store is dropped.

use std::path::PathBuf;
use std::sync::Arc;

use sqlx::any::AnyConnectOptions;
use sqlx::{ConnectOptions, Executor};

use super::{Backend, Conn, Store};
use crate::base::error::{EngineError, EngineResult};

impl Store {
    /// A fresh, empty database for tests and benchmarks: a temporary SQLite file, or —
    /// when `LUNA_TEST_DATABASE_URL` names a PostgreSQL server — a schema of its own
    /// there, so the same suite runs on both engines.
    pub async fn open_temp() -> EngineResult<Store> {
        let name = format!(
            "luna_test_{}_{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        );
        match std::env::var("LUNA_TEST_DATABASE_URL") {
            Ok(admin) if Backend::of_url(&admin)? == Backend::Postgres => {
                create_schema(&admin, &name).await?;
                let sep = if admin.contains('?') { '&' } else { '?' };
                let url = format!("{admin}{sep}options=-c%20search_path%3D{name}");
                let store = Store::open_with(&url, 4).await?;
                Ok(Store {
                    _temp: Some(Arc::new(TempDb::PgSchema { admin, name })),
                    ..store
                })
            }
            _ => {
                let path = std::env::temp_dir().join(format!("{name}.db"));
                let guard = Arc::new(TempDb::SqliteFile(path.clone()));
                let store = Store::open(&format!("sqlite://{}", path.display())).await?;
                Ok(Store {
                    _temp: Some(guard),
                    ..store
                })
            }
        }
    }

    /// A copy of this database as it is now, removed when the copy is dropped: on SQLite
    /// `VACUUM INTO` a temporary file; `None` on PostgreSQL. For checks that must write
    /// without changing what they check (the evals' undo probe).
    pub async fn fork(&self) -> EngineResult<Option<Store>> {
        if self.backend != Backend::Sqlite {
            return Ok(None);
        }
        let path = std::env::temp_dir().join(format!(
            "luna_fork_{}_{}.db",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let guard = Arc::new(TempDb::SqliteFile(path.clone()));
        sqlx::query("vacuum into $1")
            .bind(path.display().to_string())
            .execute(&self.pool)
            .await?;
        let store = Store::open(&format!("sqlite://{}", path.display())).await?;
        Ok(Some(Store {
            _temp: Some(guard),
            ..store
        }))
    }
}

async fn admin_connection(admin: &str) -> EngineResult<Conn> {
    sqlx::any::install_default_drivers();
    Ok(
        AnyConnectOptions::from_url(&admin.parse().map_err(EngineError::internal)?)?
            .connect()
            .await?,
    )
}

/// Creates a test schema; the first time in a process, also drops the schemas that
/// test processes no longer running left behind (their pid is in the name).
async fn create_schema(admin: &str, name: &str) -> EngineResult<()> {
    static SWEPT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let mut conn = admin_connection(admin).await?;
    SWEPT.get_or_try_init(|| sweep_schemas(&mut conn)).await?;
    conn.execute(format!("create schema {name}").as_str())
        .await?;
    Ok(())
}

async fn sweep_schemas(conn: &mut Conn) -> EngineResult<()> {
    let names: Vec<String> = sqlx::query_scalar(
        "select cast(nspname as text) from pg_namespace where nspname like 'luna\\_test\\_%'",
    )
    .fetch_all(&mut *conn)
    .await?;
    for name in names {
        let pid = name.split('_').nth(2).and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            conn.execute(format!("drop schema if exists {name} cascade").as_str())
                .await?;
        }
    }
    Ok(())
}

/// What `open_temp` made, removed when the last clone of the store is dropped.
#[derive(Debug)]
pub(super) enum TempDb {
    /// A SQLite file and its WAL/SHM files. Unlinking open files is safe on Unix: the
    /// space is freed when the last handle closes.
    SqliteFile(PathBuf),
    /// A PostgreSQL schema, dropped from a short-lived thread of its own (a `Drop` cannot
    /// await, and the test's runtime may be shutting down).
    PgSchema { admin: String, name: String },
}

impl Drop for TempDb {
    fn drop(&mut self) {
        match self {
            TempDb::SqliteFile(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            TempDb::PgSchema { admin, name } => {
                // Detached: a test's transaction may still hold locks that only its own
                // runtime (blocked in this Drop) can release. Anything a finished
                // process leaves is swept by the next `open_temp` (`sweep_schemas`).
                let (admin, name) = (admin.clone(), name.clone());
                std::thread::spawn(move || {
                    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    else {
                        return;
                    };
                    rt.block_on(async move {
                        let Ok(mut conn) = admin_connection(&admin).await else {
                            return;
                        };
                        let sql = format!("drop schema if exists {name} cascade");
                        let _ = conn.execute(sql.as_str()).await;
                    });
                });
            }
        }
    }
}
