//! Input schemas derived from Rust argument types with `schemars`, normalised to the
//! registry's root rules: an object with `additionalProperties:false` and `required`.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};

pub use crate::base::bounds::{
    field_values, opt_field_values, DATE_MAX, DOC_MAX, FIELDS_MAX, ID_MAX, LIST_MAX, NAME_MAX,
    TEXT_MAX,
};

/// Derives `A`'s JSON Schema (draft 2020-12, subschemas inlined so every client and
/// model sees closed enums in place) and applies the root rules.
pub fn input_schema<A: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    normalize_root(&mut schema);
    schema
}

/// Removes noise (`title`, `$schema`) and makes the root rules explicit.
pub fn normalize_root(schema: &mut Value) {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        // The tool's own description says what it does; the args struct's doc
        // comment (English, for programmers) must not leak to clients.
        obj.remove("description");
        obj.entry("type").or_insert_with(|| json!("object"));
        obj.entry("properties").or_insert_with(|| json!({}));
        obj.insert("additionalProperties".into(), Value::Bool(false));
        obj.entry("required").or_insert_with(|| json!([]));
    }
}

/// Checks the root rules; returns what is wrong, if anything.
pub fn root_rule_violations(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if schema.get("type") != Some(&json!("object")) {
        out.push("root type is not object".to_owned());
    }
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        out.push("root additionalProperties is not false".to_owned());
    }
    if !schema.get("required").is_some_and(Value::is_array) {
        out.push("root has no required array".to_owned());
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        out.push("root has no properties object".to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        kind: Kind,
        limit: Option<u32>,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Kind {
        Suppliers,
        Awards,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Empty {}

    #[test]
    fn derived_schemas_are_closed_objects_with_required_and_inlined_enums() {
        let s = input_schema::<Args>();
        assert!(root_rule_violations(&s).is_empty(), "{s}");
        assert_eq!(s["required"], json!(["kind"]));
        assert_eq!(
            s["properties"]["kind"]["enum"],
            json!(["suppliers", "awards"])
        );
        assert!(s.get("$defs").is_none() && s.get("$schema").is_none());
    }

    #[test]
    fn an_argument_free_tool_still_gets_an_empty_required_list() {
        let s = input_schema::<Empty>();
        assert_eq!(s["required"], json!([]));
        assert_eq!(s["additionalProperties"], json!(false));
    }
}
