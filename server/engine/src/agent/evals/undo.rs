//! Eval 8 as a person would check it: «deshacer» on every level-0 write of a turn
//! (`agent::screen::undo`, the button's own path), newest first, puts the workspace's
//! CRM back to what it was before the turn. The bench goes on from the written state,
//! so the undos run on a copy of the database taken right after the turn
//! (`Store::fork`); the CRM before the turn is compared with the copy's after them.
//! The CRM is compared as a person sees it: live records (collection, company, title,
//! stage, fields) and open follow-ups, not ids, versions or timestamps.

use serde_json::Value;

use crate::accounts::Caller;
use crate::agent::contract::trajectory::Trajectory;
use crate::base::error::EngineResult;
use crate::base::store::Store;
use crate::Engine;

/// What a person sees of a workspace's CRM, in a fixed order.
#[derive(Debug, Clone, PartialEq)]
pub struct CrmState {
    /// (collection, company, title, stage, fields) of each live record.
    records: Vec<(String, Option<String>, String, String, Value)>,
    /// (record title, due, reason) of each open follow-up.
    followups: Vec<(String, String, String)>,
}

impl CrmState {
    pub async fn read(store: &Store, workspace_id: &str) -> EngineResult<CrmState> {
        let rows: Vec<(String, Option<String>, String, String, String)> = sqlx::query_as(
            "select collection_id, entity_id, title, stage, fields from crm_records
             where workspace_id = $1 and deleted_at is null",
        )
        .bind(workspace_id)
        .fetch_all(store.pool())
        .await?;
        let mut records: Vec<_> = rows
            .into_iter()
            .map(|(collection, entity, title, stage, fields)| {
                let fields = serde_json::from_str(&fields).unwrap_or(Value::Null);
                (collection, entity, title, stage, fields)
            })
            .collect();
        records.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
        let mut followups: Vec<(String, String, String)> = sqlx::query_as(
            "select r.title, a.due_at, a.reason from crm_activities a
             join crm_records r on r.id = a.record_id
             where a.workspace_id = $1 and a.status = 'open'",
        )
        .bind(workspace_id)
        .fetch_all(store.pool())
        .await?;
        followups.sort();
        Ok(CrmState { records, followups })
    }

    /// The first difference from `other`, in words, if any.
    fn differs_from(&self, other: &CrmState) -> Option<String> {
        if self.records.len() != other.records.len() {
            return Some(format!(
                "{} records instead of {}",
                self.records.len(),
                other.records.len()
            ));
        }
        if let Some((a, b)) = self
            .records
            .iter()
            .zip(&other.records)
            .find(|(a, b)| a != b)
        {
            return Some(format!(
                "«{}» is in {} with {} instead of {} with {}",
                a.2, a.3, a.4, b.3, b.4
            ));
        }
        (self.followups != other.followups).then(|| {
            format!(
                "{} open follow-ups instead of {}",
                self.followups.len(),
                other.followups.len()
            )
        })
    }
}

/// What undoing one turn's writes showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// The turn wrote nothing with an undo token.
    NoWrite,
    /// The database cannot be copied (PostgreSQL): the undo was not tried.
    NotMeasured,
    /// Every token was applied and the CRM is as before the turn.
    Restored { tokens: usize },
    /// Why it is not.
    NotRestored(String),
}

/// Applies, on a copy of the database, every undo token the turn exposed (newest
/// first) and compares the CRM with `before`, read before the turn.
pub async fn probe(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    t: &Trajectory,
    before: &CrmState,
) -> EngineResult<Probe> {
    let tokens: Vec<(String, String)> = t
        .tool_calls()
        .filter(|c| c.ok && c.level == 0 && c.writes)
        .filter_map(|c| c.undo_token.clone().map(|token| (c.call.clone(), token)))
        .collect();
    if tokens.is_empty() {
        return Ok(Probe::NoWrite);
    }
    let Some(copy) = engine.store.fork().await? else {
        return Ok(Probe::NotMeasured);
    };
    let copy = Engine::from_store(copy);
    for (call, token) in tokens.iter().rev() {
        if let Err(e) = crate::agent::screen::undo(&copy, caller, Some(session_id), token).await {
            return Ok(Probe::NotRestored(format!(
                "«deshacer» on {call} failed: {e}"
            )));
        }
    }
    let after = CrmState::read(&copy.store, &caller.workspace_id).await?;
    Ok(match after.differs_from(before) {
        None => Probe::Restored {
            tokens: tokens.len(),
        },
        Some(difference) => Probe::NotRestored(format!(
            "after «deshacer» on {} write(s), {difference}",
            tokens.len()
        )),
    })
}

/// Adds the probes to eval 8's verdict: a turn whose undos did not restore the CRM
/// fails it, and the detail says how many writes were undone on a copy.
pub fn report(evals: &mut [super::bench::EvalReport], probes: &[(String, Probe)]) {
    use super::bench::Status;
    let Some(eval) = evals
        .iter_mut()
        .find(|e| e.eval == super::checks::Eval::UndoWorks)
    else {
        return;
    };
    let (mut turns, mut tokens, mut unmeasured) = (0, 0, 0);
    for (turn_id, probe) in probes {
        match probe {
            Probe::NoWrite => {}
            Probe::NotMeasured => unmeasured += 1,
            Probe::Restored { tokens: n } => {
                turns += 1;
                tokens += n;
            }
            Probe::NotRestored(why) => eval.failures.push(format!("{turn_id}: {why}")),
        }
    }
    eval.detail =
        format!("«deshacer» on a copy restored the CRM after {tokens} write(s) in {turns} turn(s)");
    if unmeasured > 0 {
        eval.detail.push_str(&format!(
            "; {unmeasured} turn(s) not measured (no copy on PostgreSQL)"
        ));
    }
    if !eval.failures.is_empty() {
        eval.status = Status::Fail;
    }
}
