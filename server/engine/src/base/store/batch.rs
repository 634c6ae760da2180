//! A write transaction whose statements reach the database in as few round trips as
//! the backend allows ([`WriteBatch`]).
//!
//! sqlx runs each SQLite connection on a thread of its own, so every statement is a
//! hand-off to that thread and back, and on a machine whose CPUs are idle each hand-off
//! costs tens of microseconds more than the statement (docs/BENCH.md «Sixth look»). On
//! SQLite a batch therefore queues the statements whose answer nobody needs before the
//! next one, `BEGIN IMMEDIATE` and `COMMIT` included, and sends them as one
//! multi-statement query: sqlx binds `$n` across the statements of one query, so each
//! queued statement's placeholders are shifted past the ones before it. On PostgreSQL a
//! batch is a transaction of [`Store::begin_write_in`] and each statement runs when it is
//! pushed.
//!
//! The SQLite transaction is begun by a statement, not by sqlx's `Transaction`, so a batch
//! dropped while it is open (an error, a cancelled task) closes its connection instead of
//! returning it to the pool: closing rolls the transaction back.

use std::borrow::Cow;

use futures_util::TryStreamExt;
use sqlx::any::AnyArguments;
use sqlx::pool::PoolConnection;
use sqlx::{Arguments, Either, Executor};

use super::{Backend, Conn, DbRow, Scope, Store, Tx};
use crate::base::error::{EngineError, EngineResult};

/// One statement with its parameters, numbered `$1..$n`: run on its own
/// ([`Statement::run`]) or queued in a [`WriteBatch`].
#[derive(Debug, Clone)]
pub struct Statement {
    sql: Cow<'static, str>,
    params: Vec<Param>,
}

/// A parameter of a [`Statement`].
#[derive(Debug, Clone)]
pub enum Param {
    Text(Option<String>),
    Int(Option<i64>),
}

impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Param::Text(Some(v.to_owned()))
    }
}
impl From<String> for Param {
    fn from(v: String) -> Self {
        Param::Text(Some(v))
    }
}
impl From<Option<&str>> for Param {
    fn from(v: Option<&str>) -> Self {
        Param::Text(v.map(str::to_owned))
    }
}
impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Param::Int(Some(v))
    }
}

/// What one statement answered: its rows and how many rows it changed.
#[derive(Default)]
pub struct Outcome {
    pub rows: Vec<DbRow>,
    pub rows_affected: u64,
}

impl Statement {
    pub fn new(sql: impl Into<Cow<'static, str>>) -> Statement {
        Statement {
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    /// Adds the next parameter (`$1`, then `$2`, …).
    pub fn bind(mut self, param: impl Into<Param>) -> Statement {
        self.params.push(param.into());
        self
    }

    /// Runs the statement on `conn` on its own.
    pub async fn run(&self, conn: &mut Conn) -> EngineResult<Outcome> {
        let mut outcomes = run_all(conn, &self.sql, bind_all([self])?).await?;
        outcomes
            .pop()
            .ok_or_else(|| EngineError::Internal("a statement answered nothing".into()))
    }
}

/// A position in a batch, to read its statement's [`Outcome`] once it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(usize);

impl Ticket {
    /// Its place in the outcomes [`WriteBatch::commit`] returns.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A write transaction in the scope it was begun with (see [`Store::begin_write_in`]).
/// Statements are pushed in order; on SQLite they are sent at the next [`flush`]
/// (or [`WriteBatch::conn`], or [`WriteBatch::commit`]), on PostgreSQL at once.
///
/// [`flush`]: WriteBatch::flush
pub struct WriteBatch {
    inner: Inner,
    outcomes: Vec<Outcome>,
}

enum Inner {
    Sqlite {
        conn: PoolConnection<sqlx::Any>,
        queue: Vec<Statement>,
        /// `BEGIN` was sent and neither `COMMIT` nor `ROLLBACK` succeeded yet.
        open: bool,
    },
    /// `None` once committed.
    Postgres(Option<Tx<'static>>),
}

const BEGIN: &str = "begin immediate";
const COMMIT: &str = "commit";

impl Store {
    /// Begins a [`WriteBatch`] locked to `scope` (see [`Store::begin_write_in`]), or on
    /// PostgreSQL to nothing beyond the rows it writes when `scope` is `None` (a call's
    /// charges on their own: each one claims its key and spends conditionally). On
    /// SQLite nothing is sent yet: `BEGIN IMMEDIATE` goes with the first statements.
    pub async fn begin_batch(&self, scope: Option<Scope<'_>>) -> EngineResult<WriteBatch> {
        let inner = match (self.backend, scope) {
            (Backend::Sqlite, _) => Inner::Sqlite {
                conn: self.pool.acquire().await?,
                queue: vec![Statement::new(BEGIN)],
                open: false,
            },
            (Backend::Postgres, Some(scope)) => {
                Inner::Postgres(Some(self.begin_write_in(scope).await?))
            }
            (Backend::Postgres, None) => Inner::Postgres(Some(self.pool.begin().await?)),
        };
        Ok(WriteBatch {
            inner,
            outcomes: Vec::new(),
        })
    }
}

impl WriteBatch {
    /// Queues `statement` (SQLite) or runs it (PostgreSQL).
    pub async fn push(&mut self, statement: Statement) -> EngineResult<Ticket> {
        match &mut self.inner {
            Inner::Sqlite { queue, .. } => {
                let before = queue.iter().filter(|s| s.sql != BEGIN).count();
                queue.push(statement);
                Ok(Ticket(self.outcomes.len() + before))
            }
            Inner::Postgres(tx) => {
                let outcome = statement.run(open_tx(tx)?).await?;
                self.outcomes.push(outcome);
                Ok(Ticket(self.outcomes.len() - 1))
            }
        }
    }

    /// The connection inside the transaction, every queued statement sent, for work
    /// that reads as it writes (a charge).
    pub async fn conn(&mut self) -> EngineResult<&mut Conn> {
        self.flush().await?;
        Ok(match &mut self.inner {
            Inner::Sqlite { conn, .. } => &mut **conn,
            Inner::Postgres(tx) => &mut **open_tx(tx)?,
        })
    }

    /// Sends the queued statements in one round trip.
    pub async fn flush(&mut self) -> EngineResult<()> {
        let Inner::Sqlite { conn, queue, open } = &mut self.inner else {
            return Ok(());
        };
        if queue.is_empty() {
            return Ok(());
        }
        let statements = std::mem::take(queue);
        let begins = !*open && statements.first().is_some_and(|s| s.sql == BEGIN);
        let commits = statements.last().is_some_and(|s| s.sql == COMMIT);
        let mut sql = String::new();
        let mut shift = 0;
        for s in &statements {
            sql.push_str(&shifted(&s.sql, shift));
            sql.push_str(";\n");
            shift += s.params.len();
        }
        let args = bind_all(&statements)?;
        // `open` follows what SQLite holds: set before the round trip (a failure after
        // BEGIN leaves it open), cleared only when COMMIT answered.
        *open = *open || begins;
        let mut outcomes = run_all(conn, &sql, args).await?;
        if outcomes.len() != statements.len() {
            // Tickets are positions: a statement that answered nothing would shift the
            // answers of the ones after it.
            return Err(EngineError::Internal(format!(
                "a batch of {} statements answered {}",
                statements.len(),
                outcomes.len()
            )));
        }
        if commits {
            *open = false;
        }
        if begins {
            outcomes.remove(0);
        }
        if commits {
            outcomes.pop();
        }
        self.outcomes.extend(outcomes);
        Ok(())
    }

    /// What the statement at `ticket` answered (after it was sent).
    pub fn outcome(&self, ticket: Ticket) -> EngineResult<&Outcome> {
        self.outcomes
            .get(ticket.0)
            .ok_or_else(|| EngineError::Internal("batch statement not sent yet".into()))
    }

    /// Commits: on SQLite `COMMIT` goes with the statements still queued, in one round
    /// trip. Returns the batch's outcomes, by ticket.
    pub async fn commit(mut self) -> EngineResult<Vec<Outcome>> {
        match &mut self.inner {
            Inner::Sqlite { queue, .. } => {
                queue.push(Statement::new(COMMIT));
                self.flush().await?;
            }
            Inner::Postgres(tx) => {
                if let Some(tx) = tx.take() {
                    tx.commit().await?;
                }
            }
        }
        Ok(std::mem::take(&mut self.outcomes))
    }
}

impl Drop for WriteBatch {
    /// A SQLite transaction left open (an error, a cancelled task) must not go back
    /// to the pool: the connection is closed, which rolls it back. (A PostgreSQL
    /// transaction rolls back on drop by itself.)
    fn drop(&mut self) {
        if let Inner::Sqlite {
            conn, open: true, ..
        } = &mut self.inner
        {
            conn.close_on_drop();
        }
    }
}

fn open_tx<'a>(tx: &'a mut Option<Tx<'static>>) -> EngineResult<&'a mut Tx<'static>> {
    tx.as_mut()
        .ok_or_else(|| EngineError::Internal("batch already committed".into()))
}

/// `sql` with each placeholder `$n` outside quoted text renumbered `$(n + by)`.
fn shifted(sql: &str, by: usize) -> Cow<'_, str> {
    if by == 0 || !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(ch) = chars.next() {
        out.push(ch);
        match ch {
            '\'' => quoted = !quoted,
            '$' if !quoted => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                match digits.parse::<usize>() {
                    Ok(n) => out.push_str(&(n + by).to_string()),
                    Err(_) => out.push_str(&digits),
                }
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// The parameters of `statements`, in order, as one argument list.
fn bind_all<'a>(
    statements: impl IntoIterator<Item = &'a Statement>,
) -> EngineResult<AnyArguments<'static>> {
    let mut args = AnyArguments::default();
    for p in statements.into_iter().flat_map(|s| &s.params) {
        let added = match p.clone() {
            Param::Text(v) => args.add(v),
            Param::Int(v) => args.add(v),
        };
        added.map_err(|e| EngineError::Internal(format!("bind: {e}")))?;
    }
    Ok(args)
}

/// Runs `sql` (one statement or several) and splits what it answered by statement:
/// each statement's rows come before its result.
async fn run_all(
    conn: &mut Conn,
    sql: &str,
    args: AnyArguments<'static>,
) -> EngineResult<Vec<Outcome>> {
    let mut stream = conn.fetch_many(sqlx::query_with(sql, args));
    let mut outcomes = Vec::new();
    let mut current = Outcome::default();
    while let Some(item) = stream.try_next().await? {
        match item {
            Either::Right(row) => current.rows.push(row),
            Either::Left(done) => {
                current.rows_affected = done.rows_affected();
                outcomes.push(std::mem::take(&mut current));
            }
        }
    }
    Ok(outcomes)
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
