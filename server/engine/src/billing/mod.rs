//! Billing core (CONTRACT §3): per-workspace ledgers of créditos de inteligencia (a
//! monthly allowance) and créditos de contacto (prepaid), receipts for every charge,
//! idempotent and concurrency-safe charging, the hourly read ceiling and plan limits.
//!
//! **Invariant:** a charge is one transaction that first claims its idempotency key
//! (unique per workspace) and then spends with a conditional `update … where
//! allowance - used >= amount`. The same key never charges twice (it returns the
//! original receipt), and two simultaneous charges cannot overdraw a ledger. A charge
//! that is refused (too few credits, an API key over its budget) undoes what it wrote
//! before it returns, so the caller's transaction goes on without it and needs no
//! savepoint; after a database error the caller must drop its transaction.

mod charge;
pub mod counters;
pub mod key_budget;
pub mod plans;

use luna_protocol::account::Plan;
use luna_protocol::error::{ErrorBody, ErrorCode};
use sqlx::Row;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;

pub use counters::Counter;
pub use plans::{limits, PlanLimits, CONTACT_REVEAL_COST, READS_PER_HOUR};

/// The two ledgers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ledger {
    /// Monthly allowance: créditos de inteligencia.
    Intelligence,
    /// Prepaid: créditos de contacto.
    Contact,
}

impl Ledger {
    pub fn as_str(self) -> &'static str {
        match self {
            Ledger::Intelligence => "intelligence",
            Ledger::Contact => "contact",
        }
    }
    pub fn parse(s: &str) -> Option<Ledger> {
        match s {
            "intelligence" => Some(Ledger::Intelligence),
            "contact" => Some(Ledger::Contact),
            _ => None,
        }
    }
    /// Spanish name in the product lexicon.
    pub fn label(self) -> &'static str {
        match self {
            Ledger::Intelligence => "créditos de inteligencia",
            Ledger::Contact => "créditos de contacto",
        }
    }
    /// The ledger period a charge at `now` falls into.
    fn period(self, now: i64) -> String {
        match self {
            Ledger::Intelligence => crate::base::clock::month_period(now),
            Ledger::Contact => "prepaid".into(),
        }
    }
    fn allowance(self, plan: Plan) -> i64 {
        let l = limits(plan);
        match self {
            Ledger::Intelligence => l.monthly_intelligence,
            Ledger::Contact => l.initial_contact_credits,
        }
    }
}

/// What a handler asks the pipeline to charge: the action, the branch that actually
/// executed (e.g. `market_get` → `supplier` or `opportunity`), the amount and ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeSpec {
    pub action: String,
    pub branch: String,
    pub amount: i64,
    pub ledger: Ledger,
}

/// Who and how a charge was made, beyond the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeContext<'a> {
    /// `ui`, `mcp` or `luna`.
    pub surface: &'a str,
    pub idempotency_key: &'a str,
    /// "automático por la política que X fijó a las HH:MM", when auto mode charged.
    pub auto_policy: Option<&'a str>,
    /// The tool call that charged (`call:…`).
    pub call_ref: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub id: String,
    pub workspace_id: String,
    pub user_id: String,
    pub action: String,
    pub branch: String,
    pub amount: i64,
    pub ledger: Ledger,
    pub period: String,
    pub idempotency_key: String,
    pub surface: String,
    pub auto_policy: Option<String>,
    pub call_ref: Option<String>,
    pub created_at: i64,
    /// True when this key had already charged and the original receipt is returned.
    pub replayed: bool,
}

/// A ledger's state for the current period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    pub allowance: i64,
    pub used: i64,
}

impl Balance {
    /// The period's ledger row (`allowance`, `used`), or the plan's allowance with
    /// nothing used when the period has no row yet.
    fn stored_or_plan(row: Option<(i64, i64)>, ledger: Ledger, plan: Plan) -> Balance {
        match row {
            Some((allowance, used)) => Balance { allowance, used },
            None => Balance {
                allowance: ledger.allowance(plan),
                used: 0,
            },
        }
    }

    pub fn left(&self) -> i64 {
        (self.allowance - self.used).max(0)
    }
}

#[derive(Clone, Debug)]
pub struct Billing {
    store: Store,
}

impl Billing {
    pub fn new(store: Store) -> Self {
        Billing { store }
    }

    /// Charges `spec` once per idempotency key. See the module invariant.
    pub async fn charge(
        &self,
        caller: &Caller,
        spec: &ChargeSpec,
        how: &ChargeContext<'_>,
    ) -> EngineResult<Receipt> {
        self.charge_at(caller, spec, how, now_ms()).await
    }

    pub async fn charge_at(
        &self,
        caller: &Caller,
        spec: &ChargeSpec,
        how: &ChargeContext<'_>,
        now: i64,
    ) -> EngineResult<Receipt> {
        let mut tx = self.store.pool().begin().await?;
        match self.charge_in(&mut tx, caller, spec, how, now).await {
            Ok(receipt) if !receipt.replayed => {
                tx.commit().await?;
                Ok(receipt)
            }
            other => {
                tx.rollback().await?;
                other
            }
        }
    }

    pub async fn receipt_by_key(
        &self,
        workspace_id: &str,
        key: &str,
    ) -> EngineResult<Option<Receipt>> {
        let mut conn = self.store.pool().acquire().await?;
        receipt_by_key_in(&mut conn, workspace_id, key).await
    }

    /// Receipts of the caller's workspace, newest first.
    pub async fn receipts(&self, caller: &Caller, limit: i64) -> EngineResult<Vec<Receipt>> {
        // Charges made in one millisecond (a turn's contacts) come newest first too.
        let made = self.store.backend().insertion_order();
        let rows = sqlx::query(&format!(
            "select {RECEIPT_COLS} from receipts
              where workspace_id = $1 order by created_at desc, {made} desc limit $2",
        ))
        .bind(&caller.workspace_id)
        .bind(limit)
        .fetch_all(self.store.pool())
        .await?;
        rows.iter().map(receipt_from_row).collect()
    }

    /// The ledger's balance for the current period (the plan's allowance if unused).
    pub async fn balance(&self, caller: &Caller, ledger: Ledger) -> EngineResult<Balance> {
        self.balance_at(caller, ledger, now_ms()).await
    }

    pub async fn balance_at(
        &self,
        caller: &Caller,
        ledger: Ledger,
        now: i64,
    ) -> EngineResult<Balance> {
        let row: Option<(i64, i64)> = sqlx::query_as(
            "select allowance, used from credit_ledgers where workspace_id = $1 and ledger = $2 and period = $3",
        )
        .bind(&caller.workspace_id)
        .bind(ledger.as_str())
        .bind(ledger.period(now))
        .fetch_optional(self.store.pool())
        .await?;
        Ok(Balance::stored_or_plan(row, ledger, caller.plan))
    }

    /// Adds prepaid créditos de contacto (a purchase or a grant).
    pub async fn grant_contact_credits(&self, caller: &Caller, amount: i64) -> EngineResult<()> {
        let now = now_ms();
        sqlx::query(
            "insert into credit_ledgers (workspace_id, ledger, period, allowance, used, updated_at)
             values ($1, 'contact', 'prepaid', $2, 0, $3)
             on conflict (workspace_id, ledger, period)
             do update set allowance = credit_ledgers.allowance + $4, updated_at = excluded.updated_at",
        )
        .bind(&caller.workspace_id)
        .bind(Ledger::Contact.allowance(caller.plan) + amount)
        .bind(now)
        .bind(amount)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// Counts `n` reads against the hourly ceiling, or `RATE_LIMITED` with `retry_after`.
    pub async fn admit_reads(&self, workspace_id: &str, n: i64, now: i64) -> EngineResult<()> {
        if counters::admit(
            &self.store,
            workspace_id,
            Counter::ReadsHour,
            n,
            READS_PER_HOUR,
            now,
        )
        .await?
        {
            Ok(())
        } else {
            Err(counters::read_ceiling_error(
                READS_PER_HOUR,
                Counter::ReadsHour.retry_after(now),
            ))
        }
    }

    /// Counts `reads` against the hour's read ceiling (refused with its error) and,
    /// in the same statement, reads the crédito de inteligencia balance
    /// ([`counters::admit_and_ledger`]): what a search or a count checks before it runs.
    pub async fn admit_reads_and_balance(
        &self,
        caller: &Caller,
        reads: i64,
        now: i64,
    ) -> EngineResult<Balance> {
        let ledger = Ledger::Intelligence;
        let row = counters::admit_and_ledger(
            &self.store,
            &caller.workspace_id,
            Counter::ReadsHour,
            reads,
            READS_PER_HOUR,
            ledger.as_str(),
            &ledger.period(now),
            now,
        )
        .await?
        .ok_or_else(|| {
            counters::read_ceiling_error(READS_PER_HOUR, Counter::ReadsHour.retry_after(now))
        })?;
        Ok(Balance::stored_or_plan(row, ledger, caller.plan))
    }

    /// Admits a search call: its `reads` against the hour's ceiling, the plan's daily
    /// search quota, and at least one crédito de inteligencia left, refused in that
    /// order (what a refused search already counted stays counted).
    pub async fn admit_search_call(
        &self,
        caller: &Caller,
        reads: i64,
        now: i64,
    ) -> EngineResult<()> {
        let left = self
            .admit_reads_and_balance(caller, reads, now)
            .await?
            .left();
        self.admit_search(caller, now).await?;
        if left < 1 {
            return Err(insufficient(Ledger::Intelligence, 1, left));
        }
        Ok(())
    }

    pub async fn reads_left(&self, workspace_id: &str, now: i64) -> EngineResult<i64> {
        let used = counters::used(&self.store, workspace_id, Counter::ReadsHour, now).await?;
        Ok((READS_PER_HOUR - used).max(0))
    }

    /// Counts one search against the plan's daily quota (Explorer), if it has one.
    pub async fn admit_search(&self, caller: &Caller, now: i64) -> EngineResult<()> {
        let Some(limit) = limits(caller.plan).daily_searches else {
            return Ok(());
        };
        if counters::admit(
            &self.store,
            &caller.workspace_id,
            Counter::SearchesDay,
            1,
            limit,
            now,
        )
        .await?
        {
            Ok(())
        } else {
            Err(counters::daily_search_error(
                limit,
                Counter::SearchesDay.retry_after(now),
            ))
        }
    }

    pub async fn searches_left_today(
        &self,
        caller: &Caller,
        now: i64,
    ) -> EngineResult<Option<i64>> {
        match limits(caller.plan).daily_searches {
            None => Ok(None),
            Some(limit) => {
                let used =
                    counters::used(&self.store, &caller.workspace_id, Counter::SearchesDay, now)
                        .await?;
                Ok(Some((limit - used).max(0)))
            }
        }
    }
}

/// The receipt a workspace's idempotency key charged, read on `conn`.
async fn receipt_by_key_in(
    conn: &mut crate::base::store::Conn,
    workspace_id: &str,
    key: &str,
) -> EngineResult<Option<Receipt>> {
    let row = sqlx::query(&format!(
        "select {RECEIPT_COLS} from receipts where workspace_id = $1 and idempotency_key = $2"
    ))
    .bind(workspace_id)
    .bind(key)
    .fetch_optional(conn)
    .await?;
    row.map(|r| receipt_from_row(&r)).transpose()
}

const RECEIPT_COLS: &str = "id, workspace_id, user_id, action, branch, amount, ledger, period, idempotency_key, surface, auto_policy, call_ref, created_at";

pub fn insufficient(ledger: Ledger, amount: i64, left: i64) -> EngineError {
    EngineError::Typed(ErrorBody::new(
        ErrorCode::InsufficientCredits,
        format!("No te alcanzan los {}: esto cuesta {amount} y te quedan {left}.", ledger.label()),
        match ledger {
            Ledger::Intelligence => "Tus créditos de inteligencia se renuevan el primer día de cada mes; un administrador puede cambiar de plan.".to_owned(),
            Ledger::Contact => "Un administrador puede comprar más créditos de contacto en Ajustes.".to_owned(),
        },
    ))
}

fn receipt_from_row(r: &crate::base::store::DbRow) -> EngineResult<Receipt> {
    let ledger: String = r.get("ledger");
    Ok(Receipt {
        id: r.get("id"),
        workspace_id: r.get("workspace_id"),
        user_id: r.get("user_id"),
        action: r.get("action"),
        branch: r.get("branch"),
        amount: r.get("amount"),
        ledger: Ledger::parse(&ledger).ok_or_else(|| EngineError::Internal("bad ledger".into()))?,
        period: r.get("period"),
        idempotency_key: r.get("idempotency_key"),
        surface: r.get("surface"),
        auto_policy: r.get("auto_policy"),
        call_ref: r.get("call_ref"),
        created_at: r.get("created_at"),
        replayed: false,
    })
}

#[cfg(test)]
mod tests;
