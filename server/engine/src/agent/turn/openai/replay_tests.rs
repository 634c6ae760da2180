//! The recorded provider exchanges (`server/tests/fixtures/providers/*.json`, the
//! replay-provider suite's fixtures) read by the wire types and the stream assembler:
//! every successful reply of every server shape parses into the answer it carries.
//! The HTTP side (retries, the `response_format` fallback) is `server/tests/api/replay.rs`.

use serde_json::Value;

use super::stream::Assembler;
use super::wire::{ChatResponse, ResponseMessage, Usage};

const FIXTURES: [(&str, &str); 6] = [
    (
        "deepseek",
        include_str!("../../../../../tests/fixtures/providers/deepseek.json"),
    ),
    (
        "litellm",
        include_str!("../../../../../tests/fixtures/providers/litellm.json"),
    ),
    (
        "llamacpp",
        include_str!("../../../../../tests/fixtures/providers/llamacpp.json"),
    ),
    (
        "ollama",
        include_str!("../../../../../tests/fixtures/providers/ollama.json"),
    ),
    (
        "openai",
        include_str!("../../../../../tests/fixtures/providers/openai.json"),
    ),
    (
        "vllm",
        include_str!("../../../../../tests/fixtures/providers/vllm.json"),
    ),
];

fn read(reply: &Value) -> Result<(ResponseMessage, Option<Usage>), String> {
    if let Some(chunks) = reply["sse"].as_array() {
        let mut body = String::new();
        for c in chunks {
            body.push_str(&format!("data: {c}\n\n"));
        }
        body.push_str("data: [DONE]\n\n");
        let mut a = Assembler::new(None);
        a.feed(body.as_bytes()).map_err(|e| e.to_string())?;
        return a.finish().map_err(|e| e.to_string());
    }
    let body: ChatResponse =
        serde_json::from_value(reply["json"].clone()).map_err(|e| e.to_string())?;
    let message = body
        .choices
        .into_iter()
        .next()
        .map(|c| c.message)
        .unwrap_or_default();
    Ok((message, body.usage))
}

#[test]
fn every_recorded_server_shape_parses_into_its_answer() {
    let mut failed = Vec::new();
    for (name, text) in FIXTURES {
        let fixture: Value = serde_json::from_str(text).unwrap();
        let ok: Vec<&Value> = fixture["replies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"].as_u64().unwrap_or(200) == 200)
            .collect();
        let answers: Vec<_> = ok.iter().map(|r| read(r)).collect();
        match answers.as_slice() {
            [Ok((call, _)), Ok((last, _))] => {
                let args: Value = serde_json::from_str(
                    call.tool_calls
                        .first()
                        .map_or("", |c| c.function.arguments.as_str()),
                )
                .unwrap_or(Value::Null);
                if call.tool_calls.len() != 1
                    || call.tool_calls[0].function.name != "market_count"
                    || args["filters"]["state"] != "Jalisco"
                {
                    failed.push(format!("{name}: tool call {:?}", call.tool_calls));
                }
                if !last.content.as_deref().unwrap_or("").contains("narracion") {
                    failed.push(format!("{name}: final answer {:?}", last.content));
                }
            }
            other => failed.push(format!(
                "{name}: {:?}",
                other.iter().map(|a| a.as_ref().err()).collect::<Vec<_>>()
            )),
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
