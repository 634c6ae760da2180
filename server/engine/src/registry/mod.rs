//! The tool registry: one definition per tool (CONTRACT §5), the source of the MCP
//! `tools/list`, the model's tool definitions, the UI labels and `docs/TOOLS.md`.
//!
//! A family registers its tools from its own module with one function:
//!
//! ```ignore
//! pub fn register(reg: &mut Registry) {
//!     reg.add(
//!         ToolDef::new::<UsageArgs>("usage", Family::Account)
//!             .label("Consultando tus créditos")
//!             .description("Úsala cuando… NO la uses para… (usa X).")
//!             .example("¿Cuántos créditos me quedan?", json!({}))
//!             .stage(Stage::SinCriterio, 50)
//!             .handler(usage),
//!     );
//! }
//! ```
//! and adds its `register` to `catalog()` below.
//!
//! **Architecture invariant:** every call, whatever the surface, goes through
//! `pipeline::call`: resolve alias → validate → authorise → bind key → read ceiling → execute →
//! charge → budget → envelope → telemetry.

pub mod alias;
pub mod budget;
pub mod ctx;
pub mod def;
pub mod docs;
pub mod idempotency;
pub mod lexicon;
pub mod pipeline;
pub mod policy;
pub mod schema;
pub mod telemetry;
pub mod typed;
pub mod validate;

#[cfg(test)]
mod settle_tests;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;

use crate::base::error::EngineError;

pub use ctx::{ExecMode, ToolCtx};
pub use def::{
    Annotations, CostClass, Family, Feature, KeyAccess, Level, SideEffect, Stage, Surface, ToolDef,
    ToolHandler, ToolOutput,
};
pub use pipeline::{ToolRequest, ToolResponse};

/// Luna's cap on one tool result, in characters (CONTRACT §5 rule 10, §7.3).
pub const TOOL_RESULT_CAP: usize = 4_500;
/// The cap for MCP and UI results, in characters.
pub const WIRE_RESULT_CAP: usize = 50 * 1024;
/// Most tools Luna sees in one stage (CONTRACT §7.4).
pub const MAX_VISIBLE_TOOLS: usize = 12;

/// A registered tool: its definition and its compiled validator.
pub struct ToolEntry {
    pub def: ToolDef,
    validator: jsonschema::Validator,
    order: usize,
}

impl ToolEntry {
    pub fn validate(&self, mut args: Value) -> Result<Value, EngineError> {
        if let Some(prepare) = self.def.prepare {
            prepare(&mut args)?;
        }
        validate::validate(self.def.name, &self.def.input_schema, &self.validator, args)
    }
}

/// How a requested name resolved.
pub struct Resolved<'a> {
    pub entry: &'a ToolEntry,
    pub args: Value,
    /// Set when the caller used a legacy name: (legacy name, note for `next_action`).
    pub alias: Option<(String, String)>,
}

pub struct Registry {
    tools: Vec<ToolEntry>,
    index: HashMap<&'static str, usize>,
    alias_expiry_ms: AtomicI64,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.index.len())
            .finish()
    }
}

impl Registry {
    pub fn new() -> Self {
        Registry {
            tools: Vec::new(),
            index: HashMap::new(),
            alias_expiry_ms: AtomicI64::new(alias::default_expiry_ms()),
        }
    }

    /// Adds a tool. Definitions are code, not input: a duplicate name, a missing
    /// handler or a schema that does not compile panics at start-up (and in the
    /// registry tests, which build the whole catalog).
    pub fn add(&mut self, def: ToolDef) -> &mut Self {
        assert!(
            !self.index.contains_key(def.name),
            "tool {} registered twice",
            def.name
        );
        assert!(def.handler.is_some(), "tool {} has no handler", def.name);
        let validator = match validate::compile(&def.input_schema) {
            Ok(v) => v,
            Err(e) => panic!("tool {} has an invalid input schema: {e}", def.name),
        };
        let order = self.tools.len();
        self.index.insert(def.name, order);
        self.tools.push(ToolEntry {
            def,
            validator,
            order,
        });
        // Stable order: catalog family order, then registration order.
        self.tools.sort_by_key(|t| (t.def.family, t.order));
        self.index = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.def.name, i))
            .collect();
        self
    }

    /// Replaces a registered tool with a stand-in (pipeline tests).
    #[cfg(test)]
    pub(crate) fn replace(&mut self, def: ToolDef) -> &mut Self {
        self.tools.retain(|t| t.def.name != def.name);
        self.index.remove(def.name);
        self.add(def)
    }

    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// All definitions in stable order.
    pub fn all(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.iter().map(|t| &t.def)
    }

    /// Tools visible on a surface, in stable order (the MCP `tools/list` for `Mcp`).
    pub fn list(&self, surface: Surface) -> Vec<&ToolDef> {
        self.all()
            .filter(|d| d.surfaces.contains(&surface))
            .collect()
    }

    /// The tools of `surface` that `caller` may call: what an outside agent lists is
    /// what its key's scopes, its role and its plan let it run (the same
    /// [`policy::authorize`] every call goes through).
    pub fn callable(&self, surface: Surface, caller: &crate::accounts::Caller) -> Vec<&ToolDef> {
        self.list(surface)
            .into_iter()
            .filter(|d| {
                !matches!(
                    policy::authorize(d, caller, surface),
                    policy::Decision::Refuse(_)
                )
            })
            .collect()
    }

    /// The tools Luna sees in a turn: those whose cues the message uses (in stable
    /// order), then the stage's by priority, at most `MAX_VISIBLE_TOOLS` in all. A
    /// person who asks for a note, a suggested edit or their credits gets the tool for
    /// it whatever is on the board (CONTRACT §7.4).
    pub fn for_turn(&self, stage: Stage, message: &str) -> Vec<&ToolDef> {
        let folded = crate::base::catalog::text::fold(message);
        let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
        let mut out: Vec<&ToolDef> = self
            .all()
            .filter(|d| d.surfaces.contains(&Surface::Luna))
            .filter(|d| {
                d.cues
                    .iter()
                    .any(|cue| words.iter().any(|w| w.starts_with(cue)))
            })
            .take(MAX_VISIBLE_TOOLS)
            .collect();
        for d in self.for_stage(stage) {
            if out.len() >= MAX_VISIBLE_TOOLS {
                break;
            }
            if !out.iter().any(|o| o.name == d.name) {
                out.push(d);
            }
        }
        out
    }

    /// The tools Luna sees in a stage: those tagged with it, by priority then stable
    /// order, at most `MAX_VISIBLE_TOOLS`.
    pub fn for_stage(&self, stage: Stage) -> Vec<&ToolDef> {
        let mut tagged: Vec<(u8, usize, &ToolDef)> = self
            .tools
            .iter()
            .enumerate()
            .filter(|(_, t)| t.def.surfaces.contains(&Surface::Luna))
            .filter_map(|(i, t)| {
                t.def
                    .stages
                    .iter()
                    .find(|(s, _)| *s == stage)
                    .map(|(_, p)| (*p, i, &t.def))
            })
            .collect();
        tagged.sort_by_key(|(p, i, _)| (*p, *i));
        tagged
            .into_iter()
            .take(MAX_VISIBLE_TOOLS)
            .map(|(_, _, d)| d)
            .collect()
    }

    /// Sets the release date the legacy-name window (60 days) counts from.
    pub fn set_alias_release_date(&self, date: chrono::NaiveDate) {
        self.alias_expiry_ms
            .store(alias::expiry_ms(date), Ordering::Relaxed);
    }

    pub fn alias_expiry_ms(&self) -> i64 {
        self.alias_expiry_ms.load(Ordering::Relaxed)
    }

    /// Resolves a requested name for a surface: a tool, a legacy alias (translated
    /// arguments, or `UNKNOWN_TOOL` naming the replacement once expired), a deleted
    /// name or an unknown one.
    pub fn resolve(
        &self,
        name: &str,
        args: Value,
        surface: Surface,
        now_ms: i64,
    ) -> Result<Resolved<'_>, EngineError> {
        let visible = |e: &ToolEntry| e.def.surfaces.contains(&surface);
        let unknown = || {
            alias::unknown_tool(
                name,
                self.list(surface)
                    .iter()
                    .map(|d| d.name.to_owned())
                    .collect(),
            )
        };
        if let Some(entry) = self.get(name) {
            return if visible(entry) {
                Ok(Resolved {
                    entry,
                    args,
                    alias: None,
                })
            } else {
                Err(unknown())
            };
        }
        if alias::is_deleted(name) {
            return Err(alias::deleted_tool(name));
        }
        // `driftless_<tool>` / `brein_<tool>` for a public tool, or a renamed/merged
        // name with or without a brand prefix.
        let (target, how) = match alias::strip_brand(name).and_then(|b| self.get(b)) {
            Some(entry) if entry.def.is_public() => (entry.def.name, alias::Translate::Same),
            _ => match alias::legacy(name) {
                Some(l) => (l.target, l.translate),
                None => return Err(unknown()),
            },
        };
        let expiry = self.alias_expiry_ms();
        if now_ms >= expiry {
            return Err(alias::expired_alias(name, target));
        }
        let Some(entry) = self.get(target).filter(|e| visible(e)) else {
            return Err(unknown());
        };
        Ok(Resolved {
            entry,
            args: alias::translate(how, args),
            alias: Some((
                name.to_owned(),
                alias::replacement_note(name, target, how, expiry),
            )),
        })
    }
}
