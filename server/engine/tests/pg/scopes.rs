//! Write scopes on PostgreSQL: a write transaction locks the aggregate it writes (a
//! workspace, a session), never the whole database.

use std::time::Duration;

use libtest_mimic::Failed;
use luna_engine::accounts::Caller;
use luna_engine::base::surface::Surface;
use luna_engine::crm::collections::{self, NewCollection};
use luna_engine::crm::model::{Actor, FieldDef, FieldType};
use luna_engine::crm::records::{self, NewRecord};
use luna_engine::store::Scope;
use luna_engine::{testkit, Engine};
use luna_protocol::account::{Plan, Role};
use luna_protocol::event::{SessionEvent, UserMessage};
use serde_json::{json, Map};

/// Long enough for a write that does not wait to finish on a loaded machine.
const FINISHES: Duration = Duration::from_secs(10);
/// How long a write that must wait is watched still waiting.
const WAITS: Duration = Duration::from_millis(700);

fn fail(e: impl std::fmt::Display) -> Failed {
    Failed::from(e.to_string())
}

async fn workspace(engine: &Engine) -> Result<(Caller, String), Failed> {
    let caller = testkit::caller(engine, Plan::Commercial, Role::Owner)
        .await
        .map_err(fail)?;
    let collection = collections::create(
        &engine.store,
        &caller.workspace_id,
        NewCollection {
            name: "Prospectos".into(),
            stages: vec!["Nuevo".into()],
            primary_field: "empresa".into(),
            fields: vec![FieldDef {
                key: "empresa".into(),
                label: "Empresa".into(),
                kind: FieldType::Text,
                locked: false,
            }],
        },
    )
    .await
    .map_err(fail)?;
    Ok((caller, collection.id))
}

/// A real check-then-write of the workspace: a CRM record added.
async fn add_record(engine: Engine, caller: Caller, collection: String) -> Result<(), String> {
    let mut fields = Map::new();
    fields.insert("empresa".into(), json!("Cartones del Norte"));
    records::add(
        &engine.store,
        &Actor::new(&caller, Surface::Ui),
        NewRecord {
            collection_id: collection,
            entity_id: None,
            stage: None,
            fields,
        },
        false,
    )
    .await
    .map(|_| ())
    .map_err(|e| e.to_string())
}

fn message(i: usize) -> SessionEvent {
    SessionEvent::UserMessage(UserMessage {
        turn_id: format!("turn_{i}"),
        text: format!("mensaje {i}"),
        steering: false,
    })
}

/// Workspace A holds a write transaction open; workspace B's record is written
/// meanwhile (with one global write lock it waited for A's commit).
pub async fn two_workspaces_write_without_waiting_for_each_other() -> Result<(), Failed> {
    let engine = testkit::engine().await.map_err(fail)?;
    let (a, _) = workspace(&engine).await?;
    let (b, b_collection) = workspace(&engine).await?;
    let held = engine
        .store
        .begin_write_in(Scope::Workspace(&a.workspace_id))
        .await
        .map_err(fail)?;
    let other = tokio::time::timeout(FINISHES, add_record(engine.clone(), b, b_collection)).await;
    held.rollback().await.map_err(fail)?;
    match other {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(fail(e)),
        Err(_) => Err(fail(
            "workspace B's write waited for workspace A's open write transaction",
        )),
    }
}

/// Two writes in one workspace still run one at a time: the second waits for the
/// first's commit, then completes.
pub async fn writes_in_one_workspace_still_take_turns() -> Result<(), Failed> {
    let engine = testkit::engine().await.map_err(fail)?;
    let (a, collection) = workspace(&engine).await?;
    let held = engine
        .store
        .begin_write_in(Scope::Workspace(&a.workspace_id))
        .await
        .map_err(fail)?;
    let mut second = tokio::spawn(add_record(engine.clone(), a.clone(), collection));
    if tokio::time::timeout(WAITS, &mut second).await.is_ok() {
        return Err(fail(
            "a second write in the same workspace did not wait for the open one",
        ));
    }
    held.commit().await.map_err(fail)?;
    match tokio::time::timeout(FINISHES, second).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(fail(e)),
        Ok(Err(e)) => Err(fail(e)),
        Err(_) => Err(fail("the second write never finished after the commit")),
    }
}

/// An open transaction on session 1 holds up appends to session 1 only; session 2 of
/// the same workspace appends meanwhile. The held-up append then gets the next seq.
pub async fn session_appends_wait_only_for_their_own_session() -> Result<(), Failed> {
    let engine = testkit::engine().await.map_err(fail)?;
    let (a, _) = workspace(&engine).await?;
    let one = engine.sessions.create(&a).await.map_err(fail)?.id;
    let two = engine.sessions.create(&a).await.map_err(fail)?.id;
    let mut held = engine.sessions.begin(&one).await.map_err(fail)?;
    let first = engine
        .sessions
        .append(&mut held, &one, &message(0))
        .await
        .map_err(fail)?;
    let other = tokio::time::timeout(FINISHES, engine.sessions.append_one(&two, message(1))).await;
    let same = {
        let (engine, one) = (engine.clone(), one.clone());
        tokio::spawn(async move { engine.sessions.append_one(&one, message(2)).await })
    };
    tokio::time::sleep(WAITS).await;
    let waited = !same.is_finished();
    held.commit().await.map_err(fail)?;
    match other {
        Ok(Ok(e)) if e.seq == 1 => {}
        Ok(Ok(e)) => return Err(fail(format!("session 2 got seq {}", e.seq))),
        Ok(Err(e)) => return Err(fail(e)),
        Err(_) => {
            return Err(fail(
                "session 2's append waited for session 1's open transaction",
            ))
        }
    }
    if !waited {
        return Err(fail("an append to session 1 did not wait for its open one"));
    }
    let next = tokio::time::timeout(FINISHES, same)
        .await
        .map_err(|_| fail("the held-up append never finished"))?
        .map_err(fail)?
        .map_err(fail)?;
    if first.event.seq != 1 || next.seq != 2 {
        return Err(fail(format!(
            "seqs {} then {}, expected 1 then 2",
            first.event.seq, next.seq
        )));
    }
    Ok(())
}
