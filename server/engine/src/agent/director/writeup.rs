//! The deterministic write-up of a research run: its result as `[[kind:id]]` markup
//! over what the run read (its tool calls as the model sees them, `Exchange`s). The
//! local director writes with it when it plays the model, and a run falls back to it
//! when its model steps are used up or its model does not answer. The markup is then
//! resolved like any narration (`turn::narration`), so no figure escapes its anchor.

use serde_json::Value;

use crate::agent::contract::gateway::Exchange;

/// The result rows of a call (`[]` for an error).
pub fn rows(e: &Exchange) -> &[Value] {
    e.result
        .get("results")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn ok(e: &Exchange) -> bool {
    e.result.get("error").is_none()
}

fn ref_of(row: &Value) -> Option<&str> {
    row.get("ref").and_then(Value::as_str)
}

fn find<'a>(t: &'a [Exchange], tool: &str, group_by: Option<&str>) -> Option<&'a Exchange> {
    t.iter().find(|e| {
        e.tool.name == tool
            && ok(e)
            && group_by
                .is_none_or(|g| e.tool.args.get("group_by").and_then(Value::as_str) == Some(g))
    })
}

/// What the risk screening found (`market_screen`), or `None` for a failed call.
pub fn risk_sentence(e: &Exchange) -> Option<String> {
    if !ok(e) {
        return None;
    }
    let flagged: Vec<String> = rows(e)
        .iter()
        .filter(|r| r.get("risk_level").and_then(Value::as_str) == Some("con_marcas"))
        .filter_map(ref_of)
        .map(|r| format!("[[{r}]]"))
        .collect();
    Some(if flagged.is_empty() {
        format!(
            "Revisé [[evidence:{}.shown]] de los principales: ninguno tiene marcas de riesgo vigentes.",
            e.call
        )
    } else {
        format!(
            "Revisé [[evidence:{}.shown]] de los principales; con marcas de riesgo vigentes: {}.",
            e.call,
            flagged.join(", ")
        )
    })
}

/// What the segment comparison found: the state against the country
/// (`market_compare`), or where most is awarded (`market_aggregate` by state).
pub fn segment_sentence(e: &Exchange) -> Option<String> {
    let rows = rows(e);
    let c = &e.call;
    match e.tool.name.as_str() {
        "market_compare" if rows.len() >= 2 => {
            let state = e
                .tool
                .args
                .pointer("/segments/0/label")
                .and_then(Value::as_str)
                .unwrap_or("el estado");
            Some(format!(
                "En {state} hubo [[evidence:{c}.0.awards]] Adjudicaciones por [[evidence:{c}.0.amount_mxn]], contra [[evidence:{c}.1.awards]] en todo el país."
            ))
        }
        "market_aggregate" if !rows.is_empty() => Some(format!(
            "Donde más se adjudica: [[{}]] con [[evidence:{c}.0.awards]] Adjudicaciones.",
            ref_of(&rows[0])?
        )),
        _ => None,
    }
}

/// The result: who leads, how big the field is, risks and segments, each figure an
/// anchor into what the run read. `criterion` is the run's criterion in words.
pub fn markup(t: &[Exchange], criterion: &str) -> String {
    let mut out = String::new();
    match find(t, "market_aggregate", Some("supplier")).filter(|e| !rows(e).is_empty()) {
        Some(agg) => {
            let rows = rows(agg);
            out.push_str(&format!(
                "Por monto, domina [[{}]]: [[evidence:{c}.0.awards]] Adjudicaciones por [[evidence:{c}.0.amount_mxn]].",
                ref_of(&rows[0]).unwrap_or_default(),
                c = agg.call
            ));
            let others: Vec<String> = rows
                .iter()
                .skip(1)
                .take(2)
                .filter_map(ref_of)
                .map(|r| format!("[[{r}]]"))
                .collect();
            if !others.is_empty() {
                out.push_str(&format!(" Le siguen {}.", others.join(" y ")));
            }
        }
        None => out.push_str(&format!(
            "No encontré Adjudicaciones de {} en la cobertura cargada.",
            criterion.to_lowercase()
        )),
    }
    if let Some(count) = find(t, "market_count", None) {
        out.push_str(&format!(
            " En total hay [[evidence:{}.0.total]] {criterion}.",
            count.call
        ));
    }
    if let Some(s) = find(t, "market_screen", None).and_then(risk_sentence) {
        out.push(' ');
        out.push_str(&s);
    }
    let segments = t.iter().find(|e| {
        ok(e)
            && (e.tool.name == "market_compare"
                || (e.tool.name == "market_aggregate"
                    && e.tool.args.get("group_by").and_then(Value::as_str) == Some("state")))
    });
    if let Some(s) = segments.and_then(segment_sentence) {
        out.push(' ');
        out.push_str(&s);
    }
    out
}
