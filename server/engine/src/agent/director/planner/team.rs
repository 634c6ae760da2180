//! Requests about what the team knows: a note for the team («anota que…», «recuerda
//! que…») goes through `context_note` and ends in the `dejar_nota` card; a correction
//! («el tema de precios está desactualizado», «corrige el ICP») finds the topic with
//! `context_retrieve`, prepares `context_suggest_edit` and ends in `sugerir_edicion`.
//! A merge («fusiona esa nota») finds the note in review with `context_retrieve` and
//! ends in `fusionar_conocimiento`. None of them ever searches or touches the board.

use serde_json::{json, Value};

use super::{call, calls_of, final_, ok_rows, said_before, LocalDirector};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::intent::{DecisionDraft, Falta, FaltaTipo, TurnIntent};
use crate::base::catalog::text::fold;

/// The most characters of a note's title (its first words).
const TITLE_CHARS: usize = 80;

fn limite(detalle: &str, narracion: &str) -> ModelStep {
    final_(
        TurnIntent::Limite {
            falta: Falta {
                tipo: FaltaTipo::Operacion,
                detalle: detalle.into(),
            },
        },
        narracion,
    )
}

/// A title from the note's first words, cut at a word boundary.
fn title_of(text: &str) -> String {
    let mut title = String::new();
    for word in text.split_whitespace() {
        if title.chars().count() + word.chars().count() + 1 > TITLE_CHARS {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    let title = title.trim_end_matches([',', '.', ';', ':']).to_owned();
    let mut chars = title.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Nota del equipo".to_owned(),
    }
}

fn proposal_id(rows: &[Value]) -> Option<&str> {
    rows.iter()
        .find_map(|r| r.get("proposal_id").and_then(Value::as_str))
}

impl LocalDirector {
    /// «anota que el ISSSTE paga a 90 días»: prepare the note, then its card.
    pub(super) fn note(&self, input: &ModelInput, text: &str) -> ModelStep {
        if !input.tools.iter().any(|t| t.name == "context_note") {
            // The card alone still works: it drafts the note from the text.
            return final_(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::DejarNota {
                        draft: text.to_owned(),
                    },
                },
                "Te propongo dejar esta nota para el equipo; queda en revisión hasta que la apruebes.",
            );
        }
        let Some(done) = calls_of(&input.transcript, "context_note").last().copied() else {
            let content: String = text.chars().take(4_000).collect();
            return ModelStep::Tools(vec![call(
                "context_note",
                json!({"title": title_of(&content), "content": content, "area": "ventas"}),
            )]);
        };
        let draft = proposal_id(ok_rows(done)).map_or_else(|| text.to_owned(), str::to_owned);
        final_(
            TurnIntent::ProponerDecision {
                decision: DecisionDraft::DejarNota { draft },
            },
            "Te propongo dejar esta nota para el equipo; queda en revisión hasta que el dueño o un administrador la fusione.",
        )
    }

    /// «el tema de precios está desactualizado, ya usamos la lista 2026»: find the
    /// topic, prepare the suggested edit (a question to the reviewer, in the person's
    /// words), then its card.
    pub(super) fn knowledge_edit(&self, input: &ModelInput) -> ModelStep {
        let visible = |name: &str| input.tools.iter().any(|t| t.name == name);
        if !visible("context_retrieve") || !visible("context_suggest_edit") {
            return limite(
                "Sugerir una edición al conocimiento",
                "Todavía no puedo sugerir ediciones al conocimiento desde aquí.",
            );
        }
        let t = &input.transcript;
        let message: String = input.turn.message.chars().take(400).collect();
        let Some(found) = calls_of(t, "context_retrieve").last().copied() else {
            // «corrige eso», «actualiza esa nota»: the note said earlier in this
            // conversation is the topic meant.
            let task = if crate::agent::director::memory::points_back(&fold(&input.turn.message)) {
                note_meant(input)
            } else {
                message
            };
            return ModelStep::Tools(vec![call(
                "context_retrieve",
                json!({"task": task, "limit": 3}),
            )]);
        };
        let Some(topic) = ok_rows(found)
            .iter()
            .find_map(|r| r.get("ref").and_then(Value::as_str))
            .filter(|r| r.starts_with("topic:"))
        else {
            return final_(
                TurnIntent::Responder {},
                "No encontré en Cerebro un tema sobre eso. Si quieres, dime qué debe saber el equipo y lo dejo como nota.",
            );
        };
        let Some(done) = calls_of(t, "context_suggest_edit").last().copied() else {
            return ModelStep::Tools(vec![call(
                "context_suggest_edit",
                json!({"topic": topic, "summary": message}),
            )]);
        };
        if ok_rows(done).is_empty() {
            return final_(
                TurnIntent::Responder {},
                "No pude preparar la sugerencia de edición; intenta de nuevo en un momento.",
            );
        }
        final_(
            TurnIntent::ProponerDecision {
                decision: DecisionDraft::SugerirEdicion {
                    topic: topic.to_owned(),
                    summary: message,
                    patch: None,
                },
            },
            "Te propongo esta corrección al tema; queda en revisión y no cambia lo que sabe el equipo hasta que se fusione.",
        )
    }
}

/// What the note a merge points at says: the person's latest request for a note in
/// this conversation («anota que el ISSSTE paga a 90 días» → «el ISSSTE paga a 90
/// días»), else the merge message itself («fusiona la nota del ISSSTE»).
fn note_meant(input: &ModelInput) -> String {
    said_before(input)
        .find_map(|m| {
            let tokens = crate::agent::director::words::tokens(m);
            crate::agent::director::acts::read(m, &tokens).note
        })
        .unwrap_or_else(|| input.turn.message.clone())
        .chars()
        .take(400)
        .collect()
}

impl LocalDirector {
    /// «¿qué tenemos documentado sobre qué contestar cuando…?»: the topics of Cerebro
    /// that answer it, named with their freshness, to open in Cerebro.
    pub(super) fn knowledge_answer(&self, input: &ModelInput) -> ModelStep {
        if !input.tools.iter().any(|t| t.name == "context_retrieve") {
            return limite(
                "Consultar lo que sabe el equipo",
                "Todavía no puedo consultar Cerebro desde aquí; búscalo en Cerebro.",
            );
        }
        let Some(found) = calls_of(&input.transcript, "context_retrieve")
            .last()
            .copied()
        else {
            let task: String = input.turn.message.chars().take(400).collect();
            return ModelStep::Tools(vec![call(
                "context_retrieve",
                json!({"task": task, "limit": 3}),
            )]);
        };
        let c = &found.call;
        let topics: Vec<&str> = ok_rows(found)
            .iter()
            .filter_map(|r| r.get("ref").and_then(Value::as_str))
            .filter(|r| r.starts_with("topic:"))
            .collect();
        match topics.as_slice() {
            [] => final_(
                TurnIntent::Responder {},
                "No encontré nada en Cerebro sobre eso. Si lo sabes, dímelo y lo dejo como nota para el equipo.",
            ),
            [one] => final_(
                TurnIntent::Responder {},
                format!("En Cerebro está en «[[{one}]]» ([[evidence:{c}.0.freshness]]); ábrelo para leerlo completo."),
            ),
            [first, second, ..] => final_(
                TurnIntent::Responder {},
                format!("En Cerebro lo más cercano es «[[{first}]]» ([[evidence:{c}.0.freshness]]) y también «[[{second}]]»; ábrelos para leerlos completos."),
            ),
        }
    }

    /// «fusiona esa nota con lo que sabe el equipo»: the topic in review the person
    /// means, then the `fusionar_conocimiento` card (owners and admins resolve it).
    pub(super) fn merge_note(&self, input: &ModelInput) -> ModelStep {
        if !input.tools.iter().any(|t| t.name == "context_retrieve") {
            return limite(
                "Fusionar una nota en el conocimiento",
                "Todavía no puedo fusionar notas desde aquí; hazlo en Cerebro, en la revisión de notas.",
            );
        }
        let Some(found) = calls_of(&input.transcript, "context_retrieve")
            .last()
            .copied()
        else {
            return ModelStep::Tools(vec![call(
                "context_retrieve",
                json!({"task": note_meant(input), "limit": 5}),
            )]);
        };
        let in_review = ok_rows(found).iter().find_map(|r| {
            let topic = r.get("ref").and_then(Value::as_str)?;
            (topic.starts_with("topic:")
                && r.get("status").and_then(Value::as_str) == Some("en_revision"))
            .then_some(topic)
        });
        match in_review {
            Some(topic) => final_(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::FusionarConocimiento {
                        topic: topic.to_owned(),
                    },
                },
                "Te dejo la tarjeta para fusionar la nota en lo que sabe el equipo; la resuelve el dueño o un administrador.",
            ),
            None => final_(
                TurnIntent::Responder {},
                "No encontré una nota en revisión sobre eso; dime cuál quieres fusionar o revísalas en Cerebro.",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::title_of;

    #[test]
    fn a_note_title_is_its_first_words() {
        assert_eq!(
            title_of("el ISSSTE paga a 90 días."),
            "El ISSSTE paga a 90 días"
        );
        let long = "palabra ".repeat(40);
        assert!(title_of(&long).chars().count() <= 80);
    }
}
