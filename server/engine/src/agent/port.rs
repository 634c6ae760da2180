//! The agent's side of the tools' port (`crate::tools::port`): the services a tool may
//! call without importing this layer — re-quoting contact cards when the selection
//! changes, and proposing and reading research runs.

use luna_protocol::tool::ResultRow;
use serde_json::json;

use crate::accounts::Caller;
use crate::agent::{decisions, research};
use crate::tools::port::{AgentPort, PortFuture, ResearchProposal};
use crate::Engine;

/// The agent services, as the composition root installs them in `Engine::agent`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Port;

impl AgentPort for Port {
    fn requote_on_selection<'a>(
        &'a self,
        engine: &'a Engine,
        caller: &'a Caller,
        session_id: &'a str,
        selected: &'a [String],
    ) -> PortFuture<'a, ()> {
        Box::pin(decisions::requote_on_selection(
            engine, caller, session_id, selected,
        ))
    }

    fn research_propose<'a>(
        &'a self,
        engine: &'a Engine,
        caller: &'a Caller,
        session_id: Option<&'a str>,
        brief: &'a str,
        refs: &'a [String],
    ) -> PortFuture<'a, ResearchProposal> {
        Box::pin(research::propose(engine, caller, session_id, brief, refs))
    }

    fn research_status<'a>(
        &'a self,
        engine: &'a Engine,
        caller: &'a Caller,
        run_id: &'a str,
    ) -> PortFuture<'a, ResultRow> {
        Box::pin(async move {
            let run = research::get(engine, caller, run_id).await?;
            Ok(status_row(&run))
        })
    }
}

/// A run as `research_status` shows it: its phases, summary, refs and every model
/// step with the phase that took it and what came of it (a step past the cap is
/// listed as `tope`: it was not called).
fn status_row(run: &research::Run) -> ResultRow {
    let p = run.progress(None);
    let phases: Vec<_> = p
        .phases
        .iter()
        .map(|ph| json!({"label": ph.label, "status": ph.status, "found": ph.found}))
        .collect();
    let model_steps: Vec<_> = run
        .model_steps()
        .map(|(phase, n)| json!({"phase": phase, "purpose": n.purpose, "outcome": n.outcome, "rejected": n.rejected}))
        .collect();
    ResultRow::new(format!("run:{}", run.id), run.title.clone())
        .with("status", p.status)
        .with("phase", &p.phase)
        .with("phases", phases)
        .with("summary", &p.summary)
        .with("refs", &p.refs)
        .with("inference_used", run.inference_used)
        .with("inference_cap", run.inference_cap)
        .with("model_steps", model_steps)
}
