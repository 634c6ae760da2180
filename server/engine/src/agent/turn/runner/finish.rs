//! How a turn ends: the model's final answer checked by the question governor and the
//! narration resolver with one repair ([`Turn::answer`]); then the card prepared from
//! a draft, the narration, the plan kept or dropped, the card offered and the turn
//! closed ([`Turn::finish`]); or the turn refused by the plan preflight or the model
//! gates ([`refuse`]).

use luna_protocol::event::{NarrationDelta, SessionEvent, TurnFinished};

use crate::agent::decisions;
use crate::base::error::EngineResult;
use crate::Engine;

use super::super::memory;
use super::super::plan;
use super::super::steering::Inbox;
use super::evidence::intent_kind;
use super::{Turn, TurnOutcome};
use crate::agent::contract::gateway::{ModelGateway, ModelInput};
use crate::agent::contract::intent::{
    check_intent, CierreVariante, Falta, FaltaTipo, TurnIntent, TurnOutput,
};
use crate::agent::contract::narration::{self, ResolvedNarration};
use crate::agent::contract::trajectory::{attempts_of, Recorder, Step};

impl Turn<'_> {
    /// Checks the model's final answer. `Some` ends the loop (accepted, or trimmed
    /// after a failed repair); `None` sends it back once for repair.
    pub(super) async fn answer(
        &mut self,
        TurnOutput { intent, narracion }: TurnOutput,
    ) -> EngineResult<Option<(TurnIntent, ResolvedNarration, bool)>> {
        let ids: Vec<String> = self.proposals.iter().map(|(id, _)| id.clone()).collect();
        let checked = check_intent(&intent, &self.ledger, &ids);
        let resolved = narration::resolve(&narracion, &self.known);
        let mut problems = Vec::new();
        if let Err(p) = &checked {
            problems.push(format!("{p:?}"));
        }
        if let Err(ps) = &resolved {
            problems.extend(ps.iter().map(|p| format!("{p:?}")));
        }
        self.recorder
            .push(Step::ModelAnswer {
                intent: intent.clone(),
                narracion: narracion.clone(),
                accepted: problems.is_empty(),
                problems: problems.clone(),
            })
            .await?;
        Ok(match (checked, resolved) {
            (Ok(()), Ok(r)) => Some((intent, r, false)),
            (_, _) if !self.repaired => {
                self.repaired = true;
                self.input.repair = Some(problems.join("; "));
                None
            }
            (_, _) => {
                let mut trimmed = narration::trim_to_anchored(&narracion, &self.known);
                // A question the governor refused twice must not reach the person in
                // prose either.
                if problems.iter().any(|p| p.starts_with("AsksKnownField")) {
                    trimmed = ResolvedNarration {
                        text: "Sigo con lo que ya me dijiste; si quieres cambiar algún criterio, dímelo.".to_owned(),
                        anchors: Vec::new(),
                    };
                }
                Some((TurnIntent::Responder {}, trimmed, true))
            }
        })
    }

    /// Ends the turn with `answered` (or, without one, a partial `cierre` saying why
    /// the loop `stopped`).
    pub(super) async fn finish(
        mut self,
        answered: Option<(TurnIntent, ResolvedNarration, bool)>,
        stopped: &str,
    ) -> EngineResult<TurnOutcome> {
        let (engine, caller, session_id, turn_id) =
            (self.engine, self.caller, self.session_id, self.turn_id);
        // What the tools were asked for fills the fields nobody said; the next turn
        // starts from this ledger.
        memory::infer_from_calls(&mut self.ledger, &self.input.transcript, self.turn_number);
        self.recorder.set_facts(&self.ledger).await?;

        let (mut intent, mut narration, trimmed) = answered.unwrap_or_else(|| {
            (
                TurnIntent::Cierre {
                    variante: CierreVariante::Parcial,
                    salidas: Vec::new(),
                },
                ResolvedNarration {
                    text: stopped.to_owned(),
                    anchors: Vec::new(),
                },
                false,
            )
        });

        // The model's draft becomes a card only through the code that looks up what it
        // points at; a draft that cannot be prepared ends the turn in `limite`.
        let mut prepared = None;
        if let TurnIntent::ProponerDecision { decision } = &intent {
            let text = serde_json::to_string(decision).unwrap_or_default();
            let source = self
                .proposals
                .iter()
                .find(|(id, _)| text.contains(id.as_str()))
                .map(|(_, env)| env);
            match decisions::prepare(engine, caller, decision, source).await {
                Ok(p) => prepared = Some(p),
                Err(e) => {
                    let detalle = match &e {
                        crate::EngineError::Typed(body) => body.message.clone(),
                        other => {
                            tracing::warn!(error = %other, "decision card could not be prepared");
                            "No pude preparar la tarjeta de decisión.".to_owned()
                        }
                    };
                    narration = ResolvedNarration {
                        text: format!("No pude preparar esa decisión: {detalle}"),
                        anchors: Vec::new(),
                    };
                    intent = TurnIntent::Limite {
                        falta: Falta {
                            tipo: FaltaTipo::Operacion,
                            detalle,
                        },
                    };
                }
            }
        }

        if !narration.text.is_empty() {
            // The narration event and its trajectory step commit together.
            let delta = SessionEvent::NarrationDelta(NarrationDelta {
                turn_id: turn_id.to_owned(),
                text: narration.text.clone(),
                anchors: narration.wire_anchors(),
            });
            let step = Step::Narration {
                text: narration.text.clone(),
                anchors: narration.anchors.clone(),
            };
            self.recorder.log(&engine.sessions, &[delta], step).await?;
        }
        // The plan is kept (or dropped) before the card shows, so a resolution never
        // misses it.
        plan::leave(
            engine,
            &caller.workspace_id,
            session_id,
            self.message,
            &self.request,
            prepared.as_ref().map(|p| (p.card.id.as_str(), p.card.kind)),
            self.brief.as_ref().map(|(b, chain)| (b, *chain)),
        )
        .await?;
        if let Some(p) = prepared {
            // Recorded before the offer, so an auto resolution (written by `offer`)
            // follows it in the trajectory.
            self.recorder
                .push(Step::DecisionProposed {
                    decision_id: p.card.id.clone(),
                    decision: p.card.kind.as_str().to_owned(),
                    level: p.card.kind.level(),
                    source: p.target.source_id().map(str::to_owned),
                    credits: p.credits,
                    contacts: p.contacts,
                })
                .await?;
            decisions::offer(engine, caller, session_id, Some(turn_id), p).await?;
        }
        super::super::service::close_turn(
            engine,
            session_id,
            turn_id,
            vec![SessionEvent::TurnFinished(TurnFinished {
                turn_id: turn_id.to_owned(),
                intent_kind: intent_kind(&intent),
            })],
            "finished",
            &self.inbox,
        )
        .await?;
        let route = self.model.route_taken(turn_id);
        self.recorder
            .push(Step::Finished {
                intent: intent.clone(),
                route,
                attempts: attempts_of(engine.store.pool(), turn_id).await?,
                repaired: self.repaired,
                trimmed,
                model_steps: self.steps,
            })
            .await?;

        Ok(TurnOutcome {
            turn_id: turn_id.to_owned(),
            intent,
            narration,
            repaired: self.repaired,
            trimmed,
            transcript: self.input.transcript,
            route,
            steps: self.steps,
            trajectory: self.recorder.trajectory,
        })
    }
}

/// Ends a turn the plan preflight or the model gates refused: `turn.refused {code}`
/// closes it in the log (the chat shows the code's fixed sentence) and the outcome
/// reports a `limite`. The recorder knows the session and the turn.
pub(super) async fn refuse(
    engine: &Engine,
    model: &dyn ModelGateway,
    code: luna_protocol::event::RefusalCode,
    input: ModelInput,
    steps: usize,
    mut recorder: Recorder,
    inbox: &Inbox,
) -> EngineResult<TurnOutcome> {
    let turn_id = recorder.trajectory.turn_id.clone();
    let turn_id = turn_id.as_str();
    let session_id = recorder.trajectory.session_id.clone();
    let session_id = session_id.as_str();
    tracing::warn!(?code, turn = %turn_id, "the model gates refused the turn");
    super::super::service::close_turn(
        engine,
        session_id,
        turn_id,
        vec![SessionEvent::TurnRefused(
            luna_protocol::event::TurnRefused::new(turn_id, code),
        )],
        "finished",
        inbox,
    )
    .await?;
    let route = model.route_taken(turn_id);
    recorder
        .push(Step::Refused {
            code: format!("{code:?}"),
            route,
            attempts: attempts_of(engine.store.pool(), turn_id).await?,
        })
        .await?;
    Ok(TurnOutcome {
        turn_id: turn_id.to_owned(),
        intent: TurnIntent::Limite {
            falta: Falta {
                tipo: FaltaTipo::Operacion,
                detalle: code.message().to_owned(),
            },
        },
        narration: ResolvedNarration {
            text: String::new(),
            anchors: Vec::new(),
        },
        repaired: false,
        trimmed: false,
        transcript: input.transcript,
        route,
        steps,
        trajectory: recorder.trajectory,
    })
}
