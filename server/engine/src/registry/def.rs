//! One tool definition: the metadata every surface derives from (CONTRACT §5) and the
//! handler that runs it. Families build definitions with `ToolDef::new::<Args>()`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use luna_protocol::tool::Envelope;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use luna_protocol::account::ApiScope;

use crate::base::error::EngineResult;
use crate::billing::ChargeSpec;

use super::ctx::ToolCtx;
use super::schema;

/// The tool families of the public catalog plus Luna's own belt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Market,
    Context,
    Crm,
    People,
    Account,
    Board,
    Sequences,
    Research,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Market => "market",
            Family::Context => "context",
            Family::Crm => "crm",
            Family::People => "people",
            Family::Account => "account",
            Family::Board => "board",
            Family::Sequences => "sequences",
            Family::Research => "research",
        }
    }

    /// Spanish label, in the product lexicon.
    pub fn label(self) -> &'static str {
        match self {
            Family::Market => "Proveedores, licitaciones y adjudicaciones",
            Family::Context => "Cerebro",
            Family::Crm => "CRM",
            Family::People => "Empresas y personas",
            Family::Account => "Cuenta",
            Family::Board => "Tablero",
            Family::Sequences => "Secuencias",
            Family::Research => "Investigaciones",
        }
    }
}

/// The authorization ladder (CONTRACT §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Do and narrate: free, reversible.
    L0,
    /// One tap: changes something shared, costs nothing.
    L1,
    /// Pending decision: costs credits, sends, or changes Knowledge.
    L2,
    /// Never from chat: needs a browser flow.
    Never,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::L0 => "0",
            Level::L1 => "1",
            Level::L2 => "2",
            Level::Never => "never",
        }
    }
}

/// What a tool does to the world; drives the MCP annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SideEffect {
    /// Reads only.
    None,
    /// Adds or edits data inside the workspace (reversible).
    Write,
    /// Deletes or overwrites data.
    Destructive,
    /// Spends credits or reaches outside the workspace (reveal, send).
    External,
}

/// What an API key needs to call a tool: derived from what the tool does
/// (`ToolDef::key_access`), never written per tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyAccess {
    /// Reads: every key.
    Read,
    /// Writes, reveals and deletes: only a key created with this scope.
    Scope(ApiScope),
    /// No key, whatever its scopes: a person does it in the app.
    Never,
}

/// How a call is metered (see `billing` for the numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CostClass {
    /// Not metered (account facts, board reads).
    Free,
    /// One read against the hourly ceiling.
    Read,
    /// One read, one search of the daily plan quota and one crédito de inteligencia.
    Search,
    /// Spends créditos de contacto; the handler charges explicitly.
    Contact,
    /// Consumes capped inference (research runs), not credits.
    Inference,
}

impl CostClass {
    pub fn as_str(self) -> &'static str {
        match self {
            CostClass::Free => "free",
            CostClass::Read => "read",
            CostClass::Search => "search",
            CostClass::Contact => "contact",
            CostClass::Inference => "inference",
        }
    }

    /// Reads this class counts against the hourly ceiling per call.
    pub fn reads(self) -> u32 {
        match self {
            CostClass::Read | CostClass::Search => 1,
            _ => 0,
        }
    }
}

pub use crate::base::surface::Surface;

/// The surface's cap on a tool result, in characters (CONTRACT §5 rule 10).
pub fn result_cap(surface: Surface) -> usize {
    match surface {
        Surface::Luna => super::TOOL_RESULT_CAP,
        Surface::Mcp | Surface::Ui => super::WIRE_RESULT_CAP,
    }
}

/// The conversation stage that decides which tools Luna sees (CONTRACT §7.4); one
/// definition, shared with the browser.
pub use luna_protocol::session::Stage;

/// Plan features a tool may require (checked before it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    Contacts,
    Sequences,
    Auto,
    /// Long research runs (CONTRACT §10).
    Research,
}

/// A worked example: what it answers (Spanish) and the arguments.
#[derive(Debug, Clone)]
pub struct Example {
    pub note: String,
    pub args: Value,
}

/// What a handler returns: the envelope plus the charges the branch that actually
/// ran incurred (charged by the pipeline after execution, CONTRACT §5 rule 11).
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub envelope: Envelope,
    pub charges: Vec<ChargeSpec>,
}

impl From<Envelope> for ToolOutput {
    fn from(envelope: Envelope) -> Self {
        ToolOutput {
            envelope,
            charges: Vec::new(),
        }
    }
}

impl ToolOutput {
    pub fn with_charge(mut self, charge: ChargeSpec) -> Self {
        self.charges.push(charge);
        self
    }
}

pub type HandlerFuture = Pin<Box<dyn Future<Output = EngineResult<ToolOutput>> + Send>>;

/// A tool's behaviour. Arguments arrive already validated against the tool's schema.
pub trait ToolHandler: Send + Sync {
    fn call(&self, ctx: ToolCtx, args: Value) -> HandlerFuture;
}

struct Typed<A, F> {
    f: F,
    _args: std::marker::PhantomData<fn() -> A>,
}

impl<A, F, Fut> ToolHandler for Typed<A, F>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(ToolCtx, A) -> Fut + Send + Sync,
    Fut: Future<Output = EngineResult<ToolOutput>> + Send + 'static,
{
    fn call(&self, ctx: ToolCtx, args: Value) -> HandlerFuture {
        match serde_json::from_value::<A>(args) {
            Ok(args) => Box::pin((self.f)(ctx, args)),
            Err(e) => Box::pin(std::future::ready(Err(super::validate::deserialize_error(
                &e,
            )))),
        }
    }
}

/// One definition per tool (CONTRACT §5). Built with the chained setters below and added
/// to the registry with `Registry::add`.
#[derive(Clone)]
pub struct ToolDef {
    pub name: &'static str,
    pub family: Family,
    /// Spanish body: "Úsala cuando… NO la uses para… (usa X)". Examples are appended
    /// by the registry when it emits the description (`full_description`).
    pub description: String,
    /// Spanish label shown while the tool runs ("Consultando tus créditos").
    pub label: &'static str,
    pub input_schema: Value,
    pub examples: Vec<Example>,
    pub level: Level,
    pub side_effect: SideEffect,
    pub cost_class: CostClass,
    pub idempotent: bool,
    /// Characters; applied as `min(output_budget, surface cap)`.
    pub output_budget: usize,
    /// Stages where Luna sees the tool, with a priority (lower first).
    pub stages: Vec<(Stage, u8)>,
    pub surfaces: Vec<Surface>,
    /// Row fields that are citable refs/facts.
    pub citations: Vec<&'static str>,
    /// A search returns rows of a set (two worked examples instead of one).
    pub is_search: bool,
    pub requires: Vec<Feature>,
    /// Only owners/admins may call it.
    pub admin_only: bool,
    /// Credits every executed call charges at least (a Search charges 1 anyway); an
    /// API key's budget refuses the call before it runs when this would not fit.
    pub charges_at_least: i64,
    pub handler: Option<Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// A definition whose input schema is derived from `A` (which should carry
    /// `#[serde(deny_unknown_fields)]`). Defaults: level 0, read-only, free,
    /// idempotent, budget 4500, visible on every surface, no stages.
    pub fn new<A: JsonSchema>(name: &'static str, family: Family) -> Self {
        ToolDef {
            name,
            family,
            description: String::new(),
            label: "",
            input_schema: schema::input_schema::<A>(),
            examples: Vec::new(),
            level: Level::L0,
            side_effect: SideEffect::None,
            cost_class: CostClass::Free,
            idempotent: true,
            output_budget: super::TOOL_RESULT_CAP,
            stages: Vec::new(),
            surfaces: vec![Surface::Mcp, Surface::Luna, Surface::Ui],
            citations: vec!["ref"],
            is_search: false,
            requires: Vec::new(),
            admin_only: false,
            charges_at_least: 0,
            handler: None,
        }
    }

    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = text.into();
        self
    }
    pub fn label(mut self, label: &'static str) -> Self {
        self.label = label;
        self
    }
    pub fn example(mut self, note: impl Into<String>, args: Value) -> Self {
        self.examples.push(Example {
            note: note.into(),
            args,
        });
        self
    }
    pub fn level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }
    pub fn side_effect(mut self, side_effect: SideEffect) -> Self {
        self.side_effect = side_effect;
        self
    }
    pub fn cost(mut self, cost: CostClass) -> Self {
        self.cost_class = cost;
        self
    }
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }
    pub fn budget(mut self, chars: usize) -> Self {
        self.output_budget = chars;
        self
    }
    pub fn stage(mut self, stage: Stage, priority: u8) -> Self {
        self.stages.push((stage, priority));
        self
    }
    pub fn surfaces(mut self, surfaces: &[Surface]) -> Self {
        self.surfaces = surfaces.to_vec();
        self
    }
    pub fn citations(mut self, fields: &[&'static str]) -> Self {
        self.citations = fields.to_vec();
        self
    }
    pub fn search(mut self) -> Self {
        self.is_search = true;
        self
    }
    pub fn requires(mut self, feature: Feature) -> Self {
        self.requires.push(feature);
        self
    }
    pub fn admin_only(mut self) -> Self {
        self.admin_only = true;
        self
    }
    pub fn charges_at_least(mut self, credits: i64) -> Self {
        self.charges_at_least = credits;
        self
    }

    /// The smallest charge an executed call makes (the budget preflight's amount).
    pub fn min_charge(&self) -> i64 {
        let search = i64::from(self.cost_class == CostClass::Search);
        self.charges_at_least.max(search)
    }

    /// Sets a handler taking the typed arguments.
    pub fn handler<A, F, Fut>(mut self, f: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolCtx, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = EngineResult<ToolOutput>> + Send + 'static,
    {
        self.handler = Some(Arc::new(Typed {
            f,
            _args: std::marker::PhantomData,
        }));
        self
    }

    /// Sets a handler implementing `ToolHandler` directly (raw JSON arguments).
    pub fn raw_handler(mut self, handler: Arc<dyn ToolHandler>) -> Self {
        self.handler = Some(handler);
        self
    }

    pub fn is_public(&self) -> bool {
        self.surfaces.contains(&Surface::Mcp)
    }

    pub fn read_only(&self) -> bool {
        self.side_effect == SideEffect::None
    }

    /// The description as every surface emits it: the body plus the worked examples,
    /// so the model sees them (it never sees a separate `examples` field).
    pub fn full_description(&self) -> String {
        let mut out = self.description.trim().to_owned();
        if !self.examples.is_empty() {
            out.push_str(if self.examples.len() == 1 {
                "\n\nEjemplo:"
            } else {
                "\n\nEjemplos:"
            });
            for ex in &self.examples {
                out.push_str(&format!(
                    "\n- {}: {}({})",
                    ex.note.trim(),
                    self.name,
                    serde_json::to_string(&ex.args).unwrap_or_default()
                ));
            }
        }
        out
    }

    /// The model's tool definition (OpenAI-compatible `tools[]` entry): name, the
    /// description with its worked examples, and the input schema as `parameters`.
    pub fn model_definition(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.full_description(),
                "parameters": self.input_schema,
            }
        })
    }

    /// What an API key needs to call this tool, from its side effect, family and cost:
    /// reads need nothing; a reveal that spends créditos de contacto needs
    /// `contacts:reveal`; CRM, company and people writes `crm:write`; Cerebro writes
    /// `knowledge:write`; a Cerebro delete its own `knowledge:delete`; anything else that
    /// changes the world (sends, other deletions) is never a key's.
    pub fn key_access(&self) -> KeyAccess {
        match (self.side_effect, self.family) {
            (SideEffect::None, _) => KeyAccess::Read,
            (SideEffect::Write, Family::Context) => KeyAccess::Scope(ApiScope::KnowledgeWrite),
            (SideEffect::Write, Family::Crm | Family::People | Family::Board) => {
                KeyAccess::Scope(ApiScope::CrmWrite)
            }
            (SideEffect::Destructive, Family::Context) => {
                KeyAccess::Scope(ApiScope::KnowledgeDelete)
            }
            (SideEffect::External, _) if self.cost_class == CostClass::Contact => {
                KeyAccess::Scope(ApiScope::ContactsReveal)
            }
            _ => KeyAccess::Never,
        }
    }

    /// MCP annotations derived from the metadata (CONTRACT §5 rule 9).
    pub fn annotations(&self) -> Annotations {
        Annotations {
            read_only: self.side_effect == SideEffect::None,
            destructive: self.side_effect == SideEffect::Destructive,
            idempotent: self.idempotent,
            open_world: self.side_effect == SideEffect::External,
        }
    }
}

/// The four MCP hints, derived, never hand-written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}
