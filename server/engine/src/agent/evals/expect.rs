//! A turn of a brief judged against its expectations: the calls it had to make (with
//! their meaning, `super::meaning`), what it must not have changed on the board, the
//! selection's size and what the narration must say.

use crate::agent::contract::trajectory::{Step, Trajectory};
use crate::base::catalog::text::fold;

use super::bench::Expect;
use super::meaning::{call_failures, BoardDelta};

/// What a turn changed on the board that its expectations say must stay.
pub fn unasked_changes(expect: &Expect, delta: &BoardDelta) -> Vec<String> {
    [
        (
            expect.selection_unchanged && delta.selection_changed,
            "selection",
        ),
        (expect.saved_unchanged && delta.saved_changed, "saved"),
        (expect.drafts_unchanged && delta.drafts_changed, "drafts"),
    ]
    .into_iter()
    .filter(|(hit, _)| *hit)
    .map(|(_, what)| what.to_owned())
    .collect()
}

/// Checks one turn's expectations against its trajectory and what it did to the board.
pub fn expectations(expect: &Expect, t: &Trajectory, delta: &BoardDelta) -> Vec<String> {
    let mut failures = call_failures(&expect.calls, t);
    for what in unasked_changes(expect, delta) {
        failures.push(format!(
            "changed the {what} although the person did not ask"
        ));
    }
    if let Some(n) = expect.selection_size {
        if delta.selection_len != n {
            failures.push(format!(
                "the selection holds {}, expected {n}",
                delta.selection_len
            ));
        }
    }
    let intent = intent_name(t);
    if !expect.intent.is_empty() && !expect.intent.contains(&intent) {
        failures.push(format!(
            "intent {intent}, expected {}",
            expect.intent.join(" | ")
        ));
    }
    for tool in &expect.tools {
        if !t.tool_calls().any(|c| c.ok && c.tool == *tool) {
            failures.push(format!("{tool} was not called (or failed)"));
        }
    }
    for tool in &expect.tools_absent {
        if t.tool_calls().any(|c| c.tool == *tool) {
            failures.push(format!("{tool} was called"));
        }
    }
    let cards = t.decisions_proposed();
    match expect.card.as_deref() {
        Some("none") if !cards.is_empty() => {
            failures.push(format!("offered {}, expected no card", cards.join(", ")))
        }
        Some("none") | None => {}
        Some(kind) if !cards.contains(&kind) => failures.push(format!(
            "card {}, expected {kind}",
            if cards.is_empty() {
                "none".to_owned()
            } else {
                cards.join(", ")
            }
        )),
        Some(_) => {}
    }
    if let Some(tipo) = &expect.falta {
        match t.final_intent() {
            Some(crate::agent::contract::intent::TurnIntent::Limite { falta }) => {
                let got = serde_json::to_value(falta.tipo)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                if got != *tipo {
                    failures.push(format!("falta {got}, expected {tipo}"));
                }
            }
            _ => failures.push(format!("expected a limite ({tipo})")),
        }
    }
    if let Some(campo) = &expect.pregunta {
        match t.final_intent() {
            Some(crate::agent::contract::intent::TurnIntent::Encuadre {
                pregunta: Some(p),
                ..
            }) => {
                let got = serde_json::to_value(p.campo)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                if got != *campo {
                    failures.push(format!("asks about {got}, expected {campo}"));
                }
            }
            _ => failures.push(format!("expected a question about {campo}")),
        }
    }
    let charged: i64 = t.tool_calls().map(|c| c.charged).sum::<i64>()
        + t.steps
            .iter()
            .map(|s| match s {
                Step::DecisionResolved { credits, .. } => i64::from(*credits),
                _ => 0,
            })
            .sum::<i64>();
    if expect.charge && charged == 0 {
        failures.push("expected a charge after the person accepted, none happened".into());
    }
    if !expect.charge && charged > 0 {
        failures.push(format!("charged {charged} credits, expected no charge"));
    }
    // The director anchors every figure itself: a repaired or trimmed answer is a
    // director bug even when the delivered turn is valid.
    if let Some(Step::Finished {
        repaired, trimmed, ..
    }) = t
        .steps
        .iter()
        .rev()
        .find(|s| matches!(s, Step::Finished { .. }))
    {
        if *repaired || *trimmed {
            let problems: Vec<&str> = t
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::ModelAnswer {
                        accepted: false,
                        problems,
                        ..
                    } => Some(problems.iter().map(String::as_str)),
                    _ => None,
                })
                .flatten()
                .collect();
            failures.push(format!(
                "the answer needed a repair ({})",
                problems.join("; ")
            ));
        }
    }
    if let Some(via) = &expect.resolved_via {
        let vias: Vec<&str> = t
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::DecisionResolved { via, .. } => Some(via.as_str()),
                _ => None,
            })
            .collect();
        if vias.is_empty() || vias.iter().any(|v| v != via) {
            failures.push(format!(
                "cards resolved by [{}], expected {via}",
                vias.join(", ")
            ));
        }
    }
    let narration = t.narration().map(|(n, _)| fold(n)).unwrap_or_default();
    for needle in &expect.narration_has {
        if !narration.contains(&fold(needle)) {
            failures.push(format!("the narration does not say «{needle}»"));
        }
    }
    failures
}

/// The kind of the turn's final answer («refused», «unfinished» when there is none).
pub(super) fn intent_name(t: &Trajectory) -> String {
    if t.refused() {
        return "refused".into();
    }
    t.final_intent()
        .map_or("unfinished", |i| i.kind())
        .to_owned()
}
