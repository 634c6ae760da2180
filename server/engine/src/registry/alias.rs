//! Legacy names (CONTRACT §5 rule 1, seed 000 §1 and §6): hidden aliases that translate
//! arguments for one release (60 days from a configured date), then answer
//! `UNKNOWN_TOOL` naming the replacement; and the deleted names, which have no alias.

use chrono::NaiveDate;
use luna_protocol::error::{ErrorBody, ErrorCode};
use serde_json::{json, Map, Value};

use crate::base::error::EngineError;

/// Brand prefixes of the old public names: `driftless_<name>` and `brein_<name>`.
pub const BRAND_PREFIXES: [&str; 2] = ["driftless_", "brein_"];

/// How long a legacy name keeps working after the release date.
pub const ALIAS_WINDOW_DAYS: i64 = 60;

/// The default release date the alias window counts from (this release). Override it
/// with `LUNA_ALIAS_RELEASE_DATE` (YYYY-MM-DD) in the server configuration.
pub const DEFAULT_ALIAS_RELEASE_DATE: &str = "2026-12-01";

/// How an old name's arguments become the new tool's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Translate {
    /// Same arguments.
    Same,
    /// The five old searches: `market_search{kind, query?, limit?, cursor?, filters}`.
    SearchKind(&'static str),
    /// `market_count_suppliers{state?, …}` → `market_count{states:[state], filters}`.
    CountSuppliers,
    /// `context_get_for_files{paths}` → `context_retrieve{files}`.
    FilesToRetrieve,
}

/// A renamed or merged tool.
#[derive(Debug, Clone, Copy)]
pub struct LegacyName {
    pub legacy: &'static str,
    pub target: &'static str,
    pub translate: Translate,
}

/// The 13 old market names (12 renamed or merged; `market_capabilities` kept its name
/// and is covered by the brand prefixes), the 3 merged Cerebro reads and the CRM
/// rename. Targets that no family has registered yet resolve once they register.
pub const LEGACY_NAMES: &[LegacyName] = &[
    LegacyName {
        legacy: "market_search_suppliers",
        target: "market_search",
        translate: Translate::SearchKind("suppliers"),
    },
    LegacyName {
        legacy: "market_search_opportunities",
        target: "market_search",
        translate: Translate::SearchKind("opportunities"),
    },
    LegacyName {
        legacy: "market_search_awards",
        target: "market_search",
        translate: Translate::SearchKind("awards"),
    },
    LegacyName {
        legacy: "market_search_permits",
        target: "market_search",
        translate: Translate::SearchKind("permits"),
    },
    LegacyName {
        legacy: "market_search_risks",
        target: "market_search",
        translate: Translate::SearchKind("risks"),
    },
    LegacyName {
        legacy: "market_get_supplier",
        target: "market_get",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "market_get_opportunity",
        target: "market_get",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "market_count_suppliers",
        target: "market_count",
        translate: Translate::CountSuppliers,
    },
    LegacyName {
        legacy: "market_compare_segments",
        target: "market_compare",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "market_aggregate_awards",
        target: "market_aggregate",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "market_get_supplier_history",
        target: "market_history",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "market_screen_risks",
        target: "market_screen",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "context_search",
        target: "context_retrieve",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "context_list",
        target: "context_retrieve",
        translate: Translate::Same,
    },
    LegacyName {
        legacy: "context_get_for_files",
        target: "context_retrieve",
        translate: Translate::FilesToRetrieve,
    },
    LegacyName {
        legacy: "collection_record",
        target: "crm_record",
        translate: Translate::Same,
    },
];

/// The old market names as the public skills wrote them (seed 000 §1: 13 tools).
pub const OLD_MARKET_NAMES: [&str; 13] = [
    "market_capabilities",
    "market_search_suppliers",
    "market_search_opportunities",
    "market_search_awards",
    "market_search_permits",
    "market_search_risks",
    "market_get_supplier",
    "market_get_opportunity",
    "market_count_suppliers",
    "market_compare_segments",
    "market_aggregate_awards",
    "market_get_supplier_history",
    "market_screen_risks",
];

/// Deleted tools (seed 000 §1, verdict DELETE). They never resolve, with or without a
/// brand prefix. The seed's DELETE rows name these 21 tools plus the two per-connection
/// families `<conexión>_records` and `<conexión>_document_content` (matched by suffix);
/// its summary line counts 25.
pub const DELETED_NAMES: &[&str] = &[
    "context_share",
    "note_add",
    "context_comment",
    "context_graph",
    "context_relations",
    "context_propose",
    "context_approve",
    "context_merge",
    "context_create_proposal",
    "context_proposals",
    "context_events",
    "context_doctor",
    "collection",
    "collection_purge",
    "collection_record_delete",
    "entity",
    "areas",
    "tags",
    "contact_prepare",
    "members",
    "broker",
];

/// Synthesized per-connection tools of the retired broker, deleted as families.
pub const DELETED_SUFFIXES: &[&str] = &["_records", "_document_content"];

/// Removes a brand prefix, if any.
pub fn strip_brand(name: &str) -> Option<&str> {
    BRAND_PREFIXES.iter().find_map(|p| name.strip_prefix(p))
}

pub fn is_deleted(name: &str) -> bool {
    let bare = strip_brand(name).unwrap_or(name);
    DELETED_NAMES.contains(&bare)
        || DELETED_SUFFIXES
            .iter()
            .any(|s| bare.ends_with(s) && bare.len() > s.len())
}

pub fn legacy(name: &str) -> Option<&'static LegacyName> {
    let bare = strip_brand(name).unwrap_or(name);
    LEGACY_NAMES.iter().find(|l| l.legacy == bare)
}

/// Milliseconds at which aliases stop resolving for a release date.
pub fn expiry_ms(release: NaiveDate) -> i64 {
    let end = release + chrono::Duration::days(ALIAS_WINDOW_DAYS);
    end.and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc().timestamp_millis())
        .unwrap_or(i64::MAX)
}

pub fn parse_release_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}

pub fn default_expiry_ms() -> i64 {
    parse_release_date(DEFAULT_ALIAS_RELEASE_DATE)
        .map(expiry_ms)
        .unwrap_or(i64::MAX)
}

/// Translates old arguments to the new tool's shape.
pub fn translate(how: Translate, args: Value) -> Value {
    let mut obj = match args {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    match how {
        Translate::Same => Value::Object(obj),
        Translate::FilesToRetrieve => {
            if let Some(paths) = obj.remove("paths") {
                obj.entry("files").or_insert(paths);
            }
            Value::Object(obj)
        }
        Translate::SearchKind(kind) => {
            let mut out = Map::new();
            out.insert("kind".into(), json!(kind));
            let mut filters = take_filters(&mut obj);
            for key in ["query", "limit", "cursor"] {
                if let Some(v) = obj.remove(key) {
                    out.insert(key.into(), v);
                }
            }
            filters.extend(obj);
            out.insert("filters".into(), Value::Object(filters));
            Value::Object(out)
        }
        Translate::CountSuppliers => {
            let mut out = Map::new();
            let mut filters = take_filters(&mut obj);
            if let Some(states) = obj.remove("states") {
                out.insert("states".into(), states);
            } else if let Some(state) = obj.remove("state") {
                out.insert("states".into(), json!([state]));
            }
            filters.extend(obj);
            out.insert("filters".into(), Value::Object(filters));
            Value::Object(out)
        }
    }
}

fn take_filters(obj: &mut Map<String, Value>) -> Map<String, Value> {
    match obj.remove("filters") {
        Some(Value::Object(f)) => f,
        _ => Map::new(),
    }
}

/// `UNKNOWN_TOOL` for a name that does not exist on this surface.
pub fn unknown_tool(name: &str, available: Vec<String>) -> EngineError {
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::UnknownTool,
            format!("No existe una herramienta llamada «{name}»."),
            "Usa uno de los nombres de la lista de herramientas.",
        )
        .with_allowed_values(available),
    )
}

/// `UNKNOWN_TOOL` for a deleted tool: no alias, no replacement.
pub fn deleted_tool(name: &str) -> EngineError {
    EngineError::typed(
        ErrorCode::UnknownTool,
        format!("La herramienta «{name}» se retiró y ya no está disponible."),
        "No tiene reemplazo como herramienta; esa acción se hace desde la aplicación, por una persona.",
    )
}

/// `UNKNOWN_TOOL` for a legacy name past its window, naming the replacement.
pub fn expired_alias(name: &str, target: &str) -> EngineError {
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::UnknownTool,
            format!("El nombre «{name}» dejó de funcionar."),
            format!("Usa «{target}» en su lugar."),
        )
        .with_allowed_values([target.to_owned()]),
    )
}

/// The `next_action` a result carries when it was called by a legacy name.
pub fn replacement_note(name: &str, target: &str, how: Translate, expires_ms: i64) -> String {
    let date = chrono::DateTime::from_timestamp_millis(expires_ms)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "una fecha próxima".to_owned());
    let extra = match how {
        Translate::SearchKind(kind) => format!(" con kind «{kind}»"),
        _ => String::new(),
    };
    format!("«{name}» es un nombre heredado: usa «{target}»{extra}. Este nombre deja de funcionar el {date}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_searches_move_their_filters_under_filters_and_gain_a_kind() {
        let out = translate(
            Translate::SearchKind("suppliers"),
            json!({"query": "empaque", "state": "Jalisco", "limit": 10}),
        );
        assert_eq!(
            out,
            json!({"kind": "suppliers", "query": "empaque", "limit": 10, "filters": {"state": "Jalisco"}})
        );
    }

    #[test]
    fn old_count_turns_one_state_into_the_states_list() {
        let out = translate(
            Translate::CountSuppliers,
            json!({"state": "Jalisco", "scian": "322"}),
        );
        assert_eq!(
            out,
            json!({"states": ["Jalisco"], "filters": {"scian": "322"}})
        );
    }

    #[test]
    fn every_old_market_name_but_capabilities_has_a_legacy_entry() {
        for name in OLD_MARKET_NAMES {
            let has = legacy(name).is_some() || name == "market_capabilities";
            assert!(has, "{name}");
            assert!(
                legacy(&format!("driftless_{name}")).is_some() || name == "market_capabilities"
            );
        }
    }

    #[test]
    fn deleted_names_match_with_prefix_and_per_connection_suffix() {
        assert!(is_deleted("broker"));
        assert!(is_deleted("driftless_broker"));
        assert!(is_deleted("brein_context_share"));
        assert!(is_deleted("hubspot_records"));
        assert!(!is_deleted("_records"));
        assert!(!is_deleted("usage"));
        // No deleted name is also a legacy alias.
        assert!(DELETED_NAMES.iter().all(|d| legacy(d).is_none()));
    }

    #[test]
    fn the_window_is_sixty_days_from_the_release_date() {
        let d = parse_release_date("2026-12-01").unwrap();
        let exp = chrono::DateTime::from_timestamp_millis(expiry_ms(d)).unwrap();
        assert_eq!(exp.format("%Y-%m-%d").to_string(), "2027-01-30");
    }
}
