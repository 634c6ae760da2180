//! Decisions (CONTRACT §7.2, §8): where the person stays in charge. Luna's
//! `DecisionDraft` becomes a typed card ([`cards::prepare`]) stored with a
//! server-only target and an idempotency key the server mints; the card is offered
//! in the session log (`decision.proposed`) and resolved by a person
//! ([`resolve`]) — or, inside the budget the person set, by the auto policy
//! ([`auto`]). Resolving executes once (a guarded status change plus domain calls
//! keyed by the minted key), writes `decision.resolved` and the board patches in one
//! transaction, and audits who, when, what and the receipt. Declining writes nothing
//! but the log; an expired card cannot be accepted.

pub mod auto;
pub mod cards;
mod execute;
#[cfg(test)]
mod proposal_tests;
mod requote;
mod resolve;
mod rows;
mod sequence_review;
#[cfg(test)]
mod tests;

use luna_protocol::board::Board;
use luna_protocol::decision::{DecisionCard, DecisionKind, DecisionOutcome, DecisionResult};
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{BoardPatched, DecisionProposed, DecisionResolved, SessionEvent};
use luna_protocol::patch::PatchOp;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::accounts::{audit_in, Caller};
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::random_token;
use crate::Engine;

pub use auto::Held;
pub use cards::prepare;
pub use requote::requote_on_selection;
use requote::{pending_rows, reoffer, supersede_saves};
pub use resolve::resolve;
use resolve::{finish, resolve_as};
pub use sequence_review::{reissue_sequence_cards, sequence_recipient};

/// What accepting a card executes. Server-only: never sent to a browser or a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Target {
    CrmSave {
        proposal_id: String,
    },
    CrmBulk {
        proposal_id: String,
    },
    /// Luna's note or suggested edit, a `borrador` until the tap.
    KnowledgeDraft {
        proposal_id: String,
    },
    KnowledgeMerge {
        proposal_id: String,
    },
    Reveal {
        quote_id: String,
    },
    /// A research run to start (the proposal `research_start` stored).
    Research {
        proposal_id: String,
    },
    /// The version the card showed and, once the person ticks them, the steps.
    Sequence {
        sequence_id: String,
        version: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steps: Option<Vec<usize>>,
    },
}

impl Target {
    /// The proposal, quote or sequence id the card was prepared from.
    pub fn source_id(&self) -> Option<&str> {
        match self {
            Target::CrmSave { proposal_id }
            | Target::CrmBulk { proposal_id }
            | Target::KnowledgeDraft { proposal_id }
            | Target::KnowledgeMerge { proposal_id } => Some(proposal_id),
            Target::Reveal { quote_id } => Some(quote_id),
            Target::Sequence { sequence_id, .. } => Some(sequence_id),
            Target::Research { proposal_id } => Some(proposal_id),
        }
    }
}

/// A card ready to offer, with its target and what accepting it would spend.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub card: DecisionCard,
    pub target: Target,
    /// Credits accepting it costs (contact credits for reveals).
    pub credits: u32,
    /// People it reveals.
    pub contacts: u32,
}

impl Prepared {
    pub fn new(card: DecisionCard, target: Target) -> Self {
        Prepared {
            card,
            target,
            credits: 0,
            contacts: 0,
        }
    }

    /// Seals the card's fingerprint over what it shows and what accepting it runs:
    /// done when the card is offered or issued again, so every version a person can
    /// see has its own.
    fn seal(&mut self) -> EngineResult<()> {
        use sha2::{Digest, Sha256};
        self.card.fingerprint.clear();
        let shown = serde_json::to_vec(&(&self.card, &self.target))
            .map_err(|e| EngineError::Internal(format!("card fingerprint: {e}")))?;
        self.card.fingerprint = hex::encode(&Sha256::digest(&shown)[..16]);
        Ok(())
    }
}

/// The person's answer and its outcome are wire types (the browser sends and reads
/// them); `Resolved` is the engine's name for the outcome.
pub use luna_protocol::decision::{DecisionResolution as Resolved, Resolution};

/// What offering a card did: left it for the person, or ran it in auto mode.
#[derive(Debug, Clone)]
pub struct Offered {
    pub card: DecisionCard,
    pub auto: Option<Resolved>,
    pub held: Option<Held>,
}

enum Via<'a> {
    Person,
    Auto(&'a auto::Reservation),
}

impl Via<'_> {
    fn as_str(&self) -> &'static str {
        match self {
            Via::Person => "person",
            Via::Auto(_) => "auto",
        }
    }
}

/// Offers a prepared card in the session: stores it and appends `decision.proposed`
/// in one transaction; then, if the session's auto policy covers it, runs it. A save
/// card retires the session's older pending save card first.
pub async fn offer(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    turn_id: Option<&str>,
    mut prepared: Prepared,
) -> EngineResult<Offered> {
    prepared.seal()?;
    if prepared.card.kind == DecisionKind::GuardarEnCrm {
        supersede_saves(engine, caller, session_id).await?;
    }
    let key = format!("decision:{}", random_token(24));
    let mut tx = engine.sessions.begin(session_id).await?;
    rows::insert(
        &mut tx,
        &rows::NewDecision {
            session_id,
            workspace_id: &caller.workspace_id,
            turn_id,
            target: &prepared.target,
            card: &prepared.card,
            idempotency_key: &key,
        },
    )
    .await?;
    let ev = SessionEvent::DecisionProposed(DecisionProposed {
        turn_id: turn_id.map(str::to_owned),
        card: prepared.card.clone(),
    });
    let appended = engine.sessions.append(&mut tx, session_id, &ev).await?;
    tx.commit().await?;
    engine.sessions.publish([appended]);

    let Some(turn_id) = turn_id else {
        return Ok(Offered {
            card: prepared.card,
            auto: None,
            held: Some(Held::Off),
        });
    };
    let view = engine
        .sessions
        .snapshot_at_latest(caller, session_id)
        .await?
        .view;
    let list_saved = view.board.saved.is_some();
    match auto::reserve(engine, caller, session_id, turn_id, &prepared, list_saved).await? {
        Ok(reservation) => {
            let done = resolve_as(
                engine,
                caller,
                session_id,
                &prepared.card.id,
                Click::auto(),
                Via::Auto(&reservation),
            )
            .await;
            // Only an acceptance this resolution wrote spends the reservation; anything
            // else (a failure, a person first, an expiry) gives it back.
            let spent =
                matches!(&done, Ok(r) if !r.already && r.outcome == DecisionOutcome::Accepted);
            if !spent {
                auto::release(engine, &reservation).await?;
            }
            match done {
                Ok(r) if spent => Ok(Offered {
                    card: prepared.card,
                    auto: Some(r),
                    held: None,
                }),
                Ok(_) => Ok(Offered {
                    card: prepared.card,
                    auto: None,
                    held: None,
                }),
                Err(e) => {
                    // The card stays pending for the person; auto never retries alone.
                    tracing::warn!(decision = %prepared.card.id, error = %e, "auto resolution failed");
                    Ok(Offered {
                        card: prepared.card,
                        auto: None,
                        held: None,
                    })
                }
            }
        }
        Err(held) => Ok(Offered {
            card: prepared.card,
            auto: None,
            held: Some(held),
        }),
    }
}

/// The decision `decision_id` of a session the caller may see, or `not_found`.
async fn find_in_session(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
) -> EngineResult<rows::DecisionRow> {
    engine.sessions.get(caller, session_id).await?;
    let mut conn = engine.store.pool().acquire().await?;
    rows::find(
        &mut conn,
        &caller.workspace_id,
        session_id,
        decision_id.trim(),
    )
    .await?
    .ok_or_else(|| EngineError::not_found("esa decisión"))
}

/// A person authorizes the ticked steps of a `revisar_secuencia` card and accepts it.
/// The ticks travel with this request only (never written onto the shared card before
/// it is resolved), so two people authorizing one card at once each run their own
/// ticks in their own name, or lose. `seen` is the card fingerprint the person looked
/// at (see [`resolve`]).
pub async fn authorize_steps(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    steps: &[usize],
    seen: Option<&str>,
) -> EngineResult<Resolved> {
    if steps.is_empty() {
        return Err(no_steps_ticked());
    }
    resolve_as(
        engine,
        caller,
        session_id,
        decision_id,
        Click {
            resolution: Resolution::Accept,
            seen,
            steps: Some(steps),
        },
        Via::Person,
    )
    .await
}

/// One resolution request: the answer, the fingerprint of the card the person saw
/// (`None` only for the engine's own callers: the auto policy, tests), and the ticked
/// steps of a sequence card.
#[derive(Debug, Clone, Copy)]
struct Click<'a> {
    resolution: Resolution,
    seen: Option<&'a str>,
    steps: Option<&'a [usize]>,
}

impl Click<'_> {
    fn auto() -> Self {
        Click {
            resolution: Resolution::Accept,
            seen: None,
            steps: None,
        }
    }
}

fn no_steps_ticked() -> EngineError {
    EngineError::typed(
        ErrorCode::InvalidArgument,
        "Marca al menos un paso de la secuencia para autorizarlo.",
        "Solo se autorizan y envían los pasos con la casilla marcada.",
    )
}
