//! The turn loop (CONTRACT §7.3): up to `MAX_STEPS` model steps against the registry, every
//! step written to the session log as events; the final intent checked by the question
//! governor and the narration resolver, with exactly one repair before falling back to
//! a `responder` trimmed to what is anchored.

use std::collections::HashSet;

use luna_protocol::event::{
    Anchor, IntentKind, NarrationDelta, SessionEvent, ToolFinished, ToolStarted, TurnAccepted,
    TurnFinished, UserMessage,
};
use luna_protocol::session::Stage;
use luna_protocol::tool::Envelope;
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::agent::decisions;
use crate::agent::director::grammar;
use crate::agent::director::vocab::CatalogVocabulary;
use crate::base::error::EngineResult;
use crate::registry::{Surface, ToolRequest};
use crate::Engine;

use super::memory;
use super::plan::{self, PlanBrief};
use super::steering::Inbox;
use crate::agent::contract::gateway::{
    Exchange, GatewayError, ModelGateway, ModelInput, ModelStep, ModelTool, Route, StepContext,
    ThinkingSink,
};
use crate::agent::contract::input::{BoardBrief, TurnInput};
use crate::agent::contract::intent::{
    check_intent, CierreVariante, Falta, FaltaTipo, TurnIntent, TurnOutput,
};
use crate::agent::contract::narration::{self, KnownRefs, ResolvedNarration};
use crate::agent::contract::trajectory::{attempts_of, Recorder, Step, ToolStep, Trajectory};

/// Most model steps in one turn.
pub const MAX_STEPS: usize = 8;
/// Searches in a row without new evidence before the governor ends the loop.
pub const STAGNATION_LIMIT: usize = 3;

/// What a finished turn produced (also the trajectory the evals read).
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    pub turn_id: String,
    pub intent: TurnIntent,
    pub narration: ResolvedNarration,
    /// True when the first answer was rejected and the model repaired it.
    pub repaired: bool,
    /// True when the repair failed too and the narration was trimmed.
    pub trimmed: bool,
    pub transcript: Vec<Exchange>,
    pub route: Route,
    pub steps: usize,
    /// Every step of the turn, as persisted in `trajectory_steps`.
    pub trajectory: Trajectory,
}

pub use crate::agent::contract::results::{format_value, harvest, label_for, summary_of};

fn to_anchors(resolved: &ResolvedNarration) -> Vec<Anchor> {
    resolved
        .anchors
        .iter()
        .map(|a| Anchor {
            start: a.start as u32,
            end: a.end as u32,
            label: resolved.text[a.start..a.end].to_owned(),
            reference: a.reference.clone(),
        })
        .collect()
}

fn intent_kind(intent: &TurnIntent) -> IntentKind {
    match intent {
        TurnIntent::Responder {} => IntentKind::Responder,
        TurnIntent::Encuadre { .. } => IntentKind::Encuadre,
        TurnIntent::ProponerDecision { .. } => IntentKind::ProponerDecision,
        TurnIntent::Cierre { .. } => IntentKind::Cierre,
        TurnIntent::Limite { .. } => IntentKind::Limite,
    }
}

/// The tools Luna sees in `stage` for `message` (the registry's cues and stage
/// priorities, ≤ 12).
fn project(
    engine: &Engine,
    stage: Stage,
    message: &str,
) -> (HashSet<&'static str>, Vec<ModelTool>) {
    let visible = engine.registry.for_turn(stage, message);
    let names = visible.iter().map(|d| d.name).collect();
    let tools = visible
        .iter()
        .map(|d| ModelTool {
            name: d.name.to_owned(),
            description: d.full_description(),
            parameters: d.input_schema.clone(),
        })
        .collect();
    (names, tools)
}

/// Runs one turn of `session_id` for `message`. The caller has already checked that
/// no other turn is running (a message meanwhile is steering).
pub async fn run_turn(
    engine: &Engine,
    model: &dyn ModelGateway,
    caller: &Caller,
    session_id: &str,
    turn_id: &str,
    message: &str,
) -> EngineResult<TurnOutcome> {
    run_turn_in(engine, model, caller, session_id, turn_id, message, None).await
}

/// [`run_turn`], or with `plan` the turn that continues a chained request after its
/// card was accepted (`message` is then the original request; no new person message
/// is logged).
pub async fn run_turn_in(
    engine: &Engine,
    model: &dyn ModelGateway,
    caller: &Caller,
    session_id: &str,
    turn_id: &str,
    message: &str,
    plan: Option<(PlanBrief, i64)>,
) -> EngineResult<TurnOutcome> {
    let sessions = &engine.sessions;
    let snapshot = sessions.snapshot_at_latest(caller, session_id).await?;
    let view = &snapshot.view;
    let thread = crate::agent::contract::input::thread_of(&view.chat.messages);
    let mut inbox = Inbox::open(turn_id, snapshot.seq, view);
    let turn_number = view
        .chat
        .messages
        .iter()
        .filter(|m| {
            matches!(
                m,
                luna_protocol::chat::ChatMessage::Person {
                    steering: false,
                    ..
                }
            )
        })
        .count() as u32
        + 1;

    // The session's memory: the ledger the last turn ended with, this message's
    // fields laid over it; the stage from the board (CONTRACT §7.1, §7.4).
    let request = grammar::parse(message, &CatalogVocabulary);
    let stage = memory::derive_stage(&view.board);
    let previous = memory::previous_ledger(engine.store.pool(), session_id).await?;
    let mut ledger = match plan {
        // The request was said (and laid over the ledger) when it arrived.
        Some(_) => previous,
        None => memory::merge(&previous, &memory::said_in(&request, turn_number)),
    };
    let profile = crate::accounts::profile::get(&engine.store, caller).await?;
    memory::apply_profile(&mut ledger, &profile);
    let (brief, chain) = match plan {
        Some((brief, chain)) => (Some(brief), chain),
        None => (None, 0),
    };

    let accepted = SessionEvent::TurnAccepted(TurnAccepted {
        turn_id: turn_id.to_owned(),
        stage,
    });
    let opening = match brief {
        // A plan's next part: Luna goes on by herself, no new person message.
        Some(_) => vec![accepted],
        None => vec![
            SessionEvent::UserMessage(UserMessage {
                turn_id: turn_id.to_owned(),
                text: message.to_owned(),
                steering: false,
            }),
            accepted,
        ],
    };
    sessions.append_all(session_id, &opening).await?;

    let mut recorder = Recorder::start(
        engine.store.pool(),
        &caller.workspace_id,
        Trajectory {
            facts: ledger.clone(),
            ..Trajectory::new(session_id, turn_id, message, stage)
        },
    )
    .await?;

    let (mut visible_names, tools) = project(engine, stage, message);

    let mut input = ModelInput {
        turn: TurnInput {
            message: message.to_owned(),
            thread,
            facts: ledger.clone(),
            profile: (!crate::accounts::profile::is_empty(&profile)).then_some(profile),
            board: BoardBrief::from_board(&view.board),
            stage,
            steering: Vec::new(),
            research: None,
            plan: brief.clone(),
        },
        tools,
        transcript: Vec::new(),
        repair: None,
        context: StepContext {
            workspace_id: caller.workspace_id.clone(),
            turn_id: turn_id.to_owned(),
            thinking: Some(thinking_sink(engine, session_id, turn_id)),
        },
    };

    // Plan preflight: a plan with a daily search quota (Explorer) that used it up
    // gets a typed refusal before any model runs, not a turn of failing searches.
    if engine
        .billing
        .searches_left_today(caller, crate::base::clock::now_ms())
        .await?
        == Some(0)
    {
        return refuse(
            engine,
            model,
            luna_protocol::event::RefusalCode::Cap,
            input,
            0,
            recorder,
            &inbox,
        )
        .await;
    }

    let mut known = KnownRefs::new();
    let mut proposals: Vec<(String, Envelope)> = Vec::new();
    let mut stagnant = 0usize;
    let mut repaired = false;
    let mut steps = 0usize;
    // The words the tools are cued by: the message and the steering since.
    let mut cues = message.to_owned();
    let mut final_output: Option<(TurnIntent, ResolvedNarration, bool)> = None;
    // Why the loop ended without an answer, for the sentence the person reads.
    let mut stopped = "Me detuve antes de terminar: llegué al máximo de pasos de un turno. Dime si sigo desde aquí o ajusta lo que buscas.";

    while steps < MAX_STEPS {
        steps += 1;
        // What the person wrote since the last step reaches this one: its fields
        // change the ledger, its words may call for other tools, and the model plans
        // the rest of the turn with it.
        let steering = inbox.take(engine, caller, session_id).await?;
        if !steering.is_empty() {
            for text in &steering {
                let said = memory::said_in(&grammar::parse(text, &CatalogVocabulary), turn_number);
                ledger = memory::merge(&ledger, &said);
            }
            input.turn.facts = ledger.clone();
            input.turn.steering.extend(steering);
            cues = format!("{message} {}", input.turn.steering.join(" "));
            let (names, tools) = project(engine, input.turn.stage, &cues);
            visible_names = names;
            input.tools = tools;
        }
        let step = match model.step(&input).await {
            Ok(s) => s,
            Err(GatewayError::Refused(code)) => {
                return refuse(engine, model, code, input, steps, recorder, &inbox).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "model step failed");
                stopped = "No pude terminar esta vez. Intenta de nuevo en un minuto.";
                break;
            }
        };
        match step {
            ModelStep::Tools(calls) => {
                for call in calls {
                    let handle = format!("c{}", input.transcript.len() + 1);
                    let def = engine.registry.get(&call.name).map(|e| &e.def);
                    if !visible_names.contains(call.name.as_str()) {
                        let result = json!({"error": {"code": "UNKNOWN_TOOL", "message": "Esa herramienta no está disponible en este momento de la conversación.", "hint": "Usa una de las herramientas visibles."}});
                        recorder
                            .push(Step::ToolCall(ToolStep {
                                call: handle.clone(),
                                tool: call.name.clone(),
                                args: call.args.clone(),
                                level: def.map_or(0, |d| level_number(d.level)),
                                writes: def.is_some_and(|d| {
                                    d.side_effect != crate::registry::def::SideEffect::None
                                }),
                                ok: false,
                                error_code: Some("UNKNOWN_TOOL".into()),
                                result: result.clone(),
                                charged: 0,
                                metered: 0,
                                undo_token: None,
                            }))
                            .await?;
                        input.transcript.push(Exchange {
                            call: handle,
                            result,
                            tool: call,
                        });
                        continue;
                    }
                    let label = label_for(
                        &call.name,
                        def.map(|d| d.label).unwrap_or_default(),
                        &call.args,
                    );
                    sessions
                        .append_one(
                            session_id,
                            SessionEvent::ToolStarted(ToolStarted {
                                turn_id: turn_id.to_owned(),
                                call_ref: handle.clone(),
                                label: label.clone(),
                            }),
                        )
                        .await?;
                    let mut request =
                        ToolRequest::new(call.name.clone(), call.args.clone(), Surface::Luna);
                    request.session_id = Some(session_id.to_owned());
                    let response = engine.call_tool(caller, request).await;
                    let mut refs = Vec::new();
                    // New evidence = objects not seen earlier in this turn (the
                    // call-local `evidence:cN…` keys are always new and do not count).
                    let mut new_objects = 0;
                    if let (Ok(env), Some(def)) = (&response.outcome, def) {
                        new_objects = env
                            .results
                            .iter()
                            .filter(|r| known.label(&r.ref_).is_none())
                            .count();
                        harvest(&mut known, &handle, &def.citations, env);
                        refs = env
                            .results
                            .iter()
                            .map(|r| r.ref_.clone())
                            .take(50)
                            .collect();
                        for row in &env.results {
                            for key in ["proposal_id", "quote_id", "sequence_id"] {
                                if let Some(id) = row.fields.get(key).and_then(Value::as_str) {
                                    proposals.push((id.to_owned(), env.clone()));
                                }
                            }
                        }
                    }
                    let undo_token = response
                        .outcome
                        .as_ref()
                        .ok()
                        .and_then(|env| env.results.first())
                        .and_then(|r| r.fields.get("undo_token"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    let mut events = vec![SessionEvent::ToolFinished(ToolFinished {
                        turn_id: turn_id.to_owned(),
                        call_ref: handle.clone(),
                        label,
                        summary: summary_of(&response),
                        refs,
                        reads_counted: u32::from(
                            call.name.starts_with("market_") && response.is_ok(),
                        ),
                        ok: response.is_ok(),
                        undo_token: undo_token.clone(),
                    })];
                    // A level-0 write (it can be undone) may have moved the saved
                    // list: its counts follow in the same append.
                    if undo_token.is_some() {
                        let board = sessions
                            .snapshot_at_latest(caller, session_id)
                            .await?
                            .view
                            .board;
                        events.extend(
                            crate::tools::board::saved_refresh(
                                engine,
                                caller,
                                &board,
                                Some(turn_id),
                            )
                            .await?,
                        );
                    }
                    sessions.append_all(session_id, &events).await?;
                    let result = response.to_json();
                    recorder
                        .push(Step::ToolCall(ToolStep {
                            call: handle.clone(),
                            tool: call.name.clone(),
                            args: call.args.clone(),
                            level: def.map_or(0, |d| level_number(d.level)),
                            writes: def.is_some_and(|d| {
                                d.side_effect != crate::registry::def::SideEffect::None
                            }),
                            ok: response.is_ok(),
                            error_code: response
                                .outcome
                                .as_ref()
                                .err()
                                .and_then(|e| serde_json::to_value(e.code).ok())
                                .and_then(|v| v.as_str().map(str::to_owned)),
                            result: result.clone(),
                            charged: response
                                .receipts
                                .iter()
                                .filter(|r| {
                                    !r.replayed && r.ledger == crate::billing::Ledger::Contact
                                })
                                .map(|r| r.amount)
                                .sum(),
                            metered: response
                                .receipts
                                .iter()
                                .filter(|r| {
                                    !r.replayed && r.ledger == crate::billing::Ledger::Intelligence
                                })
                                .map(|r| r.amount)
                                .sum(),
                            undo_token,
                        }))
                        .await?;
                    if call.name == "market_search" {
                        stagnant = if new_objects == 0 { stagnant + 1 } else { 0 };
                    }
                    input.transcript.push(Exchange {
                        call: handle,
                        tool: call,
                        result,
                    });
                }
                if stagnant >= STAGNATION_LIMIT {
                    tracing::info!("stagnation: ending the loop");
                    stopped = "Me detuve antes de terminar: no encontré evidencia nueva con las búsquedas que hice. Ajusta el criterio y lo intento de nuevo.";
                    break;
                }
                // The board may have moved on (a selection now exists): project the
                // tools again for the new stage, still at most 12.
                let board = sessions
                    .snapshot_at_latest(caller, session_id)
                    .await?
                    .view
                    .board;
                let now = memory::derive_stage(&board);
                if now != input.turn.stage {
                    let (names, tools) = project(engine, now, &cues);
                    visible_names = names;
                    input.tools = tools;
                    input.turn.stage = now;
                    input.turn.board = BoardBrief::from_board(&board);
                }
            }
            ModelStep::Final(TurnOutput { intent, narracion }) => {
                let ids: Vec<String> = proposals.iter().map(|(id, _)| id.clone()).collect();
                let checked = check_intent(&intent, &ledger, &ids);
                let resolved = narration::resolve(&narracion, &known);
                let mut problems = Vec::new();
                if let Err(p) = &checked {
                    problems.push(format!("{p:?}"));
                }
                if let Err(ps) = &resolved {
                    problems.extend(ps.iter().map(|p| format!("{p:?}")));
                }
                recorder
                    .push(Step::ModelAnswer {
                        intent: intent.clone(),
                        narracion: narracion.clone(),
                        accepted: problems.is_empty(),
                        problems: problems.clone(),
                    })
                    .await?;
                match (checked, resolved) {
                    (Ok(()), Ok(r)) => {
                        final_output = Some((intent, r, false));
                        break;
                    }
                    (_, _) if !repaired => {
                        repaired = true;
                        input.repair = Some(problems.join("; "));
                    }
                    (_, _) => {
                        let mut trimmed = narration::trim_to_anchored(&narracion, &known);
                        // A question the governor refused twice must not reach the
                        // person in prose either.
                        if problems.iter().any(|p| p.starts_with("AsksKnownField")) {
                            trimmed = ResolvedNarration {
                                text: "Sigo con lo que ya me dijiste; si quieres cambiar algún criterio, dímelo.".to_owned(),
                                anchors: Vec::new(),
                            };
                        }
                        final_output = Some((TurnIntent::Responder {}, trimmed, true));
                        break;
                    }
                }
            }
        }
    }

    // What the tools were asked for fills the fields nobody said; the next turn starts
    // from this ledger.
    memory::infer_from_calls(&mut ledger, &input.transcript, turn_number);
    recorder.set_facts(&ledger).await?;

    let (mut intent, mut narration, trimmed) = final_output.unwrap_or_else(|| {
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
        let source = proposals
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
        sessions
            .append_one(
                session_id,
                SessionEvent::NarrationDelta(NarrationDelta {
                    turn_id: turn_id.to_owned(),
                    text: narration.text.clone(),
                    anchors: to_anchors(&narration),
                }),
            )
            .await?;
        recorder
            .push(Step::Narration {
                text: narration.text.clone(),
                anchors: narration.anchors.clone(),
            })
            .await?;
    }
    // The plan is kept (or dropped) before the card shows, so a resolution never
    // misses it.
    plan::leave(
        engine,
        &caller.workspace_id,
        session_id,
        message,
        &request,
        prepared.as_ref().map(|p| (p.card.id.as_str(), p.card.kind)),
        brief.as_ref().map(|b| (b, chain)),
    )
    .await?;
    if let Some(p) = prepared {
        // Recorded before the offer, so an auto resolution (written by `offer`)
        // follows it in the trajectory.
        recorder
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
    super::service::close_turn(
        engine,
        session_id,
        turn_id,
        vec![SessionEvent::TurnFinished(TurnFinished {
            turn_id: turn_id.to_owned(),
            intent_kind: intent_kind(&intent),
        })],
        "finished",
        &inbox,
    )
    .await?;
    let route = model.route_taken(turn_id);
    recorder
        .push(Step::Finished {
            intent: intent.clone(),
            route,
            attempts: attempts_of(engine.store.pool(), turn_id).await?,
            repaired,
            trimmed,
            model_steps: steps,
        })
        .await?;

    Ok(TurnOutcome {
        turn_id: turn_id.to_owned(),
        intent,
        narration,
        repaired,
        trimmed,
        transcript: input.transcript,
        route,
        steps,
        trajectory: recorder.trajectory,
    })
}

fn level_number(level: crate::registry::def::Level) -> u8 {
    use crate::registry::def::Level;
    match level {
        Level::L0 => 0,
        Level::L1 => 1,
        Level::L2 => 2,
        Level::Never => 3,
    }
}

/// Ends a turn the plan preflight or the model gates refused: `turn.refused {code}` closes it in the log
/// (the chat shows the code's fixed sentence) and the outcome reports a `limite`.
/// The recorder knows the session and the turn.
async fn refuse(
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
    super::service::close_turn(
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
            falta: crate::agent::contract::intent::Falta {
                tipo: crate::agent::contract::intent::FaltaTipo::Operacion,
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

/// Live reasoning of this turn's model goes to the session's watchers, not the log.
fn thinking_sink(engine: &Engine, session_id: &str, turn_id: &str) -> ThinkingSink {
    let hub = engine.sessions.hub().clone();
    let (session_id, turn_id) = (session_id.to_owned(), turn_id.to_owned());
    ThinkingSink::new(move |text| {
        hub.think(
            &session_id,
            luna_protocol::stream::Thinking {
                turn_id: turn_id.clone(),
                text: text.to_owned(),
            },
        )
    })
}
