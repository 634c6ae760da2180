//! One step of the loop before and after the model: the steering read since the last
//! step ([`Turn::steer`]), one tool call through the registry with its events and its
//! trajectory step ([`Turn::call`]), and the board followed after the calls
//! ([`Turn::follow_board`]). The session view is folded in memory from the events the
//! turn follows (its session's feed, the log when the feed has a gap). What a call
//! writes after it ran (its charges, its telemetry row, `tool.finished`, its trajectory
//! step) commits in one transaction.

use luna_protocol::event::{SessionEvent, ToolFinished, ToolStarted};
use luna_protocol::view::apply;
use serde_json::json;
use tracing::Instrument;

use crate::agent::director::grammar;
use crate::agent::director::vocab::CatalogVocabulary;
use crate::base::error::EngineResult;
use crate::registry::def::SideEffect;
use crate::registry::{pipeline, typed};
use crate::registry::{Surface, ToolRequest};
use crate::tools::handles::{DecisionIds, Undo};

use super::super::memory;
use super::evidence::level_number;
use super::{project, Turn};
use crate::agent::contract::gateway::{Exchange, ToolCall};
use crate::agent::contract::input::BoardBrief;
use crate::agent::contract::results::{harvest, label_for, summary_of};
use crate::agent::contract::trajectory::{Step, ToolStep};

impl Turn<'_> {
    /// Folds what the log gained since the last read: the view follows, and steering
    /// messages wait in the inbox. The events come from the session's feed; the log
    /// is read only when the feed shows a gap.
    async fn catch_up(&mut self) -> EngineResult<()> {
        let events = match self.feed.next(self.seq) {
            Some(events) => events,
            None => self.engine.sessions.tail(self.session_id, self.seq).await?,
        };
        if let Some(last) = events.last() {
            self.seq = last.seq;
        }
        for e in &events {
            apply(&mut self.view, &e.event);
        }
        self.inbox.see(&events);
        Ok(())
    }

    /// What the person wrote since the last step reaches this one: its fields change
    /// the ledger, its words may call for other tools, and the model plans the rest of
    /// the turn with it.
    pub(super) async fn steer(&mut self) -> EngineResult<()> {
        self.catch_up().await?;
        let steering = self.inbox.apply(self.engine, self.session_id).await?;
        if steering.is_empty() {
            return Ok(());
        }
        for text in &steering {
            let request = grammar::parse(text, &CatalogVocabulary);
            self.ledger = memory::said_over(&self.ledger, &request, self.turn_number);
        }
        self.input.turn.facts = self.ledger.clone();
        self.input.turn.steering.extend(steering);
        self.cues = format!("{} {}", self.message, self.input.turn.steering.join(" "));
        let (names, tools) = project(self.engine, self.input.turn.stage, &self.cues);
        self.visible_names = names;
        self.input.tools = tools;
        Ok(())
    }

    /// The board may have moved on (a selection now exists): project the tools again
    /// for the new stage, still at most 12.
    pub(super) async fn follow_board(&mut self) -> EngineResult<()> {
        self.catch_up().await?;
        let now = memory::derive_stage(&self.view.board);
        if now != self.input.turn.stage {
            let (names, tools) = project(self.engine, now, &self.cues);
            self.visible_names = names;
            self.input.tools = tools;
            self.input.turn.stage = now;
            self.input.turn.board = BoardBrief::from_board(&self.view.board);
        }
        Ok(())
    }

    /// Runs one tool call the model asked for: `tool.started`, the registry pipeline,
    /// the evidence harvested, then `tool.finished` and the trajectory step together.
    pub(super) async fn call(&mut self, call: ToolCall) -> EngineResult<()> {
        let (engine, session_id, turn_id) = (self.engine, self.session_id, self.turn_id);
        let handle = format!("c{}", self.input.transcript.len() + 1);
        let def = engine.registry.get(&call.name).map(|e| &e.def);
        let level = def.map_or(0, |d| level_number(d.level));
        let writes = def.is_some_and(|d| d.side_effect != SideEffect::None);
        if !self.visible_names.contains(call.name.as_str()) {
            let result = json!({"error": {"code": "UNKNOWN_TOOL", "message": "Esa herramienta no está disponible en este momento de la conversación.", "hint": "Usa una de las herramientas visibles."}});
            self.recorder
                .push(Step::ToolCall(ToolStep {
                    call: handle.clone(),
                    tool: call.name.clone(),
                    args: call.args.clone(),
                    level,
                    writes,
                    ok: false,
                    error_code: Some("UNKNOWN_TOOL".into()),
                    result: result.clone(),
                    charged: 0,
                    metered: 0,
                    undo_token: None,
                }))
                .await?;
            self.input.transcript.push(Exchange {
                call: handle,
                result,
                tool: call,
            });
            return Ok(());
        }
        let label = label_for(
            &call.name,
            def.map(|d| d.label).unwrap_or_default(),
            &call.args,
        );
        engine
            .sessions
            .append_one(
                session_id,
                SessionEvent::ToolStarted(ToolStarted {
                    turn_id: turn_id.to_owned(),
                    call_ref: handle.clone(),
                    label: label.clone(),
                }),
            )
            .await?;
        let mut request = ToolRequest::new(call.name.clone(), call.args.clone(), Surface::Luna);
        request.session_id = Some(session_id.to_owned());
        // The call's charges and telemetry row, its `tool.finished` and its trajectory
        // step commit in one transaction.
        let unsettled = pipeline::call_unsettled(engine, self.caller, request).await;
        // A level-0 write (it can be undone) may have moved the saved list: its counts
        // are read now, before the step's write lock, and follow in the same append.
        let refresh = match unsettled.envelope().and_then(|env| env.results.first()) {
            Some(row) if typed::read::<Undo>(row)?.undo_token.is_some() => {
                self.catch_up().await?;
                crate::tools::board::saved_refresh(
                    engine,
                    self.caller,
                    &self.view.board,
                    Some(turn_id),
                )
                .await?
            }
            _ => None,
        };
        let mut tx = engine
            .sessions
            .begin_batch(session_id)
            .instrument(tracing::trace_span!("session.append"))
            .await?;
        let response = unsettled.settle_in(engine, &mut tx).await?;
        let mut refs = Vec::new();
        // New evidence = objects not seen earlier in this turn (the call-local
        // `evidence:cN…` keys are always new and do not count).
        let mut new_objects = 0;
        if let (Ok(env), Some(def)) = (&response.outcome, def) {
            new_objects = env
                .results
                .iter()
                .filter(|r| self.known.label(&r.ref_).is_none())
                .count();
            harvest(&mut self.known, &handle, &def.citations, env);
            refs = env
                .results
                .iter()
                .map(|r| r.ref_.clone())
                .take(50)
                .collect();
            for row in &env.results {
                for id in typed::read::<DecisionIds>(row)?.into_ids() {
                    self.proposals.push((id, env.clone()));
                }
            }
        }
        let undo_token = match response.outcome.as_ref().map(|env| env.results.first()) {
            Ok(Some(row)) => typed::read::<Undo>(row)?.undo_token,
            _ => None,
        };
        let mut events = vec![SessionEvent::ToolFinished(ToolFinished {
            turn_id: turn_id.to_owned(),
            call_ref: handle.clone(),
            label,
            summary: summary_of(&response),
            refs,
            reads_counted: u32::from(call.name.starts_with("market_") && response.is_ok()),
            ok: response.is_ok(),
            undo_token: undo_token.clone(),
        })];
        if undo_token.is_some() {
            events.extend(refresh);
        }
        let result = response.to_json();
        let ledger_sum = |ledger: crate::billing::Ledger| -> i64 {
            response
                .receipts
                .iter()
                .filter(|r| !r.replayed && r.ledger == ledger)
                .map(|r| r.amount)
                .sum()
        };
        let step = Step::ToolCall(ToolStep {
            call: handle.clone(),
            tool: call.name.clone(),
            args: call.args.clone(),
            level,
            writes,
            ok: response.is_ok(),
            error_code: response
                .outcome
                .as_ref()
                .err()
                .and_then(|e| serde_json::to_value(e.code).ok())
                .and_then(|v| v.as_str().map(str::to_owned)),
            result: result.clone(),
            charged: ledger_sum(crate::billing::Ledger::Contact),
            metered: ledger_sum(crate::billing::Ledger::Intelligence),
            undo_token,
        });
        self.recorder
            .log_in(&engine.sessions, tx, &events, step)
            .await?;
        if call.name == "market_search" {
            self.stagnant = if new_objects == 0 {
                self.stagnant + 1
            } else {
                0
            };
        }
        self.input.transcript.push(Exchange {
            call: handle,
            tool: call,
            result,
        });
        Ok(())
    }
}
