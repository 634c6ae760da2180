//! What a release seen again does to the rows it made: a newer release (by `date`)
//! replaces the figures — amounts, status, dates — and keeps the old ones in
//! `mk_history`; an older or undated one leaves them to the caller, which only fills
//! what is empty.

use sqlx::Row;

use crate::base::error::EngineResult;
use crate::base::store::{opt_real, Conn};
use crate::market::import::ImportReport;

/// The figures a release gives a row; what a newer release replaces.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Figures {
    pub(super) amount: Option<f64>,
    pub(super) currency: String,
    pub(super) status: Option<String>,
    pub(super) date: Option<String>,
    pub(super) closes: Option<String>,
}

impl Figures {
    /// `self` over `old`: what the release states wins, what it omits stays.
    fn over(self, old: &Figures) -> Figures {
        Figures {
            currency: if self.amount.is_some() {
                self.currency
            } else {
                old.currency.clone()
            },
            amount: self.amount.or(old.amount),
            status: self.status.or_else(|| old.status.clone()),
            date: self.date.or_else(|| old.date.clone()),
            closes: self.closes.or_else(|| old.closes.clone()),
        }
    }
}

/// The release and import run a row's figures come from (its provenance).
pub(super) struct Origin {
    pub(super) release_id: Option<String>,
    pub(super) run: i64,
}

/// Whether a release stamped `new` is newer than the row's `old` stamp.
fn newer(new: Option<&str>, old: Option<&str>) -> bool {
    match (new, old) {
        (Some(n), Some(o)) => n > o,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Keeps the figures a newer release replaces.
async fn keep_history(
    conn: &mut Conn,
    kind: &str,
    key: &str,
    old_stamp: Option<&str>,
    old: &Figures,
    by: Option<&str>,
) -> EngineResult<()> {
    sqlx::query(
        "insert into mk_history (kind, row_key, release_date, amount, currency, status, date, closes, replaced_by, replaced_at) values ($1, $2, $3, cast($4 as double precision), $5, $6, $7, $8, $9, $10)",
    )
    .bind(kind)
    .bind(key)
    .bind(old_stamp)
    .bind(opt_real(old.amount))
    .bind(&old.currency)
    .bind(&old.status)
    .bind(&old.date)
    .bind(&old.closes)
    .bind(by)
    .bind(crate::base::clock::now_ms())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// An existing Licitación seen again. A newer release replaces its figures (keeping
/// the old ones in history) and returns `true`; an older or undated one returns
/// `false` and the caller only fills what is empty.
pub(super) async fn update_opportunity(
    conn: &mut Conn,
    ocid: &str,
    stamp: Option<&str>,
    figures: Figures,
    origin: &Origin,
    report: &mut ImportReport,
) -> EngineResult<bool> {
    let row = sqlx::query(
        "select amount, currency, status, closes, release_date from mk_opportunities where ocid = $1",
    )
    .bind(ocid)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(false) };
    let old_stamp: Option<String> = row.get(4);
    if !newer(stamp, old_stamp.as_deref()) {
        return Ok(false);
    }
    let old = Figures {
        amount: row.get(0),
        currency: row.get(1),
        status: row.get(2),
        date: None,
        closes: row.get(3),
    };
    let new = figures.over(&old);
    if new != old {
        keep_history(conn, "opportunity", ocid, old_stamp.as_deref(), &old, stamp).await?;
        report.updated += 1;
    } else {
        report.unchanged += 1;
    }
    sqlx::query(
        "update mk_opportunities set amount = cast($1 as double precision), currency = $2, status = $3, closes = $4, release_date = $5, release_id = $7, import_run = $8 where ocid = $6",
    )
    .bind(opt_real(new.amount))
    .bind(&new.currency)
    .bind(&new.status)
    .bind(&new.closes)
    .bind(stamp)
    .bind(ocid)
    .bind(&origin.release_id)
    .bind(origin.run)
    .execute(&mut *conn)
    .await?;
    Ok(true)
}

/// An existing Adjudicación seen again: a newer release with other figures replaces
/// them (the old ones go to history) and returns `true`.
pub(super) async fn update_award(
    conn: &mut Conn,
    key: &str,
    stamp: Option<&str>,
    figures: Figures,
    origin: &Origin,
) -> EngineResult<bool> {
    let row = sqlx::query(
        "select amount, currency, date, release_date from mk_awards where award_key = $1",
    )
    .bind(key)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(false) };
    let old_stamp: Option<String> = row.get(3);
    if !newer(stamp, old_stamp.as_deref()) {
        return Ok(false);
    }
    let old = Figures {
        amount: row.get(0),
        currency: row.get(1),
        status: None,
        date: row.get(2),
        closes: None,
    };
    let new = figures.over(&old);
    let changed = new != old;
    if changed {
        keep_history(conn, "award", key, old_stamp.as_deref(), &old, stamp).await?;
    }
    sqlx::query(
        "update mk_awards set amount = cast($1 as double precision), currency = $2, date = $3, year = $4, release_date = $5, release_id = $7, import_run = $8 where award_key = $6",
    )
    .bind(opt_real(new.amount))
    .bind(&new.currency)
    .bind(&new.date)
    .bind(new.date.as_deref().and_then(|d| d.get(..4)).and_then(|y| y.parse::<i64>().ok()))
    .bind(stamp)
    .bind(key)
    .bind(&origin.release_id)
    .bind(origin.run)
    .execute(&mut *conn)
    .await?;
    Ok(changed)
}
