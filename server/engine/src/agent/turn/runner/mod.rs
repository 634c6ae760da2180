//! The turn loop (CONTRACT §7.3): up to `MAX_STEPS` model steps against the registry, every
//! step written to the session log as events; the final intent checked by the question
//! governor and the narration resolver, with exactly one repair before falling back to
//! a `responder` trimmed to what is anchored.
//!
//! [`run_turn_in`] opens the turn ([`Turn`]: the ledger, the model input, the session
//! view the turn follows in memory) and runs the loop; each step is a named stage:
//! [`Turn::steer`] (steering since the last step), [`Turn::call`] (one tool call,
//! `step`), [`Turn::follow_board`] (the stage after the calls), [`Turn::answer`] (the
//! model's final answer checked, `finish`) and [`Turn::finish`] (the card, the
//! narration, the plan and the close).

mod evidence;
mod finish;
mod step;

use std::collections::HashSet;

use luna_protocol::event::{NarrationDelta, SessionEvent, TurnAccepted, UserMessage};
use luna_protocol::session::Stage;
use luna_protocol::stream::StreamMessage;
use luna_protocol::tool::Envelope;
use luna_protocol::view::SessionView;

use crate::accounts::Caller;
use crate::agent::director::grammar::{self, Request};
use crate::agent::director::vocab::CatalogVocabulary;
use crate::base::error::EngineResult;
use crate::Engine;

use super::memory;
use super::plan::PlanBrief;
use super::steering::Inbox;
use crate::agent::contract::gateway::{
    Exchange, GatewayError, LiveSink, ModelGateway, ModelInput, ModelStep, ModelTool, Route,
    StepContext,
};
use crate::agent::contract::input::{BoardBrief, CoverageBrief, TurnInput};
use crate::agent::contract::intent::{FactLedger, TurnIntent};
use crate::agent::contract::narration::{self, KnownRefs, ResolvedNarration};
use crate::agent::contract::trajectory::{Recorder, Trajectory};

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

/// A running turn: what the loop's stages read and change.
struct Turn<'a> {
    engine: &'a Engine,
    model: &'a dyn ModelGateway,
    caller: &'a Caller,
    session_id: &'a str,
    turn_id: &'a str,
    message: &'a str,
    request: Request,
    /// The plan this turn continues, with its chain number.
    brief: Option<(PlanBrief, i64)>,
    turn_number: u32,
    ledger: FactLedger,
    input: ModelInput,
    recorder: Recorder,
    inbox: Inbox,
    /// The session's view as of `seq`: the snapshot the turn started from with every
    /// event read since folded in (`luna_protocol::view::apply`), so no step re-reads
    /// a snapshot.
    view: SessionView,
    seq: u64,
    /// The session's committed events as they are published, subscribed before the
    /// snapshot was read.
    feed: crate::session::Follow,
    visible_names: HashSet<&'static str>,
    known: KnownRefs,
    proposals: Vec<(String, Envelope)>,
    stagnant: usize,
    repaired: bool,
    steps: usize,
    /// The words the tools are cued by: the message and the steering since.
    cues: String,
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
    let mut turn = open(engine, model, caller, session_id, turn_id, message, plan).await?;

    // Plan preflight: a plan with a daily search quota (Explorer) that used it up
    // gets a typed refusal before any model runs, not a turn of failing searches.
    if engine
        .billing
        .searches_left_today(caller, crate::base::clock::now_ms())
        .await?
        == Some(0)
    {
        let code = luna_protocol::event::RefusalCode::Cap;
        return finish::refuse(
            engine,
            model,
            code,
            turn.input,
            0,
            turn.recorder,
            &turn.inbox,
        )
        .await;
    }

    let mut answered: Option<(TurnIntent, ResolvedNarration, bool)> = None;
    // Why the loop ended without an answer, for the sentence the person reads.
    let mut stopped = "Me detuve antes de terminar: llegué al máximo de pasos de un turno. Dime si sigo desde aquí o ajusta lo que buscas.";
    while turn.steps < MAX_STEPS {
        turn.steps += 1;
        turn.steer().await?;
        turn.input.context.narration = Some(narration_sink(
            engine,
            session_id,
            turn_id,
            turn.known.clone(),
        ));
        let step = match model.step(&turn.input).await {
            Ok(s) => s,
            Err(GatewayError::Refused(code)) => {
                let (input, steps) = (turn.input, turn.steps);
                return finish::refuse(
                    engine,
                    model,
                    code,
                    input,
                    steps,
                    turn.recorder,
                    &turn.inbox,
                )
                .await;
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
                    turn.call(call).await?;
                }
                if turn.stagnant >= STAGNATION_LIMIT {
                    tracing::info!("stagnation: ending the loop");
                    stopped = "Me detuve antes de terminar: no encontré evidencia nueva con las búsquedas que hice. Ajusta el criterio y lo intento de nuevo.";
                    break;
                }
                turn.follow_board().await?;
            }
            ModelStep::Final(output) => {
                if let Some(done) = turn.answer(output).await? {
                    answered = Some(done);
                    break;
                }
            }
        }
    }
    turn.finish(answered, stopped).await
}

/// Opens the turn: the view it starts from, the session's memory (the ledger the last
/// turn ended with, this message's fields laid over it; the stage from the board,
/// CONTRACT §7.1, §7.4), the opening events, the trajectory's header and the model's
/// first input.
async fn open<'a>(
    engine: &'a Engine,
    model: &'a dyn ModelGateway,
    caller: &'a Caller,
    session_id: &'a str,
    turn_id: &'a str,
    message: &'a str,
    plan: Option<(PlanBrief, i64)>,
) -> EngineResult<Turn<'a>> {
    let sessions = &engine.sessions;
    let feed = sessions.follow(session_id);
    let snapshot = sessions.snapshot_at_latest(caller, session_id).await?;
    let view = snapshot.view;
    let thread = crate::agent::contract::input::thread_of(&view.chat.messages);
    let inbox = Inbox::open(turn_id, snapshot.seq, &view);
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

    let request = grammar::parse(message, &CatalogVocabulary);
    let stage = memory::derive_stage(&view.board);
    let previous = memory::previous_ledger(engine.store.pool(), session_id).await?;
    let mut ledger = match plan {
        // The request was said (and laid over the ledger) when it arrived.
        Some(_) => previous,
        None => memory::said_over(&previous, &request, turn_number),
    };
    let profile = crate::accounts::profile::get(&engine.store, caller).await?;
    memory::apply_profile(&mut ledger, &profile);

    let accepted = SessionEvent::TurnAccepted(TurnAccepted {
        turn_id: turn_id.to_owned(),
        stage,
    });
    let opening = match plan {
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

    let recorder = Recorder::start(
        engine.store.pool(),
        &caller.workspace_id,
        Trajectory {
            facts: ledger.clone(),
            ..Trajectory::new(session_id, turn_id, message, stage)
        },
    )
    .await?;

    let coverage = engine.market.coverage_recent().await?;
    let (visible_names, tools) = project(engine, stage, message);
    let input = ModelInput {
        turn: TurnInput {
            message: message.to_owned(),
            thread,
            facts: ledger.clone(),
            profile: (!crate::accounts::profile::is_empty(&profile)).then_some(profile),
            board: BoardBrief::from_board(&view.board),
            stage,
            coverage: Some(CoverageBrief::from_coverage(&coverage)),
            steering: Vec::new(),
            research: None,
            plan: plan.as_ref().map(|(brief, _)| brief.clone()),
        },
        tools,
        transcript: Vec::new(),
        repair: None,
        context: StepContext {
            workspace_id: caller.workspace_id.clone(),
            turn_id: turn_id.to_owned(),
            thinking: Some(thinking_sink(engine, session_id, turn_id)),
            narration: None,
        },
    };
    Ok(Turn {
        engine,
        model,
        caller,
        session_id,
        turn_id,
        message,
        request,
        brief: plan,
        turn_number,
        ledger,
        input,
        recorder,
        inbox,
        seq: snapshot.seq,
        feed,
        view,
        visible_names,
        known: KnownRefs::new(),
        proposals: Vec::new(),
        stagnant: 0,
        repaired: false,
        steps: 0,
        cues: message.to_owned(),
    })
}

/// Live reasoning of this turn's model goes to the session's watchers, not the log.
fn thinking_sink(engine: &Engine, session_id: &str, turn_id: &str) -> LiveSink {
    let hub = engine.sessions.hub().clone();
    let (session_id, turn_id) = (session_id.to_owned(), turn_id.to_owned());
    LiveSink::new(move |text| {
        hub.live(
            &session_id,
            StreamMessage::Thinking(luna_protocol::stream::Thinking {
                turn_id: turn_id.clone(),
                text: text.to_owned(),
            }),
        )
    })
}

/// The narration a streaming model is writing goes to the session's watchers as it
/// grows, checked against what this turn has read so far (`known`): only complete
/// sentences that resolve are shown ([`narration::checked_prefix`]), one frame each
/// time the shown text grows. The log gets only the judged answer (`finish`).
fn narration_sink(engine: &Engine, session_id: &str, turn_id: &str, known: KnownRefs) -> LiveSink {
    let hub = engine.sessions.hub().clone();
    let (session_id, turn_id) = (session_id.to_owned(), turn_id.to_owned());
    let shown = std::sync::Mutex::new(0usize);
    LiveSink::new(move |partial| {
        let draft = narration::checked_prefix(partial, &known);
        let mut shown = shown.lock().unwrap_or_else(|e| e.into_inner());
        if draft.text.len() <= *shown {
            return;
        }
        *shown = draft.text.len();
        hub.live(
            &session_id,
            StreamMessage::Narrating(NarrationDelta {
                turn_id: turn_id.clone(),
                anchors: draft.wire_anchors(),
                text: draft.text,
            }),
        )
    })
}
