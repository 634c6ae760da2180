//! Streamed chat completions (`"stream": true`): the server-sent-events body is read
//! line by line and folded into the same `ResponseMessage` a non-streamed answer
//! carries. Content and tool-call deltas are concatenated (tool calls by their
//! `index`: the id and name arrive once, the JSON arguments in fragments); usage comes
//! in the last chunk (`stream_options.include_usage`). Reasoning deltas
//! (`reasoning_content`, `reasoning`) are handed to an optional live sink and never
//! kept: they are not part of the step and are never persisted. The final answer's
//! narration, as far as it has arrived, goes to another optional sink each time it
//! grows (`partial::narration_so_far`).

use serde::Deserialize;

use super::wire::{FunctionCall, ResponseMessage, Usage, WireToolCall};

/// One `data:` payload of the stream.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ChatChunk {
    #[serde(default, deserialize_with = "super::wire::null_default")]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub index: usize,
    #[serde(default)]
    pub delta: Delta,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    /// DeepSeek's reasoning stream.
    #[serde(default)]
    pub reasoning_content: Option<String>,
    /// OpenRouter's and Ollama's reasoning stream.
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default, deserialize_with = "super::wire::null_default")]
    pub tool_calls: Vec<ToolCallDelta>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ToolCallDelta {
    #[serde(default)]
    pub index: usize,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

/// Why a stream could not be folded into an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error("a stream chunk is not valid JSON: {0}")]
    BadChunk(String),
    #[error("the stream ended before the answer was complete")]
    Truncated,
}

/// Folds the lines of one streamed answer. Feed it raw bytes as they arrive with
/// [`Assembler::feed`], then call [`Assembler::finish`].
#[derive(Default)]
pub struct Assembler<'a> {
    pending: Vec<u8>,
    content: String,
    calls: Vec<WireToolCall>,
    usage: Option<Usage>,
    finished: bool,
    done: bool,
    on_reasoning: Option<&'a (dyn Fn(&str) + Send + Sync)>,
    on_narration: Option<&'a (dyn Fn(&str) + Send + Sync)>,
    /// Bytes of narration already handed to `on_narration`.
    narrated: usize,
}

impl<'a> Assembler<'a> {
    pub fn new(on_reasoning: Option<&'a (dyn Fn(&str) + Send + Sync)>) -> Self {
        Assembler {
            on_reasoning,
            ..Assembler::default()
        }
    }

    /// Also hands the answer's narration so far to `sink` whenever it grows.
    pub fn narrating(mut self, sink: Option<&'a (dyn Fn(&str) + Send + Sync)>) -> Self {
        self.on_narration = sink;
        self
    }

    /// Takes the next bytes of the body; complete lines are processed at once, a
    /// partial line (or a UTF-8 sequence cut in two) waits for the next bytes.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.line(&String::from_utf8_lossy(&line))?;
        }
        Ok(())
    }

    fn line(&mut self, line: &str) -> Result<(), StreamError> {
        let line = line.trim_end_matches(['\r', '\n']);
        // Comments (": keep-alive"), event names and blank separators carry nothing.
        let Some(data) = line.strip_prefix("data:") else {
            return Ok(());
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: ChatChunk =
            serde_json::from_str(data).map_err(|e| StreamError::BadChunk(e.to_string()))?;
        self.chunk(chunk);
        Ok(())
    }

    fn chunk(&mut self, chunk: ChatChunk) {
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        // Luna asks for one answer (`n` = 1): only choice 0 counts.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            let delta = choice.delta;
            if let Some(text) = delta.content {
                self.content.push_str(&text);
                self.narrate();
            }
            if let Some(sink) = self.on_reasoning {
                for text in [&delta.reasoning_content, &delta.reasoning]
                    .into_iter()
                    .flatten()
                    .filter(|t| !t.is_empty())
                {
                    sink(text);
                }
            }
            for part in delta.tool_calls {
                self.tool_call(part);
            }
            if choice.finish_reason.is_some() {
                self.finished = true;
            }
        }
    }

    fn narrate(&mut self) {
        let Some(sink) = self.on_narration else {
            return;
        };
        if let Some(so_far) = super::partial::narration_so_far(&self.content) {
            if so_far.len() > self.narrated {
                self.narrated = so_far.len();
                sink(&so_far);
            }
        }
    }

    fn tool_call(&mut self, part: ToolCallDelta) {
        while self.calls.len() <= part.index {
            self.calls.push(WireToolCall {
                id: String::new(),
                kind: "function".to_owned(),
                function: FunctionCall {
                    name: String::new(),
                    arguments: String::new(),
                },
            });
        }
        let call = &mut self.calls[part.index];
        if let Some(id) = part.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(function) = part.function {
            if let Some(name) = function.name {
                call.function.name.push_str(&name);
            }
            if let Some(arguments) = function.arguments {
                call.function.arguments.push_str(&arguments);
            }
        }
    }

    /// The whole answer. A stream is complete once it sent `[DONE]` or a
    /// `finish_reason`; anything shorter is `Truncated` (a provider failure, retried
    /// like one).
    pub fn finish(mut self) -> Result<(ResponseMessage, Option<Usage>), StreamError> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.line(&String::from_utf8_lossy(&rest))?;
        }
        if !self.finished && !self.done {
            return Err(StreamError::Truncated);
        }
        let message = ResponseMessage {
            content: (!self.content.is_empty()).then_some(self.content),
            tool_calls: self
                .calls
                .into_iter()
                .filter(|c| !c.function.name.is_empty())
                .collect(),
        };
        Ok((message, self.usage))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn sse(chunks: &[serde_json::Value]) -> String {
        let mut body = String::new();
        for c in chunks {
            body.push_str(&format!("data: {c}\n\n"));
        }
        body.push_str("data: [DONE]\n\n");
        body
    }

    #[test]
    fn tool_call_arguments_arrive_in_fragments_and_are_joined_by_index() {
        let body = sse(&[
            serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[
                {"index":0,"id":"call_a","type":"function","function":{"name":"market_count","arguments":""}}]}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[
                {"index":0,"function":{"arguments":"{\"filters\":{\"es"}}]}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[
                {"index":1,"id":"call_b","function":{"name":"market_search","arguments":"{}"}}]}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[
                {"index":0,"function":{"arguments":"tado\":\"Jalisco\"}}"}}]},"finish_reason":"tool_calls"}]}),
            serde_json::json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}),
        ]);
        // Cut the body at awkward places, including inside a multi-byte character.
        let mut a = Assembler::new(None);
        for piece in body.as_bytes().chunks(7) {
            a.feed(piece).unwrap();
        }
        let (message, usage) = a.finish().unwrap();
        assert_eq!(message.tool_calls.len(), 2);
        assert_eq!(message.tool_calls[0].id, "call_a");
        assert_eq!(message.tool_calls[0].function.name, "market_count");
        assert_eq!(
            message.tool_calls[0].function.arguments,
            r#"{"filters":{"estado":"Jalisco"}}"#
        );
        assert_eq!(message.tool_calls[1].function.name, "market_search");
        assert_eq!(usage.unwrap().completion_tokens, Some(5));
    }

    #[test]
    fn content_is_joined_across_chunks_and_multibyte_cuts() {
        let body = sse(&[
            serde_json::json!({"choices":[{"index":0,"delta":{"content":"{\"narracion\":\"Añadí "}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"content":"tres compañías\"}"},"finish_reason":"stop"}]}),
        ]);
        let mut a = Assembler::new(None);
        for piece in body.as_bytes().chunks(3) {
            a.feed(piece).unwrap();
        }
        let (message, _) = a.finish().unwrap();
        assert_eq!(
            message.content.as_deref(),
            Some("{\"narracion\":\"Añadí tres compañías\"}")
        );
    }

    #[test]
    fn reasoning_goes_to_the_live_sink_and_never_into_the_answer() {
        let seen = Mutex::new(String::new());
        let sink = |t: &str| seen.lock().unwrap().push_str(t);
        let body = sse(&[
            serde_json::json!({"choices":[{"index":0,"delta":{"reasoning_content":"Primero cuento "}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"reasoning":"el universo."}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"content":"{}"},"finish_reason":"stop"}]}),
        ]);
        let mut a = Assembler::new(Some(&sink));
        a.feed(body.as_bytes()).unwrap();
        let (message, _) = a.finish().unwrap();
        assert_eq!(message.content.as_deref(), Some("{}"));
        assert_eq!(*seen.lock().unwrap(), "Primero cuento el universo.");
    }

    #[test]
    fn a_cut_stream_or_a_broken_chunk_is_an_error_not_an_answer() {
        let mut a = Assembler::new(None);
        a.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"narr\"}}]}\n\n")
            .unwrap();
        assert_eq!(a.finish().unwrap_err(), StreamError::Truncated);

        let mut a = Assembler::new(None);
        assert!(matches!(
            a.feed(b"data: {no es json}\n"),
            Err(StreamError::BadChunk(_))
        ));
    }

    #[test]
    fn keep_alive_comments_and_event_lines_are_ignored() {
        let mut a = Assembler::new(None);
        a.feed(b": keep-alive\n\nevent: message\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\n")
            .unwrap();
        assert_eq!(a.finish().unwrap().0.content.as_deref(), Some("{}"));
    }
}
