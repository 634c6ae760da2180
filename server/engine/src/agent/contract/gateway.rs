//! The model gateway: one trait that every "model" implements — an OpenAI-compatible
//! endpoint, the deterministic local director, or a scripted trajectory in tests.
//! Each call sees the compiled turn, the visible tools and what happened so far, and
//! answers with tool calls or the final `TurnOutput`.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::input::TurnInput;
use super::intent::TurnOutput;

/// A tool as the model sees it (derived from the registry definition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    pub args: Value,
}

/// One tool call of this turn and what it returned. `call` is the turn-local handle
/// (`c1`, `c2`, …) used in evidence refs such as `[[evidence:c1.0.count]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    pub call: String,
    pub tool: ToolCall,
    /// The client-safe envelope or `{error:{…}}`.
    pub result: Value,
}

/// Everything the model receives for one step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelInput {
    pub turn: TurnInput,
    pub tools: Vec<ModelTool>,
    pub transcript: Vec<Exchange>,
    /// Set on the single repair attempt: what was wrong with the previous answer.
    pub repair: Option<String>,
    /// Who the step is for (the gateway's spend cap, usage rows and cache salt).
    /// Never shown to the model.
    #[serde(skip)]
    pub context: StepContext,
}

/// The workspace and turn a model step belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepContext {
    pub workspace_id: String,
    pub turn_id: String,
    /// Where the model's reasoning goes while it streams, if anywhere: each piece as
    /// it arrives.
    pub thinking: Option<LiveSink>,
    /// Where the final answer's narration goes while it streams, if anywhere: the whole
    /// `narracion` written so far, still marked up (the runner checks it before
    /// anything is shown).
    pub narration: Option<LiveSink>,
}

/// Receives text a streaming model writes, as it arrives. It may be shown live; it is
/// never stored (not in the session log, not in citations).
#[derive(Clone)]
pub struct LiveSink(std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl LiveSink {
    pub fn new(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        LiveSink(std::sync::Arc::new(sink))
    }

    pub fn as_fn(&self) -> &(dyn Fn(&str) + Send + Sync) {
        &*self.0
    }
}

impl std::fmt::Debug for LiveSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveSink")
    }
}

/// Two contexts are the same step whoever listens to it.
impl PartialEq for LiveSink {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LiveSink {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ModelStep {
    Tools(Vec<ToolCall>),
    Final(TurnOutput),
}

/// Which route answered (never shown to the browser).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Primary,
    Fallback,
    Local,
    Scripted,
}

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("the model is unavailable: {0}")]
    Unavailable(String),
    #[error("the model answered something that is not a valid step: {0}")]
    Invalid(String),
    /// The gates refused the turn (CONTRACT §7.5, §12): the runner ends it with
    /// `turn.refused {code}`.
    #[error("the model gates refused the turn: {0:?}")]
    Refused(luna_protocol::event::RefusalCode),
}

pub type StepFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelStep, GatewayError>> + Send + 'a>>;

pub trait ModelGateway: Send + Sync {
    /// The route this gateway starts on.
    fn route(&self) -> Route;
    fn step<'a>(&'a self, input: &'a ModelInput) -> StepFuture<'a>;
    /// The route that finally answered `turn_id` (read once, when the turn ends).
    fn route_taken(&self, turn_id: &str) -> Route {
        let _ = turn_id;
        self.route()
    }
}

/// Replays an exact trajectory, for tests. Running out of steps is an error.
pub struct ScriptedModel {
    steps: Mutex<VecDeque<ModelStep>>,
    seen: Mutex<Vec<ModelInput>>,
}

impl ScriptedModel {
    pub fn new(steps: impl IntoIterator<Item = ModelStep>) -> Self {
        ScriptedModel {
            steps: Mutex::new(steps.into_iter().collect()),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// The inputs the model received, in order (to assert what it was shown).
    pub fn seen(&self) -> Vec<ModelInput> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl ModelGateway for ScriptedModel {
    fn route(&self) -> Route {
        Route::Scripted
    }

    fn step<'a>(&'a self, input: &'a ModelInput) -> StepFuture<'a> {
        Box::pin(async move {
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(input.clone());
            }
            self.steps
                .lock()
                .map_err(|_| GatewayError::Unavailable("script lock poisoned".into()))?
                .pop_front()
                .ok_or_else(|| GatewayError::Unavailable("the script has no more steps".into()))
        })
    }
}

/// The model an engine uses, shareable and printable.
#[derive(Clone)]
pub struct ModelHandle(pub std::sync::Arc<dyn ModelGateway>);

impl std::fmt::Debug for ModelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelHandle({:?})", self.0.route())
    }
}
