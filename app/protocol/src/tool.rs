//! The tool result envelope (CONTRACT §5 rule 7) and the descriptors the browser needs to
//! list tools. Every tool returns the same envelope whichever surface called it.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ErrorEnvelope;

/// Whether a result is complete (`ok`), can be continued with `cursor` (`continue`),
/// or is known to be partial (`incomplete`). It is the only completeness signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    Ok,
    Continue,
    Incomplete,
}

/// One row of a result: a stable `ref` (`company:…`, `topic:…`, `record:…`), a
/// `ref_label` to name it without exposing the id, and the row's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct ResultRow {
    #[serde(rename = "ref")]
    pub ref_: String,
    pub ref_label: String,
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl ResultRow {
    pub fn new(ref_: impl Into<String>, ref_label: impl Into<String>) -> Self {
        ResultRow {
            ref_: ref_.into(),
            ref_label: ref_label.into(),
            fields: Map::new(),
        }
    }

    /// Adds a field; a value that fails to serialize becomes `null`.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.fields.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }
}

/// `{ ref, results, shown, has_more, cursor?, coverage?, status, next_action? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct Envelope {
    /// Stable opaque id of this call (`call:…`).
    #[serde(rename = "ref")]
    pub ref_: String,
    pub results: Vec<ResultRow>,
    pub shown: usize,
    pub has_more: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Value>,
    pub status: ResultStatus,
    /// An instruction for the caller (never citable material).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_action: Option<String>,
}

impl Envelope {
    /// A complete result with these rows. The call `ref` is filled by the pipeline.
    pub fn rows(results: Vec<ResultRow>) -> Self {
        Envelope {
            ref_: String::new(),
            shown: results.len(),
            results,
            has_more: false,
            cursor: None,
            coverage: None,
            status: ResultStatus::Ok,
            next_action: None,
        }
    }
}

/// What a tool call returns across a boundary: the envelope, or the uniform error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
#[serde(untagged)]
pub enum ToolOutcome {
    Err(ErrorEnvelope),
    Ok(Envelope),
}

/// A tool the signed-in person may use from the interface, with its Spanish label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ToolSummary {
    pub name: String,
    pub family: String,
    pub label: String,
    /// 0, 1, 2 or "never" (the authorization ladder, CONTRACT §8).
    pub level: String,
    pub read_only: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorBody, ErrorCode};

    #[test]
    fn envelope_rows_flatten_their_fields_next_to_ref_and_label() {
        let env = Envelope::rows(vec![
            ResultRow::new("workspace:ws_1", "Empaques").with("plan", "founder")
        ]);
        let json = serde_json::to_value(&env).unwrap();
        assert_eq!(json["results"][0]["ref"], "workspace:ws_1");
        assert_eq!(json["results"][0]["plan"], "founder");
        assert_eq!(json["status"], "ok");
        assert!(json.get("cursor").is_none());
    }

    #[test]
    fn an_outcome_is_either_an_envelope_or_an_error_object() {
        let err = ToolOutcome::Err(ErrorEnvelope {
            error: ErrorBody::new(ErrorCode::UnknownTool, "m", "h"),
        });
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["error"]["code"], "UNKNOWN_TOOL");
        let back: ToolOutcome = serde_json::from_value(json).unwrap();
        assert_eq!(back, err);
        let ok: ToolOutcome =
            serde_json::from_value(serde_json::to_value(Envelope::rows(vec![])).unwrap()).unwrap();
        assert!(matches!(ok, ToolOutcome::Ok(_)));
    }
}
