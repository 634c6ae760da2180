//! Board and CRM actions of the local director: moving saved companies to a stage
//! («mueve los 5 mejores a Contactado») and saving the selection («guárdalos»), each
//! through a card or a level-0 call with «deshacer».

use serde_json::{json, Value};

use super::{call, calls_of, final_, ok_rows, said_before, LocalDirector, PREFERRED_COLLECTION};
use crate::agent::contract::gateway::{ModelInput, ModelStep, ToolCall};
use crate::agent::contract::intent::{DecisionDraft, Falta, FaltaTipo, TurnIntent};
use crate::agent::director::grammar::{parse, StageMove};
use crate::agent::director::vocab::CatalogVocabulary;
use crate::agent::director::words::stem;
use crate::base::catalog::text::fold;

/// How many companies of the selection the person's earlier move in this
/// conversation took («pásala a Ganado» → 1): what «el resto» leaves out.
fn earlier_moved(input: &ModelInput, priorities: usize) -> usize {
    said_before(input)
        .find_map(|m| parse(m, &CatalogVocabulary).stage_move)
        .filter(|mv| !mv.rest && !mv.all)
        .map_or(0, |mv| match (mv.nth, mv.top) {
            (Some(n), _) => n as usize,
            (None, Some(n)) => n as usize,
            (None, None) => priorities.max(1),
        })
}

/// Verbs of saving whose object may name a stage («guárdalas en Propuesta»,
/// «súbelas al pipeline como Nuevo»).
const SAVE_VERBS: &[&str] = &[
    "guard", "agreg", "sube", "subel", "mete", "save", "pon", "registr",
];

/// The stage of `stages` a save message names after its verb, matched by stems
/// («guárdalas directo en Contactado» → «Contactado»). None when it names none: the
/// records start in the collection's first stage.
fn save_stage(message: &str, stages: &[&str]) -> Option<String> {
    let words: Vec<String> = fold(message)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let verb = words
        .iter()
        .rposition(|w| SAVE_VERBS.iter().any(|v| w.starts_with(v)))?;
    named_stage(&words[verb + 1..].join(" "), stages)
}

/// The collection stage whose words all appear (by stem) in `said`.
fn named_stage(said: &str, stages: &[&str]) -> Option<String> {
    let tail: Vec<String> = fold(said)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(stem)
        .collect();
    stages
        .iter()
        .find(|s| {
            let want: Vec<String> = fold(s)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(stem)
                .collect();
            !want.is_empty() && want.iter().all(|w| tail.contains(w))
        })
        .map(|s| (*s).to_owned())
}

/// `crm_save_companies` of the selection into `collection` (a `crm_collections` row),
/// in the stage the message names, if any.
/// `into`: a stage the person named without a verb of saving («todas a Prospección»).
pub(super) fn save_call(collection: &Value, message: &str, into: Option<&str>) -> Option<ToolCall> {
    let id = collection.get("ref").and_then(Value::as_str)?;
    let stages: Vec<&str> = collection
        .get("stages")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = json!({"collection_id": id, "source": "selection", "conflict_policy": "skip"});
    let stage = match into {
        // What was named without a verb of saving must be one of the list's stages,
        // or the list itself («todas a Prospección»: into it, first stage).
        Some(said) => match named_stage(said, &stages) {
            Some(stage) => Some(stage),
            None => {
                let name = collection.get("ref_label").and_then(Value::as_str)?;
                named_stage(said, &[name])?;
                None
            }
        },
        None => save_stage(message, &stages),
    };
    if let Some(stage) = stage {
        args["stage"] = json!(stage);
    }
    Some(call("crm_save_companies", args))
}

impl LocalDirector {
    /// «mueve los 5 mejores a Contactado»: finds the saved list and the stage, reads
    /// the chosen companies' records, then moves one with `crm_record` (level 0, with
    /// «deshacer») or several with `crm_bulk_update` (a card of one tap).
    pub(super) fn move_stage(&self, input: &ModelInput, mv: &StageMove) -> ModelStep {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if ![
            "crm_collections",
            "collection_query",
            "crm_record",
            "crm_bulk_update",
        ]
        .iter()
        .all(|n| visible(n))
        {
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Mover empresas de etapa".into(),
                    },
                },
                "Todavía no puedo mover empresas de etapa desde aquí; hazlo desde el tablero.",
            );
        }
        let Some(lookup) = calls_of(t, "crm_collections").last().copied() else {
            return ModelStep::Tools(vec![call("crm_collections", json!({}))]);
        };
        let rows = ok_rows(lookup);
        let saved = input.turn.board.saved_collection.as_deref();
        let Some(collection) = rows
            .iter()
            .find(|r| r.get("ref_label").and_then(Value::as_str) == saved)
            .or_else(|| rows.first())
        else {
            return final_(
                TurnIntent::Responder {},
                "No encontré la lista guardada; guárdala primero y luego la muevo.",
            );
        };
        let collection_ref = collection
            .get("ref")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = collection
            .get("ref_label")
            .and_then(Value::as_str)
            .unwrap_or("tu lista");
        let stages: Vec<&str> = collection
            .get("stages")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // «ganada» finds «Ganado»: the same word, a prefix, or the same stems.
        let stems = |t: &str| -> Vec<String> {
            fold(t)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(crate::agent::director::words::stem)
                .collect()
        };
        let wanted_stems = stems(&mv.stage);
        let Some(stage) = stages
            .iter()
            .find(|s| fold(s) == mv.stage)
            .or_else(|| stages.iter().find(|s| fold(s).starts_with(&mv.stage)))
            .or_else(|| stages.iter().find(|s| fold(s).contains(&mv.stage)))
            .or_else(|| {
                stages.iter().find(|s| {
                    let have = stems(s);
                    !wanted_stems.is_empty() && wanted_stems.iter().all(|w| have.contains(w))
                })
            })
        else {
            return final_(
                TurnIntent::Responder {},
                format!(
                    "En «{name}» no hay una etapa «{}». Sus etapas son: {}.",
                    mv.stage,
                    stages.join(", ")
                ),
            );
        };

        // The chosen companies: priorities first, in the selection's order.
        let selection = &input.turn.board.selection;
        let ordered = selection
            .iter()
            .filter(|i| i.priority)
            .chain(selection.iter().filter(|i| !i.priority));
        let priorities = selection.iter().filter(|i| i.priority).count();
        let (skip, wanted) = match (mv.top, mv.all) {
            _ if mv.rest => (earlier_moved(input, priorities), selection.len()),
            _ if mv.nth.is_some() => (mv.nth.unwrap_or(1).saturating_sub(1) as usize, 1),
            (Some(n), _) => (0, n as usize),
            (None, true) => (0, selection.len()),
            (None, false) => (0, priorities.max(1)),
        };
        let chosen: Vec<&str> = ordered
            .skip(skip)
            .take(wanted)
            .filter_map(|i| i.reference.strip_prefix("company:"))
            .collect();
        let queries = calls_of(t, "collection_query");
        if queries.is_empty() {
            return ModelStep::Tools(
                chosen
                    .iter()
                    .map(|entity| {
                        call(
                            "collection_query",
                            json!({"collection_id": collection_ref, "op": "query", "filter": {"entity_id": entity}, "limit": 1}),
                        )
                    })
                    .collect(),
            );
        }
        let records: Vec<(&str, i64)> = queries
            .iter()
            .filter_map(|ex| ok_rows(ex).first())
            .filter_map(|r| Some((r.get("ref")?.as_str()?, r.get("version")?.as_i64()?)))
            .collect();
        if records.is_empty() {
            return final_(
                TurnIntent::Responder {},
                format!("No encontré esas empresas en «{name}»."),
            );
        }
        if let [(record, version)] = records.as_slice() {
            return match calls_of(t, "crm_record").last() {
                None => ModelStep::Tools(vec![call(
                    "crm_record",
                    json!({"op": "update", "record_id": record, "version": version, "stage": stage}),
                )]),
                Some(ex) if !ok_rows(ex).is_empty() => final_(
                    TurnIntent::Responder {},
                    format!("Moví [[{record}]] a «{stage}». Si no era así, toca «deshacer»."),
                ),
                Some(_) => final_(
                    TurnIntent::Responder {},
                    "No pude moverla: alguien la cambió hace un momento. Revisa el tablero y dime de nuevo.",
                ),
            };
        }
        let Some(bulk) = calls_of(t, "crm_bulk_update").last().copied() else {
            let changes: Vec<Value> = records
                .iter()
                .map(|(record, version)| json!({"record_id": record, "version": version, "stage": stage}))
                .collect();
            return ModelStep::Tools(vec![call(
                "crm_bulk_update",
                json!({"collection_id": collection_ref, "changes": changes}),
            )]);
        };
        match ok_rows(bulk)
            .first()
            .and_then(|r| r.get("proposal_id"))
            .and_then(Value::as_str)
        {
            Some(pid) => final_(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::CambiosMasivos {
                        proposal_id: pid.to_owned(),
                    },
                },
                format!(
                    "Te propongo pasar [[evidence:{c}.0.will_change]] empresas de «{name}» a «{stage}». Confírmalo en la tarjeta.",
                    c = bulk.call
                ),
            ),
            None => final_(
                TurnIntent::Responder {},
                "No pude preparar el cambio de etapa; revisa el tablero y dime de nuevo.",
            ),
        }
    }

    /// «guárdalos» with a selection already on the board: look up the collection, then
    /// preview the save (a level-1 card; nothing is written before the tap).
    pub(super) fn save_selection(&self, input: &ModelInput) -> Option<ModelStep> {
        self.save_selection_into(input, None)
    }

    /// The same, into the stage `into` names (see [`save_call`]).
    pub(super) fn save_selection_into(
        &self,
        input: &ModelInput,
        into: Option<&str>,
    ) -> Option<ModelStep> {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if !visible("crm_collections") || !visible("crm_save_companies") {
            return None;
        }
        let Some(lookup) = calls_of(t, "crm_collections").last().copied() else {
            return Some(ModelStep::Tools(vec![call("crm_collections", json!({}))]));
        };
        let rows = ok_rows(lookup);
        let collection = rows
            .iter()
            .find(|r| r.get("ref_label").and_then(Value::as_str) == Some(PREFERRED_COLLECTION))
            .or_else(|| rows.first())?;
        let Some(save) = calls_of(t, "crm_save_companies").last().copied() else {
            return Some(ModelStep::Tools(vec![save_call(
                collection,
                &input.turn.message,
                into,
            )?]));
        };
        let pid = ok_rows(save)
            .iter()
            .find_map(|r| r.get("proposal_id").and_then(Value::as_str))?;
        Some(final_(
            TurnIntent::ProponerDecision {
                decision: DecisionDraft::GuardarEnCrm {
                    proposal_id: pid.to_owned(),
                },
            },
            "Te dejo la tarjeta para guardar tu selección en el CRM; nada se escribe hasta que la confirmes.",
        ))
    }
}
