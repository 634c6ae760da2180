//! One charge (the module invariant of `billing`): claim the idempotency key with a
//! receipt, spend from the period's ledger only if this charge's receipt exists, make
//! the period's ledger row on its first charge, and undo what was written when the
//! charge is refused. [`Billing::charge_in`] runs it on a transaction's connection;
//! [`Billing::charge_batched`] in a turn step's [`WriteBatch`], where on SQLite the
//! claim and the spend travel in one round trip (with the transaction's `BEGIN` when
//! they are its first statements).

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Conn, Statement, WriteBatch};

use super::{
    insufficient, key_budget, receipt_by_key_in, Billing, ChargeContext, ChargeSpec, Receipt,
};

/// A charge about to be written: its receipt's id and the ledger period it spends from.
struct Claim<'a> {
    caller: &'a Caller,
    spec: &'a ChargeSpec,
    how: &'a ChargeContext<'a>,
    id: String,
    period: String,
    now: i64,
}

impl<'a> Claim<'a> {
    fn new(
        caller: &'a Caller,
        spec: &'a ChargeSpec,
        how: &'a ChargeContext<'a>,
        now: i64,
    ) -> EngineResult<Claim<'a>> {
        if spec.amount < 0 {
            return Err(EngineError::Internal("negative charge".into()));
        }
        if how.idempotency_key.trim().is_empty() {
            return Err(EngineError::Internal(
                "charge without idempotency key".into(),
            ));
        }
        Ok(Claim {
            caller,
            spec,
            how,
            id: new_id("rcpt"),
            period: spec.ledger.period(now),
            now,
        })
    }

    /// Claims the key: the receipt, unless the key already has one. It writes first,
    /// so SQLite takes the write lock here and a concurrent charge waits instead of
    /// failing on a lock upgrade.
    fn insert(&self) -> Statement {
        Statement::new(
            "insert into receipts (id, workspace_id, user_id, action, branch, amount, ledger, period,
                                   idempotency_key, surface, auto_policy, call_ref, created_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
             on conflict (workspace_id, idempotency_key) do nothing",
        )
        .bind(self.id.as_str())
        .bind(self.caller.workspace_id.as_str())
        .bind(self.caller.user_id.as_str())
        .bind(self.spec.action.as_str())
        .bind(self.spec.branch.as_str())
        .bind(self.spec.amount)
        .bind(self.spec.ledger.as_str())
        .bind(self.period.as_str())
        .bind(self.how.idempotency_key)
        .bind(self.how.surface)
        .bind(self.how.auto_policy)
        .bind(self.how.call_ref)
        .bind(self.now)
    }

    /// Spends the amount from the period's ledger when it has that much left and this
    /// charge's receipt exists (so a key that had already charged spends nothing);
    /// changes no row when it has not, or when the period has no ledger row yet.
    fn spend(&self) -> Statement {
        Statement::new(
            "update credit_ledgers set used = used + $1, updated_at = $2
              where workspace_id = $3 and ledger = $4 and period = $5 and allowance - used >= $1
                and exists (select 1 from receipts where id = $6)",
        )
        .bind(self.spec.amount)
        .bind(self.now)
        .bind(self.caller.workspace_id.as_str())
        .bind(self.spec.ledger.as_str())
        .bind(self.period.as_str())
        .bind(self.id.as_str())
    }

    /// What follows the claim and the first spend: the original receipt when the key
    /// had one; the period's ledger row made and the spend tried again when it spent
    /// nothing (whether this charge or a concurrent one makes the row: on PostgreSQL
    /// the other may have committed it meanwhile); the refusals, each undoing what
    /// this charge wrote; the API key's budget.
    async fn finish(self, conn: &mut Conn, claimed: bool, spent: bool) -> EngineResult<Receipt> {
        let Claim {
            caller, spec, how, ..
        } = self;
        if !claimed {
            let mut r = receipt_by_key_in(conn, &caller.workspace_id, how.idempotency_key)
                .await?
                .ok_or_else(|| EngineError::Internal("receipt vanished".into()))?;
            r.replayed = true;
            return Ok(r);
        }
        let mut spent = spent;
        if !spent {
            sqlx::query(
                "insert into credit_ledgers (workspace_id, ledger, period, allowance, used, updated_at)
                 values ($1, $2, $3, $4, 0, $5) on conflict (workspace_id, ledger, period) do nothing",
            )
            .bind(&caller.workspace_id)
            .bind(spec.ledger.as_str())
            .bind(&self.period)
            .bind(spec.ledger.allowance(caller.plan))
            .bind(self.now)
            .execute(&mut *conn)
            .await?;
            spent = self.spend().run(conn).await?.rows_affected == 1;
        }
        if !spent {
            let left: i64 = sqlx::query_scalar(
                "select case when allowance > used then allowance - used else 0 end from credit_ledgers
                  where workspace_id = $1 and ledger = $2 and period = $3",
            )
            .bind(&caller.workspace_id)
            .bind(spec.ledger.as_str())
            .bind(&self.period)
            .fetch_optional(&mut *conn)
            .await?
            .unwrap_or(0);
            unclaim(conn, &caller.workspace_id, &self.id).await?;
            return Err(insufficient(spec.ledger, spec.amount, left));
        }
        // An API key's monthly budget, in the same transaction (see `key_budget`).
        if let Err(e) = key_budget::spend_in(conn, caller, spec.amount, self.now).await {
            if let EngineError::Typed(_) = e {
                unspend(conn, caller, spec, &self.period).await?;
                unclaim(conn, &caller.workspace_id, &self.id).await?;
            }
            return Err(e);
        }
        Ok(Receipt {
            id: self.id,
            workspace_id: caller.workspace_id.clone(),
            user_id: caller.user_id.clone(),
            action: spec.action.clone(),
            branch: spec.branch.clone(),
            amount: spec.amount,
            ledger: spec.ledger,
            period: self.period,
            idempotency_key: how.idempotency_key.to_owned(),
            surface: how.surface.to_owned(),
            auto_policy: how.auto_policy.map(str::to_owned),
            call_ref: how.call_ref.map(str::to_owned),
            created_at: self.now,
            replayed: false,
        })
    }
}

impl Billing {
    /// Charges inside the caller's write transaction, so a domain write (e.g. the
    /// people revealed by a reveal) and its charge commit or roll back together. The
    /// caller commits on `Ok` and rolls back on `Err` (dropping the transaction does).
    /// A key that already charged returns the original receipt with `replayed: true`
    /// and spends nothing.
    pub async fn charge_in(
        &self,
        conn: &mut Conn,
        caller: &Caller,
        spec: &ChargeSpec,
        how: &ChargeContext<'_>,
        now: i64,
    ) -> EngineResult<Receipt> {
        let claim = Claim::new(caller, spec, how, now)?;
        let claimed = claim.insert().run(conn).await?.rows_affected == 1;
        let spent = claimed && claim.spend().run(conn).await?.rows_affected == 1;
        claim.finish(conn, claimed, spent).await
    }

    /// [`Billing::charge_in`] in a turn step's `batch`: the claim and the first spend
    /// are sent together (on SQLite in one round trip).
    pub async fn charge_batched(
        &self,
        batch: &mut WriteBatch,
        caller: &Caller,
        spec: &ChargeSpec,
        how: &ChargeContext<'_>,
        now: i64,
    ) -> EngineResult<Receipt> {
        let claim = Claim::new(caller, spec, how, now)?;
        let inserted = batch.push(claim.insert()).await?;
        let spent = batch.push(claim.spend()).await?;
        batch.flush().await?;
        let claimed = batch.outcome(inserted)?.rows_affected == 1;
        let spent = batch.outcome(spent)?.rows_affected == 1;
        claim.finish(batch.conn().await?, claimed, spent).await
    }
}

/// Gives back what a spend took, when a later check of the same charge refuses it.
/// The caller's transaction still holds the ledger row it spent from.
async fn unspend(
    conn: &mut Conn,
    caller: &Caller,
    spec: &ChargeSpec,
    period: &str,
) -> EngineResult<()> {
    sqlx::query(
        "update credit_ledgers set used = used - $1
          where workspace_id = $2 and ledger = $3 and period = $4",
    )
    .bind(spec.amount)
    .bind(&caller.workspace_id)
    .bind(spec.ledger.as_str())
    .bind(period)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Removes the receipt a refused charge claimed its key with, so the key can pay later.
async fn unclaim(conn: &mut Conn, workspace_id: &str, receipt_id: &str) -> EngineResult<()> {
    sqlx::query("delete from receipts where workspace_id = $1 and id = $2")
        .bind(workspace_id)
        .bind(receipt_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
