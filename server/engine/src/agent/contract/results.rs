//! How a turn reads a tool's result: the citable refs and figures it holds (`harvest`,
//! into the narration's `KnownRefs`, with figures formatted for the person by
//! `format_value`) and the line the chat shows while and after it runs (`label_for`,
//! `summary_of`). Turns and research runs share them.

use luna_protocol::tool::Envelope;
use serde_json::Value;

use crate::agent::contract::narration::{KnownRefs, REF_KINDS};
use crate::market::types::{CountArgs, MarketKind, SearchArgs};

/// Formats a citable value for the person: integers with thousands separators,
/// amounts as MXN.
pub fn format_value(field: &str, value: &Value) -> Option<String> {
    match value {
        Value::Number(n) if field.contains("amount") || field.contains("monto") => {
            n.as_f64().map(|f| format!("${}", group_thousands(f, 2)))
        }
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Some(group_thousands(i as f64, 0)),
            (None, Some(f)) => Some(group_thousands(f, 2)),
            _ => None,
        },
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

fn group_thousands(value: f64, decimals: usize) -> String {
    let formatted = format!("{:.*}", decimals, value.abs());
    let (int, frac) = formatted
        .split_once('.')
        .map_or((formatted.as_str(), None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if value < 0.0 { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Records every citable object of a tool result under its ref (keeping the first
/// label seen), and every citable field as `evidence:<call>.<row>.<field>`. Returns how
/// many refs were new.
pub fn harvest(
    known: &mut KnownRefs,
    call: &str,
    citations: &[&str],
    envelope: &Envelope,
) -> usize {
    let before = known.len();
    known.insert(format!("evidence:{call}.shown"), envelope.shown.to_string());
    for (i, row) in envelope.results.iter().enumerate() {
        if let Some((kind, _)) = row.ref_.split_once(':') {
            // The first label an object had in this turn stays (a company found by a
            // search keeps its name when a later screening row labels it by RFC).
            if REF_KINDS.contains(&kind) && known.label(&row.ref_).is_none() {
                known.insert(row.ref_.clone(), row.ref_label.clone());
            }
        }
        for field in citations.iter().filter(|f| **f != "ref") {
            if let Some(text) = row.fields.get(*field).and_then(|v| format_value(field, v)) {
                known.insert(format!("evidence:{call}.{i}.{field}"), text);
            }
        }
    }
    known.len() - before
}

/// The line the person reads while a tool runs, in product language:
/// "Buscando proveedores en Jalisco" rather than the tool's generic label. A search or
/// count's arguments are read through the tool's own arguments type; arguments that
/// do not decode (the call will be refused) get the plain verb.
pub fn label_for(tool: &str, generic: &str, args: &Value) -> String {
    let (verb, asked) = match tool {
        "market_search" => (
            "Buscando",
            serde_json::from_value::<SearchArgs>(args.clone())
                .ok()
                .map(|a| (Some(a.kind), a.filters.state)),
        ),
        "market_count" => (
            "Contando",
            serde_json::from_value::<CountArgs>(args.clone())
                .ok()
                .map(|a| (a.kind, a.filters.state)),
        ),
        _ => return generic.to_owned(),
    };
    let (kind, state) = asked.unwrap_or((None, None));
    let kind = match kind.unwrap_or(MarketKind::Suppliers) {
        MarketKind::Opportunities => "licitaciones",
        MarketKind::Awards => "adjudicaciones",
        MarketKind::Permits => "registros",
        MarketKind::Risks => "marcas de riesgo",
        MarketKind::Suppliers => "proveedores",
    };
    match state {
        Some(state) => format!("{verb} {kind} en {state}"),
        None => format!("{verb} {kind}"),
    }
}

/// The tool line's summary: how many results (and whether there are more), or the
/// typed error's message.
pub fn summary_of(response: &crate::registry::ToolResponse) -> String {
    match &response.outcome {
        Ok(env) if env.results.is_empty() => "Sin resultados".to_owned(),
        Ok(env) => {
            let more = if env.has_more { " (hay más)" } else { "" };
            let noun = if env.shown == 1 {
                "resultado"
            } else {
                "resultados"
            };
            format!("{} {noun}{more}", env.shown)
        }
        Err(e) => e.message.clone(),
    }
}
