//! An API key's optional credit budget per calendar month (UTC, like the monthly
//! intelligence ledger). Credits of either ledger count against it.
//!
//! **Invariant:** the key's spend moves in the same transaction as the charge it comes
//! from, through a conditional `update … where spent + amount <= budget`; a charge that
//! would pass the budget fails and rolls back with it, so nothing is charged. Before a
//! metered call runs, `admit` refuses it when even its smallest charge would not fit.

use luna_protocol::error::{ErrorBody, ErrorCode};

use crate::accounts::Caller;
use crate::base::clock::month_period;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Conn, Store};

/// The key's budget, when the caller is a key that has one.
fn budget_of(caller: &Caller) -> Option<(&str, i64)> {
    let key = caller.api_key.as_ref()?;
    Some((key.id.as_str(), key.credit_budget?))
}

pub fn over_budget(budget: i64, amount: i64, left: i64) -> EngineError {
    EngineError::Typed(ErrorBody::new(
        ErrorCode::InsufficientCredits,
        format!(
            "Esta llave de API llegó a su tope de {budget} créditos al mes: esto cuesta {amount} y le quedan {left}."
        ),
        "El tope de la llave se renueva el primer día de cada mes; un administrador puede crear en Ajustes una llave con un tope mayor.",
    ))
}

async fn spent(conn: &mut Conn, key_id: &str, now: i64) -> EngineResult<i64> {
    Ok(
        sqlx::query_scalar("select spent from api_key_spend where key_id = $1 and period = $2")
            .bind(key_id)
            .bind(month_period(now))
            .fetch_optional(&mut *conn)
            .await?
            .unwrap_or(0),
    )
}

/// Refuses a call of `amount` credits the key's budget cannot cover (no write).
pub async fn admit(store: &Store, caller: &Caller, amount: i64, now: i64) -> EngineResult<()> {
    let Some((key_id, budget)) = budget_of(caller) else {
        return Ok(());
    };
    let mut conn = store.pool().acquire().await?;
    let spent = spent(&mut conn, key_id, now).await?;
    if spent + amount > budget {
        return Err(over_budget(budget, amount, (budget - spent).max(0)));
    }
    Ok(())
}

/// Counts `amount` against the key's budget inside the charge's transaction, or fails
/// (and the caller rolls the charge back). Callers that are not keys spend nothing here.
pub async fn spend_in(conn: &mut Conn, caller: &Caller, amount: i64, now: i64) -> EngineResult<()> {
    let Some(key) = caller.api_key.as_ref() else {
        return Ok(());
    };
    let month = month_period(now);
    sqlx::query(
        "insert into api_key_spend (key_id, period, spent) values ($1, $2, 0)
         on conflict (key_id, period) do nothing",
    )
    .bind(&key.id)
    .bind(&month)
    .execute(&mut *conn)
    .await?;
    let budget = key.credit_budget;
    let done = sqlx::query(
        "update api_key_spend set spent = spent + $1
          where key_id = $2 and period = $3 and ($4 = 1 or spent + $5 <= $6)",
    )
    .bind(amount)
    .bind(&key.id)
    .bind(&month)
    .bind(i64::from(budget.is_none()))
    .bind(amount)
    .bind(budget.unwrap_or(0))
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        let budget = budget.unwrap_or(0);
        let left = (budget - spent(conn, &key.id, now).await?).max(0);
        return Err(over_budget(budget, amount, left));
    }
    Ok(())
}
