//! Auto mode with a budget (CONTRACT §8). The person sets a credit cap and a contact cap
//! for one session; inside it, allowed decision classes run without a card and are
//! narrated with their cost. The locks are the server's, not the model's promises:
//! the session's caps (checked and spent in one guarded update), ≤ 10 contacts per
//! turn, contacts only once the list is saved in the CRM, never sending a sequence or
//! merging into Knowledge, auto only on paid plans and only in the session that set it.

use luna_protocol::board::{AutoCounter, Board};
use luna_protocol::decision::DecisionKind;
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{BoardPatched, SessionEvent};
use luna_protocol::patch::PatchOp;
use luna_protocol::session::{AutoPolicy, ModeRequest, SessionMode};
use serde_json::json;

use crate::accounts::{audit_in, Caller};
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Scope;
use crate::billing::limits;
use crate::Engine;

use super::{rows, Prepared};

/// Contacts auto mode may reveal in one turn; the next ones become a card.
pub const MAX_AUTO_CONTACTS_PER_TURN: u32 = 10;
/// Highest caps any workspace may allow for one session (the default ceilings).
pub const MAX_CREDIT_CAP: u32 = 10_000;
pub const MAX_CONTACT_CAP: u32 = 500;

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

/// The workspace's auto policy (defaults when an admin never set one).
pub async fn policy(engine: &Engine, caller: &Caller) -> EngineResult<AutoPolicy> {
    let mut conn = engine.store.pool().acquire().await?;
    rows::workspace_policy(&mut conn, &caller.workspace_id).await
}

/// Sets the workspace's auto policy: whether auto may run, the budget a session starts
/// with, the ceilings a member's budget may not pass, and the classes. Owner/admin
/// only; audited in the same transaction.
pub async fn set_policy(
    engine: &Engine,
    caller: &Caller,
    p: &AutoPolicy,
) -> EngineResult<AutoPolicy> {
    caller.require_admin()?;
    if !limits(caller.plan).auto && p.allowed {
        return Err(EngineError::typed(
            ErrorCode::PlanLimit,
            "Tu plan no incluye el modo automático.",
            "Cambia al plan Founder o Commercial para permitirlo.",
        ));
    }
    if p.max_credit_cap > MAX_CREDIT_CAP || p.max_contact_cap > MAX_CONTACT_CAP {
        return Err(invalid(
            format!(
                "Los topes máximos deben ser de hasta {MAX_CREDIT_CAP} créditos y {MAX_CONTACT_CAP} contactos."
            ),
            "Baja los topes máximos por sesión.",
        ));
    }
    if p.default_credit_cap > p.max_credit_cap || p.default_contact_cap > p.max_contact_cap {
        return Err(invalid(
            format!(
                "El presupuesto inicial no puede pasar del tope máximo ({} créditos y {} contactos).",
                p.max_credit_cap, p.max_contact_cap
            ),
            "Baja el presupuesto inicial o sube el tope máximo.",
        ));
    }
    if let Some(k) = p.classes.iter().find(|k| !k.auto_capable()) {
        return Err(EngineError::Typed(
            luna_protocol::error::ErrorBody::new(
                ErrorCode::InvalidArgument,
                format!("«{}» nunca corre en automático.", k.label()),
                "Quítala de las clases permitidas.",
            )
            .with_allowed_values(auto_capable_names()),
        ));
    }
    let mut classes = p.classes.clone();
    classes.sort_by_key(|k| k.as_str());
    classes.dedup();
    let clean = AutoPolicy {
        classes,
        ..p.clone()
    };
    let mut tx = engine
        .store
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    rows::set_workspace_policy(&mut tx, &caller.workspace_id, &clean, &caller.user_id).await?;
    audit_in(&mut tx, caller, "auto.policy", &json!(clean)).await?;
    tx.commit().await?;
    Ok(clean)
}

fn auto_capable_names() -> Vec<String> {
    DecisionKind::ALL
        .into_iter()
        .filter(|k| k.auto_capable())
        .map(|k| k.as_str().to_owned())
        .collect()
}

fn hhmm(ms: i64) -> String {
    // Mexico City has no DST since 2022: UTC−6.
    let minutes = (ms / 60_000 - 6 * 60).rem_euclid(24 * 60);
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// The receipt text of an auto action.
pub fn receipt_text(counter: &AutoCounter) -> String {
    format!(
        "automático por la política que {} fijó a las {}",
        counter.set_by,
        hhmm(counter.set_at)
    )
}

/// Sets the session's mode. Auto needs a paid plan and a workspace that allows it;
/// caps default to the workspace's. What auto already spent in the session stays spent
/// (the caps bound the session's total), read and kept in the same transaction that
/// stores the new caps; the board's counter is patched there too, so every tab shows it.
pub async fn set_mode(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    req: &ModeRequest,
) -> EngineResult<Option<AutoCounter>> {
    engine.sessions.get(caller, session_id).await?;
    let policy = policy(engine, caller).await?;
    let now = now_ms();
    let counter = match req.mode {
        SessionMode::Preguntar => None,
        SessionMode::Automatico | SessionMode::AjusteFino => {
            if !limits(caller.plan).auto {
                return Err(EngineError::typed(
                    ErrorCode::PlanLimit,
                    "Tu plan no incluye el modo automático.",
                    "Un administrador puede cambiar al plan Founder o Commercial en Ajustes.",
                ));
            }
            if !policy.allowed {
                return Err(EngineError::forbidden(
                    "El modo automático está desactivado en este espacio de trabajo.",
                ));
            }
            let credit_cap = req.credit_cap.unwrap_or(policy.default_credit_cap);
            let contact_cap = req.contact_cap.unwrap_or(policy.default_contact_cap);
            // The workspace's ceilings bound every member's budget (and never exceed
            // the engine's own limits).
            let max_credits = policy.max_credit_cap.min(MAX_CREDIT_CAP);
            let max_contacts = policy.max_contact_cap.min(MAX_CONTACT_CAP);
            if credit_cap > max_credits || contact_cap > max_contacts {
                return Err(invalid(
                    format!(
                        "Tu espacio de trabajo permite un presupuesto de hasta {max_credits} créditos y {max_contacts} contactos por sesión."
                    ),
                    "Elige un presupuesto menor, o pide a un administrador que suba el tope en Ajustes.",
                ));
            }
            let classes: Vec<DecisionKind> = match (req.mode, &req.classes) {
                (SessionMode::AjusteFino, Some(chosen)) => {
                    if let Some(k) = chosen.iter().find(|k| !policy.classes.contains(k)) {
                        return Err(EngineError::Typed(
                            luna_protocol::error::ErrorBody::new(
                                ErrorCode::InvalidArgument,
                                format!("«{}» no puede correr en automático aquí.", k.label()),
                                "Elige solo clases que tu espacio de trabajo permite.",
                            )
                            .with_allowed_values(
                                policy
                                    .classes
                                    .iter()
                                    .map(|k| k.as_str().to_owned())
                                    .collect::<Vec<_>>(),
                            ),
                        ));
                    }
                    chosen.clone()
                }
                _ => policy.classes.clone(),
            };
            Some(AutoCounter {
                credit_cap,
                credits_spent: 0,
                contact_cap,
                contacts_spent: 0,
                classes,
                set_by: caller.display_name.clone(),
                set_at: now,
            })
        }
    };
    let (credit_cap, contact_cap, classes) = counter
        .as_ref()
        .map(|c| (c.credit_cap, c.contact_cap, c.classes.clone()))
        .unwrap_or((
            policy.default_credit_cap,
            policy.default_contact_cap,
            Vec::new(),
        ));
    let mut tx = engine.sessions.begin(session_id).await?;
    let before = rows::session_auto(&mut tx, &caller.workspace_id, session_id).await?;
    let counter = counter.map(|c| AutoCounter {
        credits_spent: before.credits_spent,
        contacts_spent: before.contacts_spent,
        ..c
    });
    let patch = match (&counter, before.mode != SessionMode::Preguntar) {
        (Some(c), _) => vec![PatchOp::add(Board::AUTO, json!(c))],
        (None, true) => vec![PatchOp::remove(Board::AUTO)],
        (None, false) => Vec::new(),
    };
    rows::set_session_auto(
        &mut tx,
        session_id,
        req.mode,
        credit_cap,
        contact_cap,
        &classes,
        counter.as_ref().map(|_| caller.display_name.as_str()),
        now,
    )
    .await?;
    audit_in(
        &mut tx,
        caller,
        "session.mode",
        &json!({"session": session_id, "mode": req.mode.as_str(), "credit_cap": credit_cap,
                "contact_cap": contact_cap, "classes": classes}),
    )
    .await?;
    let mut appended = Vec::new();
    if !patch.is_empty() {
        let ev = SessionEvent::BoardPatched(BoardPatched {
            turn_id: None,
            patch,
        });
        appended.push(engine.sessions.append(&mut tx, session_id, &ev).await?);
    }
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(counter)
}

/// The session's live counter, if auto mode is on.
pub async fn counter(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
) -> EngineResult<Option<AutoCounter>> {
    let mut conn = engine.store.pool().acquire().await?;
    let s = rows::session_auto(&mut conn, &caller.workspace_id, session_id).await?;
    Ok(counter_of(&s))
}

pub(super) fn counter_of(s: &rows::SessionAuto) -> Option<AutoCounter> {
    if s.mode == SessionMode::Preguntar {
        return None;
    }
    Some(AutoCounter {
        credit_cap: s.credit_cap,
        credits_spent: s.credits_spent,
        contact_cap: s.contact_cap,
        contacts_spent: s.contacts_spent,
        classes: s.classes.clone(),
        set_by: s.set_by.clone().unwrap_or_default(),
        set_at: s.set_at.unwrap_or_default(),
    })
}

/// Why auto mode does not run a prepared decision (kept for the narration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    Off,
    NeverInAuto,
    ClassNotChosen,
    OverBudget,
    TurnContactLimit,
    ListNotSaved,
}

/// What an auto resolution holds of the session's budget while it runs: the card's
/// price, spent in the same guarded write that checked it, so two auto resolutions at
/// once can never cross the cap together.
#[derive(Debug, Clone)]
pub struct Reservation {
    pub decision_id: String,
    pub workspace_id: String,
    pub session_id: String,
    /// The session's counter with this reservation already spent.
    pub counter: AutoCounter,
    pub credits: u32,
    pub contacts: u32,
}

/// Whether auto mode runs `prepared` (already offered as a pending card) in this turn,
/// decided and reserved in one write transaction: every lock is read there, the
/// card's price is spent with a guarded update and the card is marked as resolving in
/// auto. `Ok(reservation)` means yes; the caller then executes and either finishes the
/// card (the reservation becomes the spend) or [`release`]s it.
pub async fn reserve(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    turn_id: &str,
    prepared: &Prepared,
    list_saved: bool,
) -> EngineResult<Result<Reservation, Held>> {
    // The plan may have changed since the mode was set; auto needs it now.
    if !limits(caller.plan).auto {
        return Ok(Err(Held::Off));
    }
    let mut tx = engine.sessions.begin(session_id).await?;
    match check_and_spend(&mut tx, caller, session_id, turn_id, prepared, list_saved).await? {
        Ok(counter) => {
            tx.commit().await?;
            Ok(Ok(Reservation {
                decision_id: prepared.card.id.clone(),
                workspace_id: caller.workspace_id.clone(),
                session_id: session_id.to_owned(),
                counter,
                credits: prepared.credits,
                contacts: prepared.contacts,
            }))
        }
        Err(held) => {
            tx.rollback().await?;
            Ok(Err(held))
        }
    }
}

/// Every lock of auto mode, read inside the write transaction `conn`, then the guarded
/// spend and the card's reservation. `Ok(counter)` is the counter after the spend.
async fn check_and_spend(
    conn: &mut crate::base::store::Conn,
    caller: &Caller,
    session_id: &str,
    turn_id: &str,
    prepared: &Prepared,
    list_saved: bool,
) -> EngineResult<Result<AutoCounter, Held>> {
    let kind = prepared.card.kind;
    let s = rows::session_auto(conn, &caller.workspace_id, session_id).await?;
    let Some(counter) = counter_of(&s) else {
        return Ok(Err(Held::Off));
    };
    if !kind.auto_capable() {
        return Ok(Err(Held::NeverInAuto));
    }
    let policy = rows::workspace_policy(conn, &caller.workspace_id).await?;
    if !policy.allowed || !policy.classes.contains(&kind) || !counter.classes.contains(&kind) {
        return Ok(Err(Held::ClassNotChosen));
    }
    if kind == DecisionKind::RevelarContactos {
        if !list_saved {
            return Ok(Err(Held::ListNotSaved));
        }
        let in_turn = rows::auto_contacts_in_turn(conn, session_id, turn_id).await?;
        if in_turn.saturating_add(prepared.contacts) > MAX_AUTO_CONTACTS_PER_TURN {
            return Ok(Err(Held::TurnContactLimit));
        }
    }
    if !rows::spend(conn, session_id, prepared.credits, prepared.contacts).await? {
        return Ok(Err(Held::OverBudget));
    }
    if !rows::reserve(conn, &prepared.card.id, prepared.credits, prepared.contacts).await? {
        // A person resolved it already.
        return Ok(Err(Held::Off));
    }
    Ok(Ok(AutoCounter {
        credits_spent: counter.credits_spent.saturating_add(prepared.credits),
        contacts_spent: counter.contacts_spent.saturating_add(prepared.contacts),
        ..counter
    }))
}

/// Gives a reservation back when the auto resolution did not spend it (it failed, or a
/// person resolved the card first): the session's spend goes down by what was
/// reserved, the card (if still pending) waits for the person, and every tab's
/// counter follows in the same transaction.
pub async fn release(engine: &Engine, r: &Reservation) -> EngineResult<()> {
    let mut tx = engine.sessions.begin(&r.session_id).await?;
    rows::unspend(&mut tx, &r.session_id, r.credits, r.contacts).await?;
    rows::unreserve(&mut tx, &r.decision_id).await?;
    let s = rows::session_auto(&mut tx, &r.workspace_id, &r.session_id).await?;
    let mut appended = Vec::new();
    if let Some(c) = counter_of(&s) {
        let ev = SessionEvent::BoardPatched(BoardPatched {
            turn_id: None,
            patch: vec![PatchOp::add(Board::AUTO, json!(c))],
        });
        appended.push(engine.sessions.append(&mut tx, &r.session_id, &ev).await?);
    }
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(())
}
