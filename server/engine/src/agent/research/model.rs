//! A run's model steps, through the same `ModelGateway` turns use (`engine.model`: the
//! local director unless a model is configured; a `ScriptedModel` in tests).
//!
//! - **Framing** (and re-framing when the person steers): the model answers with the
//!   search the phases should make — one `market_search` call whose filters name the
//!   giro, state and buyer. The filters are looked up in the catalogues
//!   (`Frame::planned`); unknown values are rejected and the brief's stay.
//! - **Write-up**: the model writes the result over the run's tool results. The
//!   narration policy of turns applies (`turn::narration::judge`): every marker must
//!   resolve against what the run read and no figure may be bare; a rejected answer
//!   gets one repair, then it is cut to what is anchored.
//!
//! Every gateway call spends one step of the run's inference cap ([`Budget`]). With
//! the cap used up no model is called: the run frames with the grammar and writes
//! with the code template (`writeup`), and the result says so.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use luna_protocol::session::Stage;

use crate::agent::contract::gateway::{ModelInput, ModelStep, ModelTool, StepContext};
use crate::agent::contract::input::{BoardBrief, ResearchStep, ResearchTask, TurnInput};
use crate::agent::contract::narration::{self, ResolvedNarration, Verdict};
use crate::agent::director::grammar;
use crate::agent::director::memory::said_in;
use crate::agent::director::vocab::CatalogVocabulary;
use crate::Engine;

use super::frame::{Frame, Rejected};
use super::Run;
use crate::agent::director::writeup;

/// The run's inference cap and what it spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub cap: i64,
    pub used: i64,
}

impl Budget {
    pub fn of(run: &Run) -> Budget {
        Budget {
            cap: run.inference_cap,
            used: run.inference_used,
        }
    }

    pub fn available(&self) -> bool {
        self.used < self.cap
    }

    /// Spends one model step if the cap allows it.
    fn take(&mut self) -> bool {
        let ok = self.available();
        if ok {
            self.used += 1;
        }
        ok
    }
}

/// What a model step was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    Encuadre,
    Ajuste,
    Informe,
    /// The one repair of a rejected write-up.
    Reparacion,
}

/// What came of a model step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Used as it came.
    Aceptado,
    /// Used without the values the catalogues do not know.
    Ajustado,
    /// Rejected; the one repair was asked for.
    Rechazado,
    /// Cut to the sentences that resolve.
    Recortado,
    /// Unusable; the run took the code path.
    Invalido,
    /// The model did not answer; the run took the code path.
    SinRespuesta,
    /// Not called: the cap was used up; the run took the code path.
    Tope,
}

/// One model step of a run, as recorded on its phase's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelStepNote {
    pub purpose: Purpose,
    pub outcome: Outcome,
    /// The filters of a plan the code refused (`giro`, `state`, `buyer`, `other`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
}

impl ModelStepNote {
    fn new(purpose: Purpose, outcome: Outcome) -> Self {
        ModelStepNote {
            purpose,
            outcome,
            rejected: Vec::new(),
        }
    }

    /// True when the gateway was called for it.
    pub fn called(&self) -> bool {
        self.outcome != Outcome::Tope
    }
}

const FRAME_INSTRUCTIONS: &str = "Encuadra esta investigación: llama una sola vez a market_search con kind \"suppliers\" y los filtros (giro, state, buyer) que mejor respondan al encargo. No escribas narración: las fases harán las búsquedas.";
const STEER_INSTRUCTIONS: &str = "La persona ajustó la investigación con los mensajes de steering. Llama una sola vez a market_search con kind \"suppliers\" y los filtros actuales (filters) cambiados según lo que pidió.";
const WRITE_INSTRUCTIONS: &str = "Escribe el resultado de la investigación para la persona, en pocas frases: quién domina, cuántos Proveedores hay, qué riesgos y qué segmentos encontraste. Responde el objeto JSON final con intent cierre, sin llamar herramientas. Marca cada cifra y cada nombre como [[tipo:id]] con refs de los resultados de arriba (por ejemplo [[company:…]] o [[evidence:p2c1.0.awards]]: llamada, fila y campo).";
const NOT_A_RESULT: &str =
    "el informe no llama herramientas: responde el objeto JSON final con la narración";

/// The model input for one step of `run`. `n` numbers the run's steps (usage rows).
fn input(
    engine: &Engine,
    run: &Run,
    task: ResearchTask,
    frame: &Frame,
    steering: Vec<String>,
    n: i64,
) -> ModelInput {
    let (tools, transcript, instructions) = match task {
        ResearchTask::Informe => (Vec::new(), run.exchanges(), WRITE_INSTRUCTIONS),
        ResearchTask::Encuadre | ResearchTask::Ajuste => {
            let search = engine
                .registry
                .get("market_search")
                .map(|e| ModelTool {
                    name: e.def.name.to_owned(),
                    description: e.def.full_description(),
                    parameters: e.def.input_schema.clone(),
                })
                .into_iter()
                .collect();
            let say = if task == ResearchTask::Ajuste {
                STEER_INSTRUCTIONS
            } else {
                FRAME_INSTRUCTIONS
            };
            (search, Vec::new(), say)
        }
    };
    let request = grammar::parse(&run.brief, &CatalogVocabulary);
    ModelInput {
        turn: TurnInput {
            message: run.brief.clone(),
            thread: Vec::new(),
            facts: said_in(&request, 1),
            profile: None,
            board: BoardBrief::default(),
            stage: Stage::Buscando,
            coverage: None,
            steering,
            research: Some(ResearchStep {
                task,
                brief: run.brief.clone(),
                criterion: frame.describe(),
                filters: Value::Object(frame.supplier_filters()),
                instructions: instructions.to_owned(),
            }),
            plan: None,
        },
        tools,
        transcript,
        repair: None,
        context: StepContext {
            workspace_id: run.workspace_id.clone(),
            turn_id: format!("{}:{n}", run.id),
            thinking: None,
            narration: None,
        },
    }
}

/// One gateway call. The route that answered is read (and forgotten) at once: a run
/// never shows it.
async fn call(
    engine: &Engine,
    input: &ModelInput,
) -> Result<ModelStep, crate::agent::contract::gateway::GatewayError> {
    let model = engine.model.0.clone();
    let step = model.step(input).await;
    let _ = model.route_taken(&input.context.turn_id);
    if let Err(e) = &step {
        tracing::warn!(turn = %input.context.turn_id, error = %e, "a research model step failed");
    }
    step
}

/// The filters of the first search a plan proposes.
fn plan_filters(step: &ModelStep) -> Option<Map<String, Value>> {
    let ModelStep::Tools(calls) = step else {
        return None;
    };
    calls
        .iter()
        .find(|c| {
            matches!(
                c.name.as_str(),
                "market_search" | "market_count" | "market_aggregate"
            )
        })
        .map(|c| {
            c.args
                .get("filters")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        })
}

/// A criterion a model step planned (or the code path's, when it could not).
#[derive(Debug, Clone)]
pub struct Framed {
    pub frame: Frame,
    pub rejected: Rejected,
    pub note: ModelStepNote,
}

/// Frames (`Encuadre`) or re-frames with steering (`Ajuste`) through the model.
/// `base` is the criterion before the step and `fallback` the code path's answer.
/// The caller checks the budget first: this spends one step.
pub async fn plan(
    engine: &Engine,
    run: &Run,
    task: ResearchTask,
    base: &Frame,
    fallback: Frame,
    steering: Vec<String>,
    budget: &mut Budget,
) -> Framed {
    let purpose = if task == ResearchTask::Ajuste {
        Purpose::Ajuste
    } else {
        Purpose::Encuadre
    };
    if !budget.take() {
        return Framed {
            frame: fallback,
            rejected: Rejected::default(),
            note: ModelStepNote::new(purpose, Outcome::Tope),
        };
    }
    let input = input(engine, run, task, base, steering, budget.used);
    let step = call(engine, &input).await;
    let filters = match &step {
        Ok(s) => plan_filters(s),
        Err(_) => None,
    };
    match filters {
        Some(filters) => {
            let (frame, rejected) = Frame::planned(base, &filters);
            let mut note = ModelStepNote::new(
                purpose,
                if rejected.any() {
                    Outcome::Ajustado
                } else {
                    Outcome::Aceptado
                },
            );
            note.rejected = rejected.names();
            Framed {
                frame,
                rejected,
                note,
            }
        }
        None => Framed {
            frame: fallback,
            rejected: Rejected::default(),
            note: ModelStepNote::new(
                purpose,
                if step.is_err() {
                    Outcome::SinRespuesta
                } else {
                    Outcome::Invalido
                },
            ),
        },
    }
}

/// The write-up: resolved text (anchors into what the run read), the model steps it
/// took, and the sentence that says how it was written when the model did not.
#[derive(Debug, Clone)]
pub struct Written {
    pub narration: ResolvedNarration,
    pub notes: Vec<ModelStepNote>,
    /// Said after the result when the code wrote it or cut it (no digits).
    pub remark: Option<&'static str>,
}

const CAPPED: &str = "Este resultado lo escribí sin el modelo: la investigación ya usó todos los pasos del modelo que permite tu plan.";
const NO_ANSWER: &str =
    "Este resultado lo escribí sin el modelo porque no respondió; cada cifra lleva su evidencia.";
const NOTHING_ANCHORED: &str =
    "Este resultado lo escribí sin el modelo: su versión no traía la evidencia de sus cifras.";
const UNUSABLE: &str = "Este resultado lo escribí sin el modelo porque su respuesta no servía; cada cifra lleva su evidencia.";
const CUT_AT_CAP: &str = "Quité las frases sin evidencia: la investigación ya no tenía pasos del modelo para corregirlas.";

/// Writes the run's result through the model, within the budget.
pub async fn write(engine: &Engine, run: &Run, budget: &mut Budget) -> Written {
    let known = run.known(&engine.registry, &[]);
    let frame = run.frame();
    let template = || {
        let markup = writeup::markup(&run.exchanges(), &frame.describe());
        narration::trim_to_anchored(&markup, &known)
    };
    let mut notes = Vec::new();
    if !budget.available() {
        notes.push(ModelStepNote::new(Purpose::Informe, Outcome::Tope));
        return Written {
            narration: template(),
            notes,
            remark: Some(CAPPED),
        };
    }
    let mut input = input(engine, run, ResearchTask::Informe, &frame, Vec::new(), 0);
    let mut purpose = Purpose::Informe;
    // The first answer, kept to cut it down if its repair brings nothing usable.
    let mut first: Option<String> = None;
    loop {
        budget.take();
        input.context.turn_id = format!("{}:{}", run.id, budget.used);
        let may_repair = purpose == Purpose::Informe && budget.available();
        let text = match call(engine, &input).await {
            Ok(ModelStep::Final(out)) => out.narracion,
            Ok(ModelStep::Tools(_)) if may_repair => {
                notes.push(ModelStepNote::new(purpose, Outcome::Rechazado));
                input.repair = Some(NOT_A_RESULT.to_owned());
                purpose = Purpose::Reparacion;
                continue;
            }
            other => {
                let outcome = if other.is_err() {
                    Outcome::SinRespuesta
                } else {
                    Outcome::Invalido
                };
                notes.push(ModelStepNote::new(purpose, outcome));
                // What the first answer had that resolves, else the code's result.
                let cut = first
                    .as_deref()
                    .map(|t| narration::trim_to_anchored(t, &known))
                    .filter(|r| !r.text.trim().is_empty());
                return match cut {
                    Some(narration) => Written {
                        narration,
                        notes,
                        remark: None,
                    },
                    None => Written {
                        narration: template(),
                        notes,
                        remark: Some(if outcome == Outcome::SinRespuesta {
                            NO_ANSWER
                        } else {
                            UNUSABLE
                        }),
                    },
                };
            }
        };
        match narration::judge(&text, &known, may_repair) {
            Verdict::Accepted(narration) => {
                notes.push(ModelStepNote::new(purpose, Outcome::Aceptado));
                return Written {
                    narration,
                    notes,
                    remark: None,
                };
            }
            Verdict::Repair(problems) => {
                notes.push(ModelStepNote::new(purpose, Outcome::Rechazado));
                input.repair = Some(narration::repair_note(&problems));
                first = Some(text);
                purpose = Purpose::Reparacion;
            }
            Verdict::Trimmed(narration) => {
                notes.push(ModelStepNote::new(purpose, Outcome::Recortado));
                // Cut without a repair: the cap left none.
                let remark = (purpose == Purpose::Informe).then_some(CUT_AT_CAP);
                if narration.text.trim().is_empty() {
                    return Written {
                        narration: template(),
                        notes,
                        remark: Some(NOTHING_ANCHORED),
                    };
                }
                return Written {
                    narration,
                    notes,
                    remark,
                };
            }
        }
    }
}
