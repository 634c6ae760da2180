//! From a `ModelInput` to chat messages, and from a chat answer back to a `ModelStep`.
//! The system prompt is the same for every workspace and turn, so providers can cache
//! the prefix; the compiled turn (already free of internal ids) follows as JSON.

use serde_json::Value;

use crate::agent::contract::gateway::{ModelInput, ModelStep, ToolCall};
use crate::agent::contract::intent::TurnOutput;

use super::wire::{FunctionCall, FunctionDef, Message, ResponseMessage, ToolDef, WireToolCall};

/// The instructions every request starts with.
pub const SYSTEM_PROMPT: &str = "\
Eres Luna, la asistente comercial de un equipo de ventas en México. Respondes en español de México.
Recibes el turno compilado en JSON: el mensaje, el hilo, los criterios conocidos (facts), el tablero, la etapa y la cobertura de los datos (coverage: qué hay por tipo, fechas y estados sin datos).
Usa solo las herramientas disponibles; cada resultado llega como JSON. Nunca inventes datos.
Cuando termines, responde sin llamar herramientas con un único objeto JSON:
{\"intent\": {\"tipo\": \"responder\" | \"encuadre\" | \"proponer_decision\" | \"cierre\" | \"limite\", ...}, \"narracion\": \"...\"}.
- encuadre: {\"criterio\": texto, \"pregunta\"?: {\"texto\", \"campo\", \"opciones\"?}}; pregunta solo por un campo faltante.
- proponer_decision: {\"decision\": {\"clase\": ..., \"proposal_id\" | \"quote_id\" | \"sequence_id\"}} con un id devuelto por una herramienta en este turno.
- cierre: {\"variante\": \"completo\" | \"parcial\" | \"sin_cobertura\", \"salidas\": []}.
- limite: {\"falta\": {\"tipo\": \"operacion\" | \"conector\" | \"dato\" | \"permiso\" | \"credito\", \"detalle\"}}.
En la narración marca cada cifra, fecha, monto o nombre como [[tipo:id]] con una referencia devuelta por las herramientas de este turno (por ejemplo [[company:...]] o [[evidence:c1.0.count]]: llamada, fila y campo).
Si el turno trae \"research\", es un paso de una investigación larga: sigue research.instructions (en encuadre y ajuste, una sola llamada a market_search con los filtros; en informe, el objeto JSON final sin llamar herramientas).";

/// The messages for one step: system, the compiled turn, then every exchange of this
/// turn as an assistant tool call and its tool result, then the repair note if any.
pub fn messages(input: &ModelInput) -> Vec<Message> {
    let turn = serde_json::to_string(&input.turn).unwrap_or_else(|_| "{}".to_owned());
    let mut out = vec![
        Message::System {
            content: SYSTEM_PROMPT.to_owned(),
        },
        Message::User {
            content: format!("Turno compilado (JSON):\n{turn}"),
        },
    ];
    for exchange in &input.transcript {
        out.push(Message::Assistant {
            content: None,
            tool_calls: vec![WireToolCall {
                id: exchange.call.clone(),
                kind: "function".to_owned(),
                function: FunctionCall {
                    name: exchange.tool.name.clone(),
                    arguments: exchange.tool.args.to_string(),
                },
            }],
        });
        out.push(Message::Tool {
            tool_call_id: exchange.call.clone(),
            content: exchange.result.to_string(),
        });
    }
    // Steering is said last, after what the turn did so far, so the model plans the
    // rest of the turn with it.
    if !input.turn.steering.is_empty() && input.turn.research.is_none() {
        let said: Vec<String> = input
            .turn
            .steering
            .iter()
            .map(|t| format!("«{t}»"))
            .collect();
        out.push(Message::User {
            content: format!(
                "Mientras trabajabas, la persona escribió: {}. Tómalo en cuenta y replantea los pasos que siguen.",
                said.join(", ")
            ),
        });
    }
    if let Some(problem) = &input.repair {
        out.push(Message::User {
            content: format!(
                "Tu respuesta final fue rechazada: {problem}. Corrígela y responde de nuevo con el objeto JSON."
            ),
        });
    }
    out
}

/// The visible tools as function definitions (the runner already projected ≤ 12).
pub fn tools(input: &ModelInput) -> Vec<ToolDef> {
    input
        .tools
        .iter()
        .map(|t| ToolDef {
            kind: "function".to_owned(),
            function: FunctionDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            },
        })
        .collect()
}

/// Reads a chat answer: tool calls, or the final `TurnOutput` as JSON (optionally
/// inside a ```json fence). `Err` says what was wrong, for the one repair.
pub fn parse_step(message: &ResponseMessage) -> Result<ModelStep, String> {
    if !message.tool_calls.is_empty() {
        let mut calls = Vec::with_capacity(message.tool_calls.len());
        for call in &message.tool_calls {
            let raw = call.function.arguments.trim();
            let args: Value = if raw.is_empty() {
                Value::Object(Default::default())
            } else {
                serde_json::from_str(raw).map_err(|e| {
                    format!(
                        "los argumentos de {} no son JSON válido ({e})",
                        call.function.name
                    )
                })?
            };
            if !args.is_object() {
                return Err(format!(
                    "los argumentos de {} deben ser un objeto JSON",
                    call.function.name
                ));
            }
            calls.push(ToolCall {
                name: call.function.name.clone(),
                args,
            });
        }
        return Ok(ModelStep::Tools(calls));
    }
    let content = message.content.as_deref().unwrap_or("").trim();
    if content.is_empty() {
        return Err("la respuesta llegó vacía".to_owned());
    }
    let body = strip_fence(content);
    serde_json::from_str::<TurnOutput>(body)
        .map(ModelStep::Final)
        .map_err(|e| format!("la respuesta final no cumple el esquema de TurnOutput ({e})"))
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(content: &str) -> ResponseMessage {
        ResponseMessage {
            content: Some(content.to_owned()),
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn a_final_answer_parses_with_or_without_a_fence() {
        let json = r#"{"intent":{"tipo":"responder"},"narracion":"Listo."}"#;
        assert!(matches!(parse_step(&answer(json)), Ok(ModelStep::Final(_))));
        let fenced = format!("```json\n{json}\n```");
        assert!(matches!(
            parse_step(&answer(&fenced)),
            Ok(ModelStep::Final(_))
        ));
        assert!(parse_step(&answer("Claro, aquí tienes")).is_err());
        assert!(parse_step(&answer(r#"{"intent":{"tipo":"inventado"},"narracion":""}"#)).is_err());
    }

    #[test]
    fn tool_call_arguments_must_be_a_json_object() {
        let call = |args: &str| ResponseMessage {
            content: None,
            tool_calls: vec![WireToolCall {
                id: "call_1".into(),
                kind: "function".into(),
                function: FunctionCall {
                    name: "market_count".into(),
                    arguments: args.into(),
                },
            }],
        };
        match parse_step(&call(r#"{"kind":"suppliers"}"#)) {
            Ok(ModelStep::Tools(calls)) => assert_eq!(calls[0].args["kind"], "suppliers"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_step(&call("")), Ok(ModelStep::Tools(_))));
        assert!(parse_step(&call("{nope")).is_err());
        assert!(parse_step(&call("[1]")).is_err());
    }

    #[test]
    fn a_research_step_reaches_the_model_with_its_task_and_the_run_transcript() {
        use crate::agent::contract::gateway::{Exchange, StepContext};
        use crate::agent::contract::input::{BoardBrief, ResearchStep, ResearchTask, TurnInput};
        let input = ModelInput {
            turn: TurnInput {
                message: "investiga empaque en Jalisco".into(),
                thread: Vec::new(),
                facts: Default::default(),
                profile: None,
                board: BoardBrief::default(),
                stage: luna_protocol::session::Stage::Buscando,
                coverage: None,
                steering: Vec::new(),
                research: Some(ResearchStep {
                    task: ResearchTask::Informe,
                    brief: "investiga empaque en Jalisco".into(),
                    criterion: "Proveedores de empaque en Jalisco".into(),
                    filters: serde_json::json!({"state": "Jalisco"}),
                    instructions: "Escribe el resultado.".into(),
                }),
                plan: None,
            },
            tools: Vec::new(),
            transcript: vec![Exchange {
                call: "p1c1".into(),
                tool: ToolCall {
                    name: "market_count".into(),
                    args: serde_json::json!({"kind": "suppliers"}),
                },
                result: serde_json::json!({"results": []}),
            }],
            repair: None,
            context: StepContext::default(),
        };
        let m = messages(&input);
        let Message::User { content } = &m[1] else {
            panic!("the compiled turn follows the system prompt");
        };
        assert!(content.contains(r#""task":"informe""#), "{content}");
        assert!(content.contains("Escribe el resultado."));
        // The run's calls arrive as this step's tool exchanges, under their handles.
        assert!(
            matches!(&m[2], Message::Assistant { tool_calls, .. } if tool_calls[0].id == "p1c1")
        );
        assert!(tools(&input).is_empty());
        // A chat turn carries no research key at all.
        let mut chat = input.clone();
        chat.turn.research = None;
        let Message::User { content } = &messages(&chat)[1] else {
            panic!("the compiled turn follows the system prompt");
        };
        assert!(!content.contains("research"));
    }
}
