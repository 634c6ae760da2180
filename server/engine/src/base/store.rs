//! The database handle. SQLite is the embedded default (one file, zero set-up);
//! PostgreSQL serves several app instances. The engine talks to both through sqlx's
//! `Any` driver with one SQL text per query: placeholders are `$1..$n` (SQLite accepts
//! them too) and the few dialect differences (full text, JSON paths, write locks) ask
//! `Store::backend`. Each engine has its own embedded migrations, applied at start.

use std::sync::Arc;

use sqlx::any::{AnyArguments, AnyConnectOptions, AnyPoolOptions};
use sqlx::Arguments;
use sqlx::{AnyPool, ConnectOptions, Connection, Executor};

use crate::base::error::{EngineError, EngineResult};

mod batch;
mod temp;
pub use batch::{Outcome, Param, Statement, Ticket, WriteBatch};
use temp::TempDb;

/// The database type every query runs on.
pub type Db = sqlx::Any;
/// A connection (also what a transaction derefs to).
pub type Conn = sqlx::AnyConnection;
/// A transaction.
pub type Tx<'c> = sqlx::Transaction<'c, Db>;
/// A row.
pub type DbRow = sqlx::any::AnyRow;

static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// The advisory lock key of `Store::startup_lock` on PostgreSQL ("lunb").
const STARTUP_LOCK: i64 = 0x6c75_6e62;

/// What a write transaction changes, named so that PostgreSQL locks only that: the
/// aggregate whose check-then-write invariants the transaction protects. Two write
/// transactions wait for each other only when they name the same scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Everything a workspace owns and checks across rows: its CRM (a company saved
    /// once per collection, record versions, undo), people revealed once, Cerebro
    /// topics and proposals, memberships, sequences, the auto policy, the plan's limit
    /// of concurrent research runs.
    Workspace(&'a str),
    /// One work session: its gap-free event log, its turns (one running at a time),
    /// its decision cards (each resolved once) and its auto-mode counter.
    Session(&'a str),
    /// One research run: its status, checkpoints and steering (a run stopped once, no
    /// event after it stopped).
    Research(&'a str),
}

impl Scope<'_> {
    /// The 64-bit advisory lock key of the scope: the first 8 bytes of the SHA-256 of
    /// `ws:<id>`, `ses:<id>` or `run:<id>`. Stable across instances and releases.
    pub fn lock_key(&self) -> i64 {
        use sha2::{Digest, Sha256};
        let name = match self {
            Scope::Workspace(id) => format!("ws:{id}"),
            Scope::Session(id) => format!("ses:{id}"),
            Scope::Research(id) => format!("run:{id}"),
        };
        let digest = Sha256::digest(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        i64::from_be_bytes(first)
    }
}

/// Which engine a store runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The column that orders a table's rows by insertion, for ties between rows written in
    /// the same millisecond: SQLite's `rowid`; on PostgreSQL the identity column `ord`,
    /// which the tables that need it have (migrations/postgres 0004, 0005).
    pub fn insertion_order(self) -> &'static str {
        match self {
            Backend::Sqlite => "rowid",
            Backend::Postgres => "ord",
        }
    }

    /// The engine a database URL names; anything else is a typed start-up error.
    pub fn of_url(url: &str) -> EngineResult<Backend> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Backend::Postgres)
        } else {
            Err(EngineError::Internal(format!(
                "unsupported database URL {:?}: use sqlite:… or postgres://…",
                redact(url)
            )))
        }
    }
}

#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// The URL it was opened with (another instance, or the event bus, opens the same).
    url: String,
    /// For `open_temp`: removes the temporary database when the last clone is dropped.
    _temp: Option<Arc<TempDb>>,
}

impl Store {
    /// Opens the database at `url` (`sqlite:` — created with its directory if needed —
    /// or `postgres://`) and applies pending migrations.
    pub async fn open(url: &str) -> EngineResult<Store> {
        Self::open_with(url, 8).await
    }

    async fn open_with(url: &str, max_connections: u32) -> EngineResult<Store> {
        sqlx::any::install_default_drivers();
        let backend = Backend::of_url(url)?;
        let url = match backend {
            Backend::Sqlite => sqlite_url(url)?,
            Backend::Postgres => url.to_string(),
        };
        let options = AnyConnectOptions::from_url(&url.parse().map_err(EngineError::internal)?)?
            .log_statements(tracing::log::LevelFilter::Trace);
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            // A SQLite file connection does not go stale: no ping before each use.
            .test_before_acquire(backend == Backend::Postgres)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        for pragma in [
                            "pragma journal_mode = wal",
                            "pragma synchronous = normal",
                            "pragma foreign_keys = on",
                            "pragma busy_timeout = 10000",
                        ] {
                            conn.execute(pragma).await?;
                        }
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        match backend {
            Backend::Sqlite => SQLITE.run(&pool).await?,
            Backend::Postgres => POSTGRES.run(&pool).await?,
        }
        Ok(Store {
            pool,
            backend,
            url,
            _temp: None,
        })
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The database URL this store was opened with (it may hold a password: never
    /// log it without [`redact`]).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Begins a write transaction that runs alone among the write transactions of the
    /// same [`Scope`]: the check-then-write aggregates (a company saved once, a person
    /// revealed once, a decision resolved once, a gap-free session log) rely on it. On
    /// SQLite that is the database's write lock, taken up front (`BEGIN IMMEDIATE`) so
    /// writers queue on the busy timeout instead of failing with `SQLITE_BUSY`: one
    /// writer at a time is SQLite's nature. On PostgreSQL it is a transaction-scoped
    /// advisory lock on the scope's key, so the same holds across every app instance on
    /// the database while other workspaces and sessions write in parallel; reads and
    /// plain single-statement writes never wait for it. Take it first, before reading
    /// what the transaction checks, and name one scope per transaction (two scopes
    /// taken in two orders could deadlock).
    pub async fn begin_write_in(&self, scope: Scope<'_>) -> EngineResult<Tx<'static>> {
        match self.backend {
            Backend::Sqlite => Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?),
            Backend::Postgres => {
                let mut tx = self.pool.begin().await?;
                sqlx::query("select cast(pg_advisory_xact_lock($1) as text)")
                    .bind(scope.lock_key())
                    .execute(&mut *tx)
                    .await?;
                Ok(tx)
            }
        }
    }

    /// Holds off every other instance's start-up work (demo seeding) until
    /// [`StartupLock::release`], so instances started at the same moment on one
    /// database seed one after the other and the later ones find the demo in place.
    /// On PostgreSQL a session-level advisory lock on a connection of its own; on
    /// SQLite an exclusive lock on the file `<database>.startup-lock`.
    pub async fn startup_lock(&self) -> EngineResult<StartupLock> {
        match self.backend {
            Backend::Sqlite => {
                let (path, _) = sqlite_path(&self.url);
                if path == ":memory:" {
                    return Ok(StartupLock::None);
                }
                let path = format!("{path}.startup-lock");
                let file = tokio::task::spawn_blocking(move || {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .truncate(false)
                        .write(true)
                        .open(&path)?;
                    file.lock()?;
                    std::io::Result::Ok(file)
                })
                .await
                .map_err(EngineError::internal)?
                .map_err(|e| EngineError::Internal(format!("startup lock: {e}")))?;
                Ok(StartupLock::File(file))
            }
            Backend::Postgres => {
                let mut conn = self.pool.acquire().await?.detach();
                sqlx::query("select cast(pg_advisory_lock($1) as text)")
                    .bind(STARTUP_LOCK)
                    .execute(&mut conn)
                    .await?;
                Ok(StartupLock::Postgres(conn))
            }
        }
    }

    /// True when the database answers a trivial query (used by `/readyz`).
    pub async fn ping(&self) -> bool {
        sqlx::query_scalar::<_, i64>("select 1")
            .fetch_one(&self.pool)
            .await
            .is_ok()
    }
}

/// The start-up lock of [`Store::startup_lock`]. Closing its connection or file
/// releases it, so a process that dies while holding it never blocks the others.
pub enum StartupLock {
    None,
    File(std::fs::File),
    Postgres(Conn),
}

impl StartupLock {
    /// Lets the next instance's start-up work run.
    pub async fn release(self) -> EngineResult<()> {
        match self {
            StartupLock::None | StartupLock::File(_) => Ok(()),
            StartupLock::Postgres(conn) => Ok(conn.close().await?),
        }
    }
}

/// The engine behind a connection, for the few statements that differ.
pub fn backend_of(conn: &Conn) -> Backend {
    if conn.backend_name().eq_ignore_ascii_case("postgresql") {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

/// `n` comma-separated `?` placeholders, for `in (…)` lists (then [`numbered`]).
pub fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Numbers the `?` placeholders of a dynamically built statement (`$1..$n`, skipping
/// quoted text), the one placeholder syntax both engines accept. Static statements are
/// written numbered; builders that append `?` fragments pass their result through here.
pub fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quoted = false;
    for ch in sql.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                out.push(ch);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(ch),
        }
    }
    out
}

/// A multi-row `insert … values (…), (…)` with numbered placeholders. (sqlx's
/// `QueryBuilder` writes `?` for the `Any` driver, which PostgreSQL rejects.) `head` is
/// the statement up to `values`, `tail` what follows the rows (e.g. `on conflict do
/// nothing`); `row` binds one row's values in column order.
pub fn values<'q, I, F>(head: &str, tail: &str, rows: I, mut row: F) -> (String, AnyArguments<'q>)
where
    I: IntoIterator,
    F: FnMut(&mut RowBinds<'_, 'q>, I::Item),
{
    let mut sql = String::from(head);
    sql.push_str(" values ");
    let mut args = AnyArguments::default();
    let mut n = 0;
    for (i, item) in rows.into_iter().enumerate() {
        sql.push_str(if i == 0 { "(" } else { ", (" });
        let mut binds = RowBinds {
            sql: &mut sql,
            args: &mut args,
            n: &mut n,
            first: true,
        };
        row(&mut binds, item);
        sql.push(')');
    }
    sql.push(' ');
    sql.push_str(tail);
    (sql, args)
}

/// The values of one row of [`values`].
pub struct RowBinds<'b, 'q> {
    sql: &'b mut String,
    args: &'b mut AnyArguments<'q>,
    n: &'b mut usize,
    first: bool,
}

impl<'q> RowBinds<'_, 'q> {
    pub fn push_bind<T>(&mut self, value: T) -> &mut Self
    where
        T: 'q + sqlx::Encode<'q, Db> + sqlx::Type<Db>,
    {
        *self.n += 1;
        if !self.first {
            self.sql.push_str(", ");
        }
        self.first = false;
        self.sql.push('$');
        self.sql.push_str(&self.n.to_string());
        // Encoding into the Any buffer only copies the value; it cannot fail.
        let _ = self.args.add(value);
        self
    }
}

/// The clause every LIKE on user text ends with: `\` escapes the wildcards, the same
/// on SQLite and PostgreSQL (whose strings are standard-conforming).
pub const LIKE_ESCAPE: &str = " escape '\\'";

/// User text as a LIKE pattern that matches it literally: `%`, `_` and the escape
/// character itself are escaped, so «%» finds only a literal percent sign. Use it with
/// `LIKE_ESCAPE` after the `like ?`; never put user text into a pattern unescaped.
pub fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    for ch in text.chars() {
        if matches!(ch, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// A LIKE pattern matching any value that contains `text` literally (`%text%`).
pub fn like_contains(text: &str) -> String {
    format!("%{}%", like_escape(text))
}

/// A LIKE pattern matching any value that starts with `text` literally (`text%`).
pub fn like_prefix(text: &str) -> String {
    format!("{}%", like_escape(text))
}

/// An optional `f64` to bind as text into `cast(? as double precision)`. sqlx 0.8's
/// `Any` driver declares a NULL double to PostgreSQL as `float4`, which poisons the
/// cached statement: the next non-NULL value (8 bytes) is refused as "incorrect binary
/// data format". Rust prints an `f64` in its shortest exact form, so nothing is lost.
pub fn opt_real(v: Option<f64>) -> Option<String> {
    v.filter(|x| x.is_finite()).map(|x| x.to_string())
}

/// The file path and the query of a `sqlite:` URL (`sqlite://data/x.db?mode=rwc` →
/// `("data/x.db", "mode=rwc")`).
fn sqlite_path(url: &str) -> (&str, &str) {
    let rest = url.trim_start_matches("sqlite:").trim_start_matches("//");
    rest.split_once('?').unwrap_or((rest, ""))
}

/// A `sqlite:` URL that creates a missing file, after creating its directory.
fn sqlite_url(url: &str) -> EngineResult<String> {
    let (path, query) = sqlite_path(url);
    if path != ":memory:" {
        if let Some(parent) = std::path::Path::new(path).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| EngineError::Internal(format!("cannot create {parent:?}: {e}")))?;
            }
        }
    }
    // `sqlite:` without `//`: a URL parser would read a relative path's first
    // directory as a host name.
    Ok(if query.contains("mode=") {
        format!("sqlite:{path}?{query}")
    } else if query.is_empty() {
        format!("sqlite:{path}?mode=rwc")
    } else {
        format!("sqlite:{path}?{query}&mode=rwc")
    })
}

/// A URL with its password hidden, for error messages and logs.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_skips_quoted_text() {
        assert_eq!(
            numbered("select '?' from t where a = ? and b like ? escape '\\'"),
            "select '?' from t where a = $1 and b like $2 escape '\\'"
        );
    }

    #[test]
    fn like_patterns_escape_the_wildcards_and_the_escape_character() {
        assert_eq!(like_contains("100%_a\\b"), "%100\\%\\_a\\\\b%");
        assert_eq!(like_prefix("43"), "43%");
        assert_eq!(LIKE_ESCAPE, " escape '\\'");
    }

    #[test]
    fn scopes_have_stable_distinct_lock_keys() {
        // The key is part of the protocol between instances (and releases): it must
        // not change. sha256("ws:ws_1")[..8], big-endian.
        let ws = Scope::Workspace("ws_1").lock_key();
        assert_eq!(ws, Scope::Workspace("ws_1").lock_key());
        assert_ne!(ws, Scope::Session("ws_1").lock_key());
        assert_ne!(ws, Scope::Workspace("ws_2").lock_key());
        assert_ne!(
            Scope::Session("x").lock_key(),
            Scope::Research("x").lock_key()
        );
        assert_ne!(ws, STARTUP_LOCK);
    }

    #[test]
    fn redact_hides_the_password() {
        assert_eq!(
            redact("postgres://luna:secreto@127.0.0.1:5432/luna"),
            "postgres://luna:***@127.0.0.1:5432/luna"
        );
        assert!(Backend::of_url("mysql://x").is_err());
    }
}
