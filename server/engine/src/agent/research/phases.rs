//! One phase of a run: its model step (framing, re-framing with steering, the
//! write-up; see `model`), its tool calls through the pipeline as Luna — each shown in
//! the chat as a tool line, like a turn's — and what it found, as resolved markup.

use luna_protocol::event::{SessionEvent, ToolFinished, ToolStarted};
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::agent::contract::input::ResearchTask;
use crate::agent::contract::results::{label_for, summary_of};
use crate::agent::director::grammar;
use crate::agent::director::vocab::CatalogVocabulary;
use crate::base::error::EngineResult;
use crate::market::types::{AggregateArgs, AggregateGroup, GroupBy};
use crate::registry::typed;
use crate::registry::{Surface, ToolRequest};
use crate::tools::market::SupplierRfc;
use crate::Engine;

use super::frame::{Frame, Rejected};
use super::model::{self, Budget, ModelStepNote, Outcome, Purpose};
use super::{
    append_while_running, pending_steering, resolve_markup, Checkpoint, Run, RunResult, StoredCall,
    PHASES, TOP,
};
use crate::agent::director::writeup;

/// What a phase produced, committed in one transaction by the driver.
#[derive(Debug, Clone)]
pub struct PhaseOutcome {
    pub checkpoint: Checkpoint,
    /// The run's model steps after this phase.
    pub used: i64,
    /// The result, from the last phase.
    pub result: Option<RunResult>,
}

/// «Descarté el estado que proponía el modelo…» (empty when nothing was refused).
fn refused_sentence(rejected: &Rejected) -> String {
    if !rejected.any() {
        return String::new();
    }
    let verb = if rejected.count() > 1 {
        "están"
    } else {
        "está"
    };
    format!(
        " Descarté {} que proponía el modelo porque no {verb} en el catálogo; sigo con lo que pediste.",
        rejected.describe()
    )
}

/// Runs phase `k` of `run`: returns its checkpoint, the model steps spent and, for the
/// last phase, the result.
pub async fn run_phase(
    engine: &Engine,
    caller: &Caller,
    run: &Run,
    k: usize,
) -> EngineResult<PhaseOutcome> {
    let key = PHASES[k].0;
    let mut budget = Budget::of(run);
    let mut frame = run.frame();
    let mut changed = None;
    let mut applied = Vec::new();
    let mut upto = 0;
    let mut prefix = String::new();
    let mut refused = String::new();
    let mut steps: Vec<ModelStepNote> = Vec::new();

    if key == "encuadre" {
        // The model turns the brief into the search; the code checks every value.
        let base = Frame::of_text(&run.brief);
        let framed = model::plan(
            engine,
            run,
            ResearchTask::Encuadre,
            &base,
            base.clone(),
            Vec::new(),
            &mut budget,
        )
        .await;
        refused = refused_sentence(&framed.rejected);
        steps.push(framed.note);
        frame = framed.frame;
        changed = Some(frame.clone());
    }
    // Steering is picked up by the next phase that searches (never by the write-up).
    if (1..PHASES.len() - 1).contains(&k) {
        let steering = pending_steering(engine, &run.id).await?;
        if !steering.is_empty() {
            applied = steering.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>();
            upto = steering.iter().map(|(id, _)| *id).max().unwrap_or(0);
            if budget.available() {
                let fallback = applied.iter().fold(frame.clone(), |f, text| {
                    f.steered(&grammar::parse(text, &CatalogVocabulary))
                });
                let framed = model::plan(
                    engine,
                    run,
                    ResearchTask::Ajuste,
                    &frame,
                    fallback,
                    applied.clone(),
                    &mut budget,
                )
                .await;
                refused = refused_sentence(&framed.rejected);
                steps.push(framed.note);
                frame = framed.frame;
                changed = Some(frame.clone());
                prefix = format!("Ajusté el criterio con tu mensaje: {}. ", frame.describe());
            } else {
                steps.push(ModelStepNote {
                    purpose: Purpose::Ajuste,
                    outcome: Outcome::Tope,
                    rejected: Vec::new(),
                });
                prefix = "Recibí tu mensaje, pero esta investigación ya usó su tope de inferencia y sigue con el criterio original. ".to_owned();
            }
        }
    }

    let mut calls = planned_calls(key, &frame, run, k)?;
    for c in calls.iter_mut() {
        call_with_line(engine, caller, run, key, c).await?;
    }

    let mut result = None;
    if key == "informe" {
        let written = model::write(engine, run, &mut budget).await;
        steps.extend(written.notes);
        let mut text = written.narration.text.clone();
        if let Some(remark) = written.remark {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(remark);
        }
        let anchors = written.narration.wire_anchors();
        let mut refs: Vec<String> = Vec::new();
        for a in &anchors {
            if !a.reference.starts_with("evidence:") && !refs.contains(&a.reference) {
                refs.push(a.reference.clone());
            }
        }
        result = Some(RunResult {
            text,
            anchors,
            refs,
        });
    }

    let known = run.known(&engine.registry, &calls);
    let markup = match key {
        "encuadre" => format!("{}{refused}", found_markup(key, &frame, &calls, run)),
        _ => format!(
            "{prefix}{}{refused}",
            found_markup(key, &frame, &calls, run)
        ),
    };
    let (found, anchors) = resolve_markup(markup.trim(), &known);
    Ok(PhaseOutcome {
        checkpoint: Checkpoint {
            key: key.to_owned(),
            found,
            anchors,
            calls,
            frame: changed,
            steering: applied,
            steering_upto: upto,
            model_steps: steps,
        },
        used: budget.used,
        result,
    })
}

/// The tool calls phase `key` makes with the criterion `frame`.
fn planned_calls(key: &str, frame: &Frame, run: &Run, k: usize) -> EngineResult<Vec<StoredCall>> {
    let mut calls = Vec::new();
    let mut call = |tool: &str, args: Value| {
        let handle = format!("p{k}c{}", calls.len() + 1);
        calls.push(StoredCall {
            call: handle,
            tool: tool.to_owned(),
            args,
            envelope: None,
            error: None,
        });
    };
    match key {
        "proveedores" => {
            call(
                "market_count",
                json!({"kind": "suppliers", "filters": frame.supplier_filters()}),
            );
            call(
                "market_search",
                json!({"kind": "suppliers", "filters": frame.supplier_filters(), "limit": TOP}),
            );
        }
        "adjudicaciones" => call(
            "market_aggregate",
            json!({"filters": frame.award_filters(), "group_by": "supplier", "limit": TOP}),
        ),
        "riesgos" => {
            let rfcs = top_rfcs(run)?;
            if !rfcs.is_empty() {
                call("market_screen", json!({"rfcs": rfcs}));
            }
        }
        "segmentos" => match &frame.state {
            Some((_, state)) => {
                let mut national = frame.award_filters();
                national.remove("state");
                call(
                    "market_compare",
                    json!({"segments": [
                        {"label": state, "filters": frame.award_filters()},
                        {"label": "Todo el país", "filters": national},
                    ]}),
                );
            }
            None => call(
                "market_aggregate",
                json!({"filters": frame.award_filters(), "group_by": "state", "limit": 3}),
            ),
        },
        _ => {}
    }
    Ok(calls)
}

/// One call through the pipeline as Luna, shown in the chat as a tool line
/// (`tool.started`, then `tool.finished` with its summary) while the run runs.
async fn call_with_line(
    engine: &Engine,
    caller: &Caller,
    run: &Run,
    key: &str,
    c: &mut StoredCall,
) -> EngineResult<()> {
    let def = engine.registry.get(&c.tool).map(|e| &e.def);
    let label = label_for(&c.tool, def.map(|d| d.label).unwrap_or_default(), &c.args);
    append_while_running(
        engine,
        run,
        &[SessionEvent::ToolStarted(ToolStarted {
            turn_id: run.id.clone(),
            call_ref: c.call.clone(),
            label: label.clone(),
        })],
    )
    .await?;
    let mut req = ToolRequest::new(c.tool.clone(), c.args.clone(), Surface::Luna);
    req.session_id = run.session_id.clone();
    // A phase interrupted after a call and re-run after a restart reuses the key:
    // the charge is not made twice.
    req.idempotency_key = Some(format!("{}:{}:{}", run.id, key, c.call));
    let response = engine.call_tool(caller, req).await;
    let finished = ToolFinished {
        turn_id: run.id.clone(),
        call_ref: c.call.clone(),
        label,
        summary: summary_of(&response),
        refs: response
            .outcome
            .as_ref()
            .map(|env| {
                env.results
                    .iter()
                    .map(|r| r.ref_.clone())
                    .take(50)
                    .collect()
            })
            .unwrap_or_default(),
        reads_counted: u32::from(c.tool.starts_with("market_") && response.is_ok()),
        ok: response.is_ok(),
        undo_token: None,
    };
    match response.outcome {
        Ok(env) => c.envelope = Some(env),
        Err(e) => c.error = Some(e.message),
    }
    append_while_running(engine, run, &[SessionEvent::ToolFinished(finished)]).await?;
    Ok(())
}

fn rows_of(c: &StoredCall) -> &[luna_protocol::tool::ResultRow] {
    c.envelope
        .as_ref()
        .map(|e| e.results.as_slice())
        .unwrap_or(&[])
}

/// The RFCs of the Proveedores the run found on top (by Adjudicaciones, else by
/// search), from the calls' typed arguments and rows; a row that drifted from its
/// type is a typed error.
fn top_rfcs(run: &Run) -> EngineResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for c in run.calls() {
        let rows = rows_of(c);
        let ids: Vec<String> = match c.tool.as_str() {
            "market_aggregate"
                if typed::args::<AggregateArgs>(&c.tool, &c.args)?.group_by
                    == GroupBy::Supplier =>
            {
                rows.iter()
                    .map(|r| typed::read_whole::<AggregateGroup>(r).map(|g| Some(g.key)))
                    .collect::<EngineResult<Vec<_>>>()?
                    .into_iter()
                    .flatten()
                    .collect()
            }
            "market_search" => rows
                .iter()
                .map(|r| typed::read::<SupplierRfc>(r).map(|s| s.rfc))
                .collect::<EngineResult<Vec<_>>>()?
                .into_iter()
                .flatten()
                .collect(),
            _ => continue,
        };
        for id in ids {
            if !out.contains(&id) && out.len() < TOP {
                out.push(id);
            }
        }
    }
    Ok(out)
}

fn failed_line(c: &StoredCall) -> String {
    match &c.error {
        Some(e) => format!("No pude completar esta fase: {e} "),
        None => String::new(),
    }
}

/// What a phase found, with `[[kind:id]]` markers for every name and figure.
fn found_markup(key: &str, frame: &Frame, calls: &[StoredCall], run: &Run) -> String {
    let first = calls.first();
    match key {
        "encuadre" => {
            let mut s = format!("Voy a revisar {}.", frame.describe());
            if !run.refs.is_empty() {
                let refs: Vec<String> = run.refs.iter().map(|r| format!("[[{r}]]")).collect();
                s.push_str(&format!(" Parto de {}.", refs.join(", ")));
            }
            s
        }
        "proveedores" => {
            let mut s = String::new();
            if let Some(count) = calls.first() {
                if count.envelope.is_some() {
                    s.push_str(&format!(
                        "Hay [[evidence:{}.0.total]] {}.",
                        count.call,
                        frame.describe()
                    ));
                } else {
                    s.push_str(&failed_line(count));
                }
            }
            if let Some(search) = calls.get(1) {
                let names: Vec<String> = rows_of(search)
                    .iter()
                    .take(3)
                    .map(|r| format!("[[{}]]", r.ref_))
                    .collect();
                if !names.is_empty() {
                    s.push_str(&format!(" Entre ellos: {}.", names.join(", ")));
                } else if search.error.is_some() {
                    s.push_str(&failed_line(search));
                }
            }
            s
        }
        "adjudicaciones" => match first {
            Some(c) if !rows_of(c).is_empty() => {
                let rows = rows_of(c);
                let mut s = format!(
                    "Por monto, quien más le vende a gobierno es [[{}]]: [[evidence:{c}.0.awards]] Adjudicaciones por [[evidence:{c}.0.amount_mxn]].",
                    rows[0].ref_,
                    c = c.call
                );
                if rows.len() > 1 {
                    s.push_str(&format!(
                        " Le sigue [[{}]]: [[evidence:{c}.1.awards]] por [[evidence:{c}.1.amount_mxn]].",
                        rows[1].ref_,
                        c = c.call
                    ));
                }
                s
            }
            Some(c) if c.error.is_some() => failed_line(c),
            _ => "No encontré Adjudicaciones con ese criterio en la cobertura cargada.".to_owned(),
        },
        "riesgos" => match first {
            Some(c) => writeup::risk_sentence(&c.exchange()).unwrap_or_else(|| failed_line(c)),
            None => "No hubo Proveedores que revisar.".to_owned(),
        },
        "segmentos" => match first {
            Some(c) => writeup::segment_sentence(&c.exchange()).unwrap_or_else(|| failed_line(c)),
            None => String::new(),
        },
        _ => "El resultado está listo, con la evidencia de cada cifra.".to_owned(),
    }
}
