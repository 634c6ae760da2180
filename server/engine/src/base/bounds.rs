//! The bounds every input is held to: the longest id, name, text, date and list any
//! tool argument may carry (the registry's schema walk checks that every input has
//! one), and the schema of a free-form field map.

/// Caps on free input. Every string of an input schema has a `maxLength` and every
/// array a `maxItems` (`registry::tests::every_input_is_bounded` walks the catalog), so
/// an oversized argument is `INVALID_ARGUMENT` from the validator before any handler,
/// pattern or statement sees it. Fields use these, or a tighter domain limit.
///
/// Ids, refs, tokens, cursors and idempotency keys.
pub const ID_MAX: u32 = 200;
/// Names, labels, stages, filter values and search text.
pub const NAME_MAX: u32 = 200;
/// A sentence or a paragraph: reasons, summaries, briefs, field values.
pub const TEXT_MAX: u32 = 2_000;
/// A document: a note's body, a proposed edit.
pub const DOC_MAX: u32 = 20_000;
/// A date or date-time (`AAAA-MM-DD`, ISO 8601).
pub const DATE_MAX: u32 = 40;
/// Keys of a field-value map (`fields` of the CRM tools).
pub const FIELDS_MAX: u32 = 50;
/// Entries of a list of ids or names without a tighter domain limit.
pub const LIST_MAX: u32 = 1_000;

/// A CRM field-value map: up to `FIELDS_MAX` keys, each a scalar (text up to `TEXT_MAX`).
pub fn field_values(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": FIELDS_MAX,
        "additionalProperties": {
            "type": ["string", "number", "boolean", "null"],
            "maxLength": TEXT_MAX
        }
    })
}

/// `field_values`, or null.
pub fn opt_field_values(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": ["object", "null"],
        "maxProperties": FIELDS_MAX,
        "additionalProperties": {
            "type": ["string", "number", "boolean", "null"],
            "maxLength": TEXT_MAX
        }
    })
}
