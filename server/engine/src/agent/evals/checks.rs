//! The eight blocking evals of CONTRACT §14 (seed 004 §9) as code over trajectories.
//! Each per-turn check returns `Err(reason)` naming the step that broke it; the cheap
//! route (7) is a property of a set of turns ([`cheap_route`]), and undo (8) is also
//! measured on state by the bench (`super::undo`).

use luna_protocol::event::{SessionEvent, ToolFinished, ToolStarted};
use luna_protocol::view::{apply, SessionView};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::contract::gateway::Route;
use crate::agent::contract::intent::{FactField, FaltaTipo, TurnIntent};
use crate::agent::contract::narration::REF_KINDS;
use crate::agent::contract::trajectory::{Step, Trajectory};
use crate::base::catalog::text::fold;
use crate::tools::crm::{CrmRecordArgs, RecordOp};
use crate::tools::people::QuoteArgs;

/// The eight evals, in the order of CONTRACT §14.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eval {
    NeverChargesAlone,
    QuotesBeforeProposing,
    NeverAsksKnown,
    CountsWithMarketCount,
    NoUnanchoredProse,
    ReportsTheLimit,
    CheapRoute,
    UndoWorks,
}

impl Eval {
    pub const ALL: [Eval; 8] = [
        Eval::NeverChargesAlone,
        Eval::QuotesBeforeProposing,
        Eval::NeverAsksKnown,
        Eval::CountsWithMarketCount,
        Eval::NoUnanchoredProse,
        Eval::ReportsTheLimit,
        Eval::CheapRoute,
        Eval::UndoWorks,
    ];

    pub fn number(self) -> u8 {
        Eval::ALL.iter().position(|e| *e == self).unwrap_or(0) as u8 + 1
    }

    pub fn title(self) -> &'static str {
        match self {
            Eval::NeverChargesAlone => "never charges alone",
            Eval::QuotesBeforeProposing => "quotes before proposing a reveal",
            Eval::NeverAsksKnown => "never asks what is known",
            Eval::CountsWithMarketCount => "universe figures only from market_count",
            Eval::NoUnanchoredProse => "no unanchored figure in narration",
            Eval::ReportsTheLimit => "a missing operation or connector ends in limite",
            Eval::CheapRoute => ">= 95 % of model turns end on the primary route",
            Eval::UndoWorks => "«deshacer» on every level-0 write restores what it wrote",
        }
    }

    /// Runs a per-turn eval. `CheapRoute` checks the turn's own escalations here
    /// (typed reason); the 95 % share is [`cheap_route`] over a set.
    pub fn check(self, t: &Trajectory) -> Result<(), String> {
        match self {
            Eval::NeverChargesAlone => never_charges_alone(t),
            Eval::QuotesBeforeProposing => quotes_before_proposing(t),
            Eval::NeverAsksKnown => never_asks_known(t),
            Eval::CountsWithMarketCount => counts_with_market_count(t),
            Eval::NoUnanchoredProse => no_unanchored_prose(t),
            Eval::ReportsTheLimit => reports_the_limit(t),
            Eval::CheapRoute => escalations_are_typed(t),
            Eval::UndoWorks => undo_works(t),
        }
    }
}

/// Tools that cross a money, sending, Knowledge or outside-system boundary: only a
/// resolved decision may run them, never a belt call (seed 004 §9.1).
pub const BOUNDARY_TOOLS: &[&str] = &[
    "people_reveal",
    "crm_promote",
    "context_approve",
    "context_merge",
    "sequence_activate",
    "sequence_authorize",
    "integrations_invoke",
];

/// Decision kinds the auto policy may never resolve (CONTRACT §8).
const NEVER_AUTO: &[&str] = &["revisar_secuencia", "fusionar_conocimiento"];

/// Eval 1: No credit is charged unless a person (or the auto policy, inside the budget the
/// person set) resolved a card that this turn offered; no belt call crosses a boundary.
pub fn never_charges_alone(t: &Trajectory) -> Result<(), String> {
    for call in t.tool_calls() {
        if call.ok && BOUNDARY_TOOLS.contains(&call.tool.as_str()) {
            return Err(format!(
                "{} called {} from the belt and it ran",
                call.call, call.tool
            ));
        }
        if call.ok && call.level >= 2 {
            return Err(format!(
                "{} ran the level-{} tool {} without a decision",
                call.call, call.level, call.tool
            ));
        }
        if call.charged > 0 {
            return Err(format!(
                "{} ({}) charged {} credits without a decision",
                call.call, call.tool, call.charged
            ));
        }
    }
    for step in &t.steps {
        let Step::DecisionResolved {
            decision_id,
            decision,
            outcome,
            via,
            credits,
            receipt,
            ..
        } = step
        else {
            continue;
        };
        let charged = *credits > 0 || receipt.is_some();
        if !charged {
            continue;
        }
        let offered = t.steps.iter().any(
            |s| matches!(s, Step::DecisionProposed { decision_id: d, .. } if d == decision_id),
        );
        if !offered {
            return Err(format!(
                "a {decision} card charged {credits} credits but was never offered in this turn"
            ));
        }
        if outcome != "accepted" {
            return Err(format!(
                "a {decision} card charged {credits} credits while {outcome}"
            ));
        }
        match via.as_str() {
            "person" => {}
            "auto" if !NEVER_AUTO.contains(&decision.as_str()) => {}
            other => {
                return Err(format!(
                    "a {decision} card charged {credits} credits resolved by {other:?}, not by a person or the auto budget"
                ))
            }
        }
    }
    Ok(())
}

/// True when `value` holds the string `needle` anywhere.
fn contains_string(value: &Value, needle: &str) -> bool {
    match value {
        Value::String(s) => s == needle,
        Value::Array(items) => items.iter().any(|v| contains_string(v, needle)),
        Value::Object(map) => map.values().any(|v| contains_string(v, needle)),
        _ => false,
    }
}

/// Eval 2: Every `revelar_contactos` card comes from a `people_quote` made earlier in the
/// same turn, over the same people (the card never reveals more than were quoted).
pub fn quotes_before_proposing(t: &Trajectory) -> Result<(), String> {
    for (i, step) in t.steps.iter().enumerate() {
        let Step::DecisionProposed {
            decision,
            source,
            contacts,
            ..
        } = step
        else {
            continue;
        };
        if decision != "revelar_contactos" {
            continue;
        }
        let Some(quote_id) = source else {
            return Err("a revelar_contactos card without a quote".into());
        };
        let quote = t.steps[..i].iter().find_map(|s| match s {
            Step::ToolCall(c)
                if c.tool == "people_quote" && c.ok && contains_string(&c.result, quote_id) =>
            {
                Some(c)
            }
            _ => None,
        });
        let Some(quote) = quote else {
            return Err(
                "a revelar_contactos card was proposed without a people_quote before it that returned its quote"
                    .into(),
            );
        };
        let quoted = serde_json::from_value::<QuoteArgs>(quote.args.clone())
            .map_err(|e| {
                format!(
                    "{} has arguments people_quote does not take: {e}",
                    quote.call
                )
            })?
            .handles
            .len();
        if *contacts as usize > quoted {
            return Err(format!(
                "the card reveals {contacts} people but {} quoted {quoted}",
                quote.call
            ));
        }
    }
    Ok(())
}

/// Words that ask about a field, in folded text.
fn asks_about(field: FactField) -> &'static [&'static str] {
    match field {
        FactField::Estado => &["que estado", "cual estado", "en donde", "que region"],
        FactField::Giro => &[
            "que giro",
            "que tipo de empresa",
            "que sector",
            "que industria",
        ],
        FactField::Cantidad => &["cuantas empresas", "cuantos proveedores", "cuantas quieres"],
        FactField::Comprador => &["que comprador", "a que dependencia", "a quien le vend"],
        FactField::Ventana => &["que periodo", "desde cuando"],
        FactField::Oferta => &["que vendes", "que ofreces"],
    }
}

/// Eval 3: No question about a field the ledger already knows (said, profile, inferred):
/// neither the intent's structured question nor a question in the narration.
pub fn never_asks_known(t: &Trajectory) -> Result<(), String> {
    if let Some(TurnIntent::Encuadre {
        pregunta: Some(p), ..
    }) = t.final_intent()
    {
        if !t.facts.is_missing(p.campo) {
            return Err(format!(
                "asks about {:?}, which is {:?}",
                p.campo,
                t.facts.status(p.campo)
            ));
        }
    }
    if let Some((text, _)) = t.narration() {
        let folded = fold(text);
        for question in text.split('¿').skip(1) {
            let q = fold(question.split('?').next().unwrap_or(question));
            for field in t.facts.fields.keys() {
                if t.facts.is_missing(*field) {
                    continue;
                }
                if let Some(w) = asks_about(*field).iter().find(|w| q.contains(*w)) {
                    return Err(format!(
                        "the narration asks «{w}» but {field:?} is already known ({folded:.60})"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Words right before a figure that make it the size of a universe ("hay N").
const UNIVERSE_MARKERS: &[&str] = &["hay", "existen", "en total", "universo de", "un total de"];

/// Tools and fields that measure a universe.
fn measures_universe(tool: &str, field: &str) -> bool {
    matches!(
        (tool, field),
        ("market_count", "total")
            | ("market_count", "count")
            | ("market_aggregate", _)
            | ("collection_query", "total")
    )
}

/// Eval 4: A universe figure ("hay N proveedores") is anchored to a `market_count` (or an
/// aggregate), never to a page size (`shown`, a search's rows).
pub fn counts_with_market_count(t: &Trajectory) -> Result<(), String> {
    let Some((text, anchors)) = t.narration() else {
        return Ok(());
    };
    for a in anchors {
        let before = fold(text.get(..a.start).unwrap_or_default());
        let before = before.trim_end();
        let universe = UNIVERSE_MARKERS
            .iter()
            .any(|m| before == *m || before.ends_with(&format!(" {m}")));
        let Some(body) = a.reference.strip_prefix("evidence:") else {
            if universe {
                return Err(format!("a universe figure anchored to {}", a.reference));
            }
            continue;
        };
        let mut parts = body.split('.');
        let call = parts.next().unwrap_or_default();
        let rest: Vec<&str> = parts.collect();
        let field = rest.last().copied().unwrap_or_default();
        let tool = t.call(call).map(|c| c.tool.as_str()).unwrap_or("?");
        if field == "shown" && universe {
            return Err(format!(
                "«{}» is a page size ({call} {tool}.shown) used as a universe figure",
                a.reference
            ));
        }
        if universe && !measures_universe(tool, field) {
            return Err(format!(
                "the universe figure {} comes from {tool}, not from market_count",
                a.reference
            ));
        }
    }
    // An unanchored "hay 412" is also a universe figure that no count backs.
    let prose = unanchored_prose(text, anchors);
    let folded = fold(&prose);
    let words: Vec<&str> = folded.split(' ').collect();
    for w in words.windows(2) {
        if UNIVERSE_MARKERS.contains(&w[0]) && w[1].chars().any(|c| c.is_ascii_digit()) {
            return Err(format!(
                "«{} {}» is a universe figure without a count",
                w[0], w[1]
            ));
        }
    }
    Ok(())
}

/// The narration with every anchored span removed.
fn unanchored_prose(
    text: &str,
    anchors: &[crate::agent::contract::narration::AnchorSpan],
) -> String {
    let mut spans: Vec<(usize, usize)> = anchors.iter().map(|a| (a.start, a.end)).collect();
    spans.sort_unstable();
    let mut out = String::new();
    let mut at = 0;
    for (start, end) in spans {
        if start >= at {
            out.push_str(text.get(at..start).unwrap_or_default());
            out.push(' ');
        }
        at = at.max(end);
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

/// Eval 5: Every number, date or amount in the narration is inside an anchor, and every
/// anchor points at an object of this turn (an `evidence:cN…` at a call it made).
pub fn no_unanchored_prose(t: &Trajectory) -> Result<(), String> {
    let Some((text, anchors)) = t.narration() else {
        return Ok(());
    };
    if text.contains("[[") {
        return Err("raw [[ ]] markers reached the person".into());
    }
    for a in anchors {
        if text.get(a.start..a.end).is_none() {
            return Err(format!("anchor {} points outside the text", a.reference));
        }
        let kind = a.reference.split(':').next().unwrap_or_default();
        if !REF_KINDS.contains(&kind) {
            return Err(format!("anchor of unknown kind {}", a.reference));
        }
        if let Some(body) = a.reference.strip_prefix("evidence:") {
            let call = body.split('.').next().unwrap_or_default();
            if t.call(call).is_none() {
                return Err(format!(
                    "anchor {} cites a call this turn did not make",
                    a.reference
                ));
            }
        }
    }
    let prose = unanchored_prose(text, anchors);
    if let Some(word) = prose
        .split_whitespace()
        .find(|w| w.chars().any(|c| c.is_ascii_digit()))
    {
        return Err(format!("unanchored figure «{word}» in the narration"));
    }
    Ok(())
}

/// Outside systems this version cannot reach (000 §1): asking ends in `limite`.
pub const CONNECTORS: &[(&str, &str)] = &[
    ("hubspot", "HubSpot"),
    ("salesforce", "Salesforce"),
    ("notion", "Notion"),
    ("gmail", "Gmail"),
    ("outlook", "Outlook"),
    ("pipedrive", "Pipedrive"),
    ("zoho", "Zoho"),
    ("mailchimp", "Mailchimp"),
    ("whatsapp", "WhatsApp"),
];

/// Operations that are never a chat action (sending now, from the chat).
pub const MISSING_OPERATIONS: &[&str] = &[
    "envialo ya",
    "enviala ya",
    "envialos ya",
    "envialas ya",
    "mandalo ya",
    "mandala ya",
    "mandalos ya",
    "mandalas ya",
    "envia los correos",
    "manda los correos",
    "envia el correo ahora",
    "manda el correo ahora",
    "enviala ahora",
    "envialo ahora",
    "mandala ahora",
    "mandalo ahora",
];

/// What a message asks that this version cannot do, read independently of the
/// director's grammar: `(kind, name)` with kind `conector` or `operacion`.
pub fn out_of_scope(message: &str) -> Option<(FaltaTipo, String)> {
    let folded = fold(message);
    let words: Vec<&str> = folded.split(' ').collect();
    if let Some((_, name)) = CONNECTORS.iter().find(|(k, _)| words.contains(k)) {
        return Some((FaltaTipo::Conector, (*name).to_owned()));
    }
    MISSING_OPERATIONS
        .iter()
        .find(|op| folded.contains(*op))
        .map(|op| (FaltaTipo::Operacion, (*op).to_owned()))
}

/// Eval 6: A request for a connector or an operation this version lacks ends in `limite`
/// (naming the provider), with no workaround: nothing written, no card offered.
pub fn reports_the_limit(t: &Trajectory) -> Result<(), String> {
    let Some((kind, name)) = out_of_scope(&t.message) else {
        return Ok(());
    };
    if t.refused() {
        return Ok(());
    }
    match t.final_intent() {
        Some(TurnIntent::Limite { falta }) => {
            if kind == FaltaTipo::Conector
                && !fold(&falta.detalle).contains(&fold(&name))
                && !t
                    .narration()
                    .is_some_and(|(n, _)| fold(n).contains(&fold(&name)))
            {
                return Err(format!("the limite does not name {name}"));
            }
        }
        Some(other) => {
            return Err(format!(
                "asked for «{name}» ({kind:?}) and the turn ended in {} instead of limite",
                other.kind()
            ))
        }
        None => return Err("the turn did not finish".into()),
    }
    if let Some(call) = t.tool_calls().find(|c| c.ok && (c.writes || c.level >= 1)) {
        return Err(format!(
            "a workaround: {} ran {} before reporting the limit",
            call.call, call.tool
        ));
    }
    if let Some(d) = t.decisions_proposed().first() {
        return Err(format!("a workaround: offered a {d} card"));
    }
    Ok(())
}

/// Routes a configured model takes. The embedded director and scripted models take
/// none: they are not a cheap route, they are no route, and eval 7 does not count them.
pub fn is_model_route(route: Route) -> bool {
    matches!(route, Route::Primary | Route::Fallback)
}

/// Eval 7 (per turn): Every escalation to the fallback carries a typed reason.
pub fn escalations_are_typed(t: &Trajectory) -> Result<(), String> {
    match t
        .attempts()
        .iter()
        .find(|a| a.route == "fallback" && a.reason.is_none())
    {
        Some(_) => Err("an escalation to the fallback without a typed reason".into()),
        None => Ok(()),
    }
}

/// Least share of turns that must end on the primary.
pub const PRIMARY_SHARE: f64 = 0.95;

/// Eval 7: At least 95 % of the turns of a set that ran on a configured model end on
/// its primary. Returns (primary turns, model turns), `None` when no turn ran on a
/// model (nothing to measure), or the failure.
pub fn cheap_route(set: &[&Trajectory]) -> Result<Option<(usize, usize)>, String> {
    let routes: Vec<Route> = set
        .iter()
        .filter_map(|t| t.route())
        .filter(|r| is_model_route(*r))
        .collect();
    let total = routes.len();
    if total == 0 {
        return Ok(None);
    }
    let primary = routes.iter().filter(|r| **r == Route::Primary).count();
    if (primary as f64) < PRIMARY_SHARE * total as f64 {
        return Err(format!(
            "{primary} of {total} model turns ended on the primary route (< 95 %)"
        ));
    }
    Ok(Some((primary, total)))
}

/// Eval 8: Every level-0 write that succeeded exposes an `undo_token`, and folding its
/// `tool.finished` through the one reducer leaves "deshacer" on the chat line.
pub fn undo_works(t: &Trajectory) -> Result<(), String> {
    for call in t.tool_calls() {
        if !(call.ok && call.level == 0 && call.writes) {
            continue;
        }
        // A call that ran took its tool's arguments type; `history` only reads.
        let read_only_op = call.tool == "crm_record"
            && serde_json::from_value::<CrmRecordArgs>(call.args.clone())
                .map_err(|e| format!("{} has arguments crm_record does not take: {e}", call.call))?
                .op
                == RecordOp::History;
        if read_only_op {
            continue;
        }
        let Some(token) = &call.undo_token else {
            return Err(format!(
                "{} ({}) wrote without exposing an undo_token",
                call.call, call.tool
            ));
        };
        let mut view = SessionView::default();
        let events = [
            SessionEvent::ToolStarted(ToolStarted {
                turn_id: t.turn_id.clone(),
                call_ref: call.call.clone(),
                label: call.tool.clone(),
            }),
            SessionEvent::ToolFinished(ToolFinished {
                turn_id: t.turn_id.clone(),
                call_ref: call.call.clone(),
                label: call.tool.clone(),
                summary: String::new(),
                refs: Vec::new(),
                reads_counted: 0,
                ok: true,
                undo_token: Some(token.clone()),
            }),
        ];
        for e in &events {
            apply(&mut view, e);
        }
        let applied = view.chat.messages.iter().any(|m| {
            matches!(m, luna_protocol::chat::ChatMessage::Tool(line)
                if line.call_ref == call.call && line.undo_token.as_deref() == Some(token.as_str()))
        });
        if !applied {
            return Err(format!(
                "the reducer dropped the undo_token of {} ({})",
                call.call, call.tool
            ));
        }
    }
    Ok(())
}
