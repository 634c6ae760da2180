//! Typed tool results. A tool whose result the engine reads elsewhere (the runner, the
//! cards, the screen, research runs, the evals) builds its row as a struct next to the
//! tool and turns it into the wire row here, at the edge ([`row`]); the reader decodes
//! the same struct back ([`read`], [`first`]). One definition serves the producer and
//! every consumer, and a drift between them is a typed `INTERNAL` error, never a
//! silently empty value.
//!
//! Engine code outside a tool never reads an envelope field by name; the local
//! director is the exception, since it reads envelopes as a model does.

use luna_protocol::error::ErrorCode;
use luna_protocol::tool::{Envelope, ResultRow};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::base::error::{EngineError, EngineResult};

/// The typed error every drift gives: the detail is logged, the person reads Spanish.
fn drift(what: &str, detail: impl std::fmt::Display) -> EngineError {
    tracing::error!(%detail, "a tool result does not match its typed row: {what}");
    EngineError::typed(
        ErrorCode::Internal,
        format!("No pude leer el resultado de la herramienta ({what})."),
        "Es un error de Luna, no de tus datos: vuelve a intentarlo y, si se repite, avísanos.",
    )
}

/// The wire row of `value`: its fields flattened next to `ref` and `ref_label`, with
/// the struct's own field names. `value` must serialize to a JSON object.
pub fn row<T: Serialize>(
    ref_: impl Into<String>,
    ref_label: impl Into<String>,
    value: &T,
) -> EngineResult<ResultRow> {
    let mut out = ResultRow::new(ref_, ref_label);
    match serde_json::to_value(value) {
        Ok(Value::Object(fields)) => out.fields = fields,
        Ok(other) => return Err(drift(&out.ref_, format!("not an object: {other}"))),
        Err(e) => return Err(drift(&out.ref_, e)),
    }
    Ok(out)
}

/// `row`'s inverse: the row's fields decoded into `T`; a missing field or a value of
/// the wrong type is a typed error naming the row.
pub fn read<T: DeserializeOwned>(row: &ResultRow) -> EngineResult<T> {
    serde_json::from_value(Value::Object(row.fields.clone())).map_err(|e| drift(&row.ref_, e))
}

/// A domain row that carries its own `ref` and `ref_label` (the market's rows, turned
/// into wire rows by moving those two out) decoded from the wire row whole.
pub fn read_whole<T: DeserializeOwned>(row: &ResultRow) -> EngineResult<T> {
    serde_json::to_value(row)
        .and_then(serde_json::from_value)
        .map_err(|e| drift(&row.ref_, e))
}

/// The envelope's first row decoded into `T`; an envelope with no rows is an error too.
pub fn first<T: DeserializeOwned>(env: &Envelope) -> EngineResult<T> {
    match env.results.first() {
        Some(r) => read(r),
        None => Err(drift("sin filas", "the envelope has no rows")),
    }
}

/// A tool call's arguments decoded into the tool's own arguments type (the `A` of
/// `ToolDef::new::<A>`), for engine code that looks at what a tool was asked.
pub fn args<A: DeserializeOwned>(tool: &str, args: &Value) -> EngineResult<A> {
    serde_json::from_value(args.clone()).map_err(|e| drift(tool, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        total: u32,
        token: Option<String>,
    }

    #[test]
    fn a_typed_row_flattens_its_fields_and_reads_back() {
        let r = row(
            "x:1",
            "Uno",
            &Sample {
                total: 3,
                token: None,
            },
        )
        .unwrap();
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"ref": "x:1", "ref_label": "Uno", "total": 3, "token": null})
        );
        let back: Sample = read(&r).unwrap();
        assert_eq!(back.total, 3);
    }

    #[test]
    fn a_drifted_row_is_a_typed_internal_error() {
        let r = ResultRow::new("x:1", "Uno").with("total", "tres");
        let err = read::<Sample>(&r).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Internal);
        let missing = ResultRow::new("x:1", "Uno").with("token", "t");
        assert_eq!(
            read::<Sample>(&missing).unwrap_err().code(),
            ErrorCode::Internal
        );
        assert!(first::<Sample>(&Envelope::rows(vec![])).is_err());
    }
}
