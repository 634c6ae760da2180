//! Requests answered with records, not with a selection of companies (stage 4b,
//! `super::super::kinds`): rankings of Adjudicaciones (`market_aggregate` grouped by
//! supplier, buyer, state or year) and searches of Licitaciones or Adjudicaciones with
//! their constraints. The board is never touched: the answer is the narration, every
//! figure anchored to the tool's rows.

use serde_json::{json, Map, Value};

use super::{call, calls_of, final_, ok_rows, refused, LocalDirector};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::intent::TurnIntent;
use crate::agent::director::grammar::Request;
use crate::agent::director::kinds::{Ask, RecordKind};

/// Groups a ranking shows.
const RANK_LIMIT: u32 = 5;
/// The largest ranking a person can ask for by number.
const RANK_MAX: u32 = 50;
/// Records a search of Licitaciones or Adjudicaciones reads.
const RECORD_LIMIT: u32 = 10;

/// The filters of a records request: the giro, place and buyer the grammar read, and
/// Two to five states named: `states[]` (one state goes in `filters.state`).
fn with_states(args: &mut Value, req: &Request) {
    if req.states.len() >= 2 {
        let names: Vec<&str> = req.states.iter().map(|(n, _)| n.as_str()).collect();
        args["states"] = json!(names);
    }
}

/// the constraints `ask` read, as far as `kind` admits them.
pub(crate) fn record_filters(req: &Request, ask: &Ask, kind: RecordKind) -> Map<String, Value> {
    let mut f = Map::new();
    if kind == RecordKind::Risks {
        // The risk lists know RFCs, kinds of mark and dates; nothing else.
        if let Some(m) = ask.mark_kind {
            f.insert("mark_kind".into(), json!(m));
        }
        for (key, d) in [("date_from", &ask.date_from), ("date_to", &ask.date_to)] {
            if let Some(d) = d {
                f.insert(key.into(), json!(d));
            }
        }
        return f;
    }
    if let Some((key, _)) = &req.giro {
        f.insert("giro".into(), json!(key));
    }
    if req.states.len() < 2 {
        if let Some((name, _)) = &req.state {
            f.insert("state".into(), json!(name));
        }
    }
    if let Some(buyer) = req.buyers.first() {
        f.insert("buyer".into(), json!(buyer));
    }
    if kind != RecordKind::Suppliers {
        if let Some(v) = ask.amount_min {
            f.insert("amount_min".into(), json!(v));
        }
        if let Some(v) = ask.amount_max {
            f.insert("amount_max".into(), json!(v));
        }
        if let Some(p) = ask.procedure {
            f.insert("procedure".into(), json!(p));
        }
    }
    if kind == RecordKind::Opportunities && ask.active {
        f.insert("status".into(), json!("active"));
    }
    if let Some(d) = &ask.date_from {
        f.insert("date_from".into(), json!(d));
    }
    if let Some(d) = &ask.date_to {
        f.insert("date_to".into(), json!(d));
    }
    f
}

/// Adds what `ask` read to a supplier search's arguments: size, time window, «top N».
pub(crate) fn with_ask(mut args: Value, ask: &Ask) -> Value {
    if let Some(filters) = args.get_mut("filters").and_then(Value::as_object_mut) {
        if let Some(s) = ask.size_band {
            filters.insert("size_band".into(), json!(s));
        }
        if let Some(d) = &ask.date_from {
            filters.insert("date_from".into(), json!(d));
        }
        if let Some(d) = &ask.date_to {
            filters.insert("date_to".into(), json!(d));
        }
    }
    args
}

/// What the records are, in words, for the narration.
fn noun(kind: RecordKind, active: bool) -> &'static str {
    match (kind, active) {
        (RecordKind::Opportunities, true) => "licitaciones abiertas",
        (RecordKind::Opportunities, false) => "licitaciones",
        (RecordKind::Risks, _) => "marcas de riesgo",
        _ => "adjudicaciones",
    }
}

/// A records query the market tools refused (a typed error: a bad period, amount or
/// buyer): Luna says she could not read them, never that there were none.
fn could_not_read(what: &str) -> ModelStep {
    final_(
        TurnIntent::Responder {},
        format!("No pude consultar {what} con esos criterios: alguno no es válido (revisa el periodo, los montos o el comprador) y lo intento de nuevo."),
    )
}

/// One ranked group: a company by its anchor (its label already says its
/// adjudicaciones and amount), another group by its key with its figures.
fn group_line(call: &str, i: usize, row: &Value) -> String {
    let reference = row.get("ref").and_then(Value::as_str).unwrap_or("");
    if reference.starts_with("company:") {
        format!("[[{reference}]]")
    } else {
        format!(
            "[[evidence:{call}.{i}.key]] con [[evidence:{call}.{i}.amount_mxn]] en [[evidence:{call}.{i}.awards]] adjudicaciones"
        )
    }
}

impl LocalDirector {
    /// A ranking or a records search, or `None` when the request wants companies.
    pub(super) fn records(
        &self,
        input: &ModelInput,
        req: &Request,
        ask: &Ask,
    ) -> Option<ModelStep> {
        let t = &input.transcript;
        if let Some(group_by) = ask.rank {
            // Free text has no index in Adjudicaciones: a ranking groups by giro only.
            let filters = record_filters(req, ask, RecordKind::Awards);
            // «top 7», «los 3 proveedores que más…»: the size asked, else five.
            let asked = ask.top.or(req.quantity).map(|n| n.clamp(1, RANK_MAX));
            let limit = asked.unwrap_or(RANK_LIMIT);
            let mut args = json!({"filters": filters, "group_by": group_by, "limit": limit});
            // «sumando NL y Coahuila»: any of the states named.
            with_states(&mut args, req);
            return Some(match calls_of(t, "market_aggregate").first() {
                None => ModelStep::Tools(vec![call("market_aggregate", args)]),
                Some(ex) if refused(ex) => could_not_read("adjudicaciones"),
                Some(ex) => {
                    let rows = ok_rows(ex);
                    if rows.is_empty() {
                        final_(
                            TurnIntent::Responder {},
                            "No encontré adjudicaciones con esos criterios; prueba con otro giro, estado o comprador.",
                        )
                    } else {
                        let c = &ex.call;
                        let parts: Vec<String> = rows
                            .iter()
                            .take(asked.map_or(3, |n| n.min(10) as usize))
                            .enumerate()
                            .map(|(i, row)| group_line(c, i, row))
                            .collect();
                        final_(
                            TurnIntent::Responder {},
                            format!("Por monto adjudicado, encabezan: {}.", parts.join("; ")),
                        )
                    }
                }
            });
        }
        if ask.kind == RecordKind::Suppliers {
            return None;
        }
        let filters = record_filters(req, ask, ask.kind);
        let what = noun(ask.kind, ask.active);
        // «¿cuántas adjudicaciones…?»: the exact figure (free text alone has no count).
        let risks = ask.kind == RecordKind::Risks;
        if req.asks_count && (risks || req.query.is_none() || req.giro.is_some()) {
            return Some(match calls_of(t, "market_count").first() {
                None => {
                    let mut args = json!({"kind": ask.kind.key(), "filters": filters});
                    if !risks {
                        with_states(&mut args, req);
                    }
                    ModelStep::Tools(vec![call("market_count", args)])
                }
                Some(ex) if refused(ex) => could_not_read(what),
                Some(ex) if ok_rows(ex).is_empty() => final_(
                    TurnIntent::Responder {},
                    format!("No pude contar {what} con esos criterios; prueba con otro giro, estado, comprador o periodo."),
                ),
                Some(ex) => final_(
                    TurnIntent::Responder {},
                    format!(
                        "Hay [[evidence:{c}.0.total]] {what} con esos criterios.",
                        c = ex.call
                    ),
                ),
            });
        }
        Some(match calls_of(t, "market_search").first() {
            None => {
                let mut args = json!({"kind": ask.kind.key(), "filters": filters, "limit": RECORD_LIMIT});
                if !risks {
                    with_states(&mut args, req);
                }
                if let Some(q) = req.query.as_ref().filter(|_| req.giro.is_none() && !risks) {
                    args["query"] = json!(q);
                }
                ModelStep::Tools(vec![call("market_search", args)])
            }
            Some(ex) if refused(ex) => could_not_read(what),
            Some(ex) if ok_rows(ex).is_empty() => final_(
                TurnIntent::Responder {},
                format!("No encontré {what} con esos criterios; prueba con otro giro, estado, comprador o periodo."),
            ),
            Some(ex) => final_(
                TurnIntent::Responder {},
                format!(
                    "Encontré [[evidence:{c}.shown]] {what} con esos criterios; las más recientes están en la lista de resultados del paso.",
                    c = ex.call
                ),
            ),
        })
    }
}
