//! Argument validation with a real JSON Schema validator (`jsonschema`) before any
//! handler runs. Every failure becomes `INVALID_ARGUMENT` in Spanish, with a `hint`
//! and, for unknown keys and closed enums, the `allowed_values`.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use luna_protocol::error::{ErrorBody, ErrorCode};
use serde_json::Value;

use crate::base::error::EngineError;

/// Compiles a tool's input schema.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| e.to_string())
}

/// Validates `args` (`null` counts as `{}`) and returns the arguments to pass on.
pub fn validate(
    tool: &str,
    schema: &Value,
    validator: &Validator,
    args: Value,
) -> Result<Value, EngineError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    if !args.is_object() {
        return Err(invalid(
            "Los argumentos deben ser un objeto JSON.".to_owned(),
            format!("Llama a {tool} con un objeto, por ejemplo {{}}."),
            None,
        ));
    }
    let mut errors: Vec<ValidationError<'_>> = validator.iter_errors(&args).collect();
    if errors.is_empty() {
        return Ok(args);
    }
    // Report the most actionable failure first: unknown keys, then closed enums,
    // then missing fields, then the rest in schema order.
    errors.sort_by_key(|e| match e.kind() {
        ValidationErrorKind::AdditionalProperties { .. } => 0,
        ValidationErrorKind::Enum { .. } => 1,
        ValidationErrorKind::Required { .. } => 2,
        _ => 3,
    });
    Err(describe(tool, schema, &errors[0]))
}

fn invalid(message: String, hint: String, allowed: Option<Vec<String>>) -> EngineError {
    let mut body = ErrorBody::new(ErrorCode::InvalidArgument, message, hint);
    body.allowed_values = allowed;
    EngineError::Typed(body)
}

/// `/filters/state` → `filters.state`; the root is "los argumentos".
fn field_name(pointer: &str) -> String {
    let trimmed = pointer.trim_start_matches('/');
    if trimmed.is_empty() {
        "los argumentos".to_owned()
    } else {
        format!("«{}»", trimmed.replace('/', "."))
    }
}

fn spanish_type(t: &Value) -> String {
    let one = |s: &str| match s {
        "string" => "texto",
        "integer" => "número entero",
        "number" => "número",
        "boolean" => "true o false",
        "array" => "lista",
        "object" => "objeto",
        "null" => "null",
        _ => "valor",
    };
    match t {
        Value::String(s) => one(s).to_owned(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(one)
            .collect::<Vec<_>>()
            .join(" o "),
        _ => "otro tipo de valor".to_owned(),
    }
}

/// The schema object that holds the failing keyword (parent of `schema_path`).
fn keyword_parent<'a>(schema: &'a Value, schema_path: &str) -> Option<&'a Value> {
    let parent = schema_path.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    schema.pointer(parent)
}

fn describe(tool: &str, schema: &Value, err: &ValidationError<'_>) -> EngineError {
    let at = err.instance_path().as_str().to_owned();
    let field = field_name(&at);
    let schema_path = err.schema_path().as_str().to_owned();
    match err.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed: Vec<String> = keyword_parent(schema, &schema_path)
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            invalid(
                format!(
                    "{tool} no acepta {}: {}.",
                    if unexpected.len() == 1 {
                        "el campo"
                    } else {
                        "los campos"
                    },
                    unexpected
                        .iter()
                        .map(|k| format!("«{k}»"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!(
                    "Quita lo que no está en la lista. Campos válidos en {}: {}.",
                    field,
                    if allowed.is_empty() {
                        "ninguno".to_owned()
                    } else {
                        allowed.join(", ")
                    }
                ),
                Some(allowed),
            )
        }
        ValidationErrorKind::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_owned)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .collect()
                })
                .unwrap_or_default();
            invalid(
                format!("El valor de {field} no es uno de los permitidos."),
                format!("Usa exactamente uno de: {}.", allowed.join(", ")),
                Some(allowed),
            )
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            invalid(
                format!("Falta el campo obligatorio «{name}» en {tool}."),
                format!("Agrega «{name}»; revisa el ejemplo en la descripción de {tool}."),
                None,
            )
        }
        ValidationErrorKind::Type { .. } => {
            let expected = schema
                .pointer(&schema_path)
                .map(spanish_type)
                .unwrap_or_else(|| "otro tipo de valor".to_owned());
            invalid(
                format!("El campo {field} tiene un tipo de valor que no corresponde."),
                format!("{field} debe ser {expected}."),
                None,
            )
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => invalid(
            format!("El valor de {field} es demasiado grande."),
            format!("Usa un valor de hasta {limit}."),
            None,
        ),
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => invalid(
            format!("El valor de {field} es demasiado pequeño."),
            format!("Usa un valor de al menos {limit}."),
            None,
        ),
        ValidationErrorKind::MaxItems { limit } => invalid(
            format!("{field} trae demasiados elementos."),
            format!("Envía como máximo {limit}."),
            None,
        ),
        ValidationErrorKind::MinItems { limit } => invalid(
            format!("{field} trae muy pocos elementos."),
            format!("Envía al menos {limit}."),
            None,
        ),
        ValidationErrorKind::MaxLength { limit } => invalid(
            format!("El texto de {field} es demasiado largo."),
            format!("Usa como máximo {limit} caracteres."),
            None,
        ),
        ValidationErrorKind::MinLength { limit } => invalid(
            format!("El texto de {field} es demasiado corto."),
            format!("Usa al menos {limit} caracteres."),
            None,
        ),
        _ => invalid(
            format!("El valor de {field} no es válido para {tool}."),
            format!("Revisa el esquema de entrada y el ejemplo de {tool}."),
            None,
        ),
    }
}

/// A validated value that still fails to deserialize into the handler's type means
/// the schema and the type disagree: a bug, but the caller gets a typed answer.
pub fn deserialize_error(e: &serde_json::Error) -> EngineError {
    tracing::error!(error = %e, "validated arguments did not deserialize");
    invalid(
        "Los argumentos no tienen la forma que espera la herramienta.".to_owned(),
        "Revisa el ejemplo de la descripción de la herramienta.".to_owned(),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["suppliers", "awards"]},
                "limit": {"type": "integer", "maximum": 50},
                "filters": {"type": "object", "properties": {"state": {"type": "string"}}, "additionalProperties": false}
            },
            "required": ["kind"],
            "additionalProperties": false
        })
    }

    fn check(args: Value) -> ErrorBody {
        let s = schema();
        let v = compile(&s).unwrap();
        validate("market_search", &s, &v, args).unwrap_err().body()
    }

    #[test]
    fn unknown_root_key_lists_the_allowed_keys() {
        let e = check(json!({"kind": "suppliers", "estado": "Jalisco"}));
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("«estado»"), "{}", e.message);
        assert_eq!(e.allowed_values.unwrap(), vec!["filters", "kind", "limit"]);
    }

    #[test]
    fn unknown_nested_key_lists_the_nested_allowed_keys() {
        let e = check(json!({"kind": "suppliers", "filters": {"giro": "x"}}));
        assert_eq!(e.allowed_values.unwrap(), vec!["state"]);
        assert!(e.hint.contains("«filters»"), "{}", e.hint);
    }

    #[test]
    fn bad_enum_value_returns_the_closed_list() {
        let e = check(json!({"kind": "empresas"}));
        assert_eq!(e.allowed_values.unwrap(), vec!["suppliers", "awards"]);
    }

    #[test]
    fn missing_required_and_wrong_type_and_limits_are_typed() {
        assert!(check(json!({})).message.contains("«kind»"));
        let e = check(json!({"kind": "awards", "limit": "diez"}));
        assert!(e.hint.contains("número entero"), "{}", e.hint);
        assert!(check(json!({"kind": "awards", "limit": 80}))
            .hint
            .contains("50"));
        assert!(check(json!([1])).message.contains("objeto"));
    }

    #[test]
    fn valid_arguments_pass_and_null_means_empty() {
        let s = json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false});
        let v = compile(&s).unwrap();
        assert_eq!(validate("usage", &s, &v, Value::Null).unwrap(), json!({}));
    }
}
