//! What a tool needs from the agent layer above it, as a trait: the agent implements
//! it (the agent's `port` module) and the composition root installs it in `Engine::agent`,
//! so no tool imports the agent. Two tools need it: `selection_update` (a changed
//! selection re-quotes the session's pending contact cards) and the research tools
//! (a proposal is framed and stored by the research service; a run's status is read
//! from its checkpoints).

use std::future::Future;
use std::pin::Pin;

use luna_protocol::tool::ResultRow;

use crate::accounts::Caller;
use crate::base::error::EngineResult;
use crate::Engine;

/// A boxed future borrowed for `'a`, as trait objects return them.
pub type PortFuture<'a, T> = Pin<Box<dyn Future<Output = EngineResult<T>> + Send + 'a>>;

/// The real phases of a research run, in order: (key, Spanish label). The tools show
/// them in a proposal; the research service runs them.
pub const RESEARCH_PHASES: [(&str, &str); 6] = [
    ("encuadre", "Encuadre del criterio"),
    ("proveedores", "Buscando Proveedores"),
    ("adjudicaciones", "Leyendo Adjudicaciones"),
    ("riesgos", "Revisando marcas de riesgo"),
    ("segmentos", "Comparando segmentos"),
    ("informe", "Escribiendo el resultado"),
];

/// What `research_start` previews.
#[derive(Debug, Clone)]
pub struct ResearchProposal {
    pub proposal_id: String,
    pub title: String,
    pub criterion: String,
    pub inference_cap: u32,
    /// Tool calls the run will make (each counts like a chat call).
    pub calls_estimate: u32,
    /// Créditos de inteligencia the searches and counts spend.
    pub credits_estimate: u32,
    /// When the proposal (and its card) expires, unix milliseconds.
    pub expires_at: i64,
}

/// The agent's services a tool may call.
pub trait AgentPort: Send + Sync + std::fmt::Debug {
    /// The selection of `session_id` is now `selected` (`company:…` refs): re-quote or
    /// expire the session's pending `revelar_contactos` cards.
    fn requote_on_selection<'a>(
        &'a self,
        engine: &'a Engine,
        caller: &'a Caller,
        session_id: &'a str,
        selected: &'a [String],
    ) -> PortFuture<'a, ()>;

    /// Frames `brief` and stores a research proposal (nothing runs).
    fn research_propose<'a>(
        &'a self,
        engine: &'a Engine,
        caller: &'a Caller,
        session_id: Option<&'a str>,
        brief: &'a str,
        refs: &'a [String],
    ) -> PortFuture<'a, ResearchProposal>;

    /// The result row of `research_status` for one of the caller's runs.
    fn research_status<'a>(
        &'a self,
        engine: &'a Engine,
        caller: &'a Caller,
        run_id: &'a str,
    ) -> PortFuture<'a, ResultRow>;
}
