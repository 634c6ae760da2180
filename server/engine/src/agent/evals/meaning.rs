//! Meaning checks for the brief bench (issue 22): an expected tool call is matched as a
//! subset of the arguments actually sent, with catalogue-aware equality (a state by
//! its normalised entity, a buyer by its acronym, a giro by its SCIAN giro, a date by
//! its day), plus the board before and after a turn, so a turn that changes the
//! selection, the saved list or a draft the person did not ask about is counted.
//!
//! Matching rules for `args` (expected ⊆ actual):
//! - object: every expected key is present and matches (`null` = absent or null);
//! - array: set-equal (same length, each expected element matches a distinct one);
//! - number: equal; bool: equal; string: equal after Spanish folding, except free-text
//!   keys (`query`, `brief`, `content`, `title`, `summary`, `patch`, `why`, `name`),
//!   where the actual text must contain the expected one;
//! - `state`/`states`: same entity («CDMX» = «Ciudad de México»); `buyer`: same buyer
//!   (acronym or full name); `giro`: same SCIAN giro, also when the call put it in
//!   `query` or as a `scian` prefix; `date_from`/`date_to`: same day (`2023` =
//!   `2023-01-01` as a start, `2023-12-31` as an end); placeholders `{this_year}`,
//!   `{last_year}`, `{this_month}`, `{today}` resolve to the day the bench runs;
//! - operators, an object whose keys all start with `$`: `$len` (array length),
//!   `$includes` (each listed element is in the array), `$within` (every element of
//!   the array is one of the listed), `$each` (every element matches), `$one_of` (a
//!   scalar equal to one of the listed).

use chrono::{Datelike, NaiveDate, Utc};
use luna_protocol::board::Board;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::agent::contract::trajectory::Trajectory;
use crate::base::catalog::scian::Giro;
use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text::fold;
use crate::market::filters::MarketFilters;
use crate::market::generator::BUYERS;
use crate::market::types::{AggregateArgs, CountArgs, SearchArgs};

/// One expected tool call: the tool and a partial view of its arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub args: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Keys the issue asks for that today's schemas do not have yet. The bench is the
/// target: an expectation may use them, and the schema check accepts them.
pub const TARGET_KEYS: &[(&str, &str)] = &[
    // Several states in one search or ranking (issue 22: `states[]`, at most 5).
    ("market_search", "states"),
    ("market_aggregate", "states"),
    // «guárdalos en Contactado»: the save card proposes the stage.
    ("crm_save_companies", "stage"),
];

const FREE_TEXT: &[&str] = &[
    "query", "brief", "content", "title", "summary", "patch", "why", "name",
];

const OPERATORS: &[&str] = &["$len", "$includes", "$within", "$each", "$one_of"];

/// What a turn did to the board: compared before and after the turn (before the
/// person resolves any card).
#[derive(Debug, Clone, Default)]
pub struct BoardDelta {
    pub selection_changed: bool,
    pub saved_changed: bool,
    pub drafts_changed: bool,
    pub selection_len: usize,
}

impl BoardDelta {
    pub fn between(before: &Board, after: &Board) -> Self {
        BoardDelta {
            selection_changed: before.selection != after.selection,
            saved_changed: before.saved != after.saved,
            drafts_changed: before.sequences != after.sequences,
            selection_len: after.selection.len(),
        }
    }
}

/// Failures of the expected calls against a turn's recorded calls.
pub fn call_failures(expected: &[ExpectedCall], t: &Trajectory) -> Vec<String> {
    let mut failures = Vec::new();
    for want in expected {
        let calls: Vec<_> = t.tool_calls().filter(|c| c.tool == want.tool).collect();
        if calls.is_empty() {
            failures.push(format!("{} was not called", want.tool));
            continue;
        }
        let mut reasons = Vec::new();
        let mut matched = false;
        for call in &calls {
            if !call.ok {
                reasons.push(format!(
                    "failed ({})",
                    call.error_code.as_deref().unwrap_or("error")
                ));
                continue;
            }
            let actual = lift_giro(&call.tool, &call.args);
            match matches("", "", &want.args, Some(&actual)) {
                Ok(()) => {
                    matched = true;
                    break;
                }
                Err(why) => reasons.push(why),
            }
        }
        if !matched {
            failures.push(format!(
                "{} called with other arguments: {}",
                want.tool,
                reasons.join(" / ")
            ));
        }
    }
    failures
}

/// What a market call asked for, through the tool's own arguments type: its filters,
/// its state list and its free text. Other tools, and arguments a tool does not take,
/// give nothing to lift.
fn market_ask(tool: &str, args: &Value) -> Option<(MarketFilters, Vec<String>, Option<String>)> {
    let args = args.clone();
    match tool {
        "market_search" => serde_json::from_value::<SearchArgs>(args)
            .ok()
            .map(|a| (a.filters, a.states, a.query)),
        "market_count" => serde_json::from_value::<CountArgs>(args)
            .ok()
            .map(|a| (a.filters, a.states, None)),
        "market_aggregate" => serde_json::from_value::<AggregateArgs>(args)
            .ok()
            .map(|a| (a.filters, a.states, None)),
        _ => None,
    }
}

/// A giro written as the search text (`query: "empaque"`) counts as the giro filter,
/// and a single entry in `states` as the `state` filter. The call's arguments are read
/// through its tool's type; the lifted filters are written into the JSON the
/// expectations are matched against.
fn lift_giro(tool: &str, args: &Value) -> Value {
    let mut out = args.clone();
    let (Some((filters, states, query)), Some(obj)) = (market_ask(tool, args), out.as_object_mut())
    else {
        return out;
    };
    // One state in `states` is the same as the `state` filter.
    let state = match (filters.state, states.as_slice()) {
        (Some(s), _) => Some(s),
        (None, [only]) => Some(only.clone()),
        (None, _) => None,
    };
    let giro = filters.giro.or_else(|| {
        match query.as_deref().and_then(|q| Giro::parse(q).ok()) {
            Some(g) => Some(g),
            None => filters.scian.as_deref().and_then(|scian| {
                Giro::ALL
                    .iter()
                    .find(|g| g.codes().iter().any(|c| c.starts_with(scian)))
                    .copied()
            }),
        }
        .map(|g| g.key().to_owned())
    });
    let f = obj
        .entry("filters")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(f) = f.as_object_mut() {
        for (key, value) in [("state", state), ("giro", giro)] {
            if let Some(v) = value {
                f.insert(key.into(), Value::String(v));
            }
        }
    }
    out
}

fn at(path: &str, key: &str) -> String {
    match (path.is_empty(), key.is_empty()) {
        (true, _) => key.to_owned(),
        (false, true) => path.to_owned(),
        (false, false) => format!("{path}.{key}"),
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 80 {
                format!("{}…", s.chars().take(80).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn is_operator(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| !o.is_empty() && o.keys().all(|k| k.starts_with('$')))
}

/// Whether `actual` (at `path`, under object key `key`) satisfies `expected`.
pub fn matches(
    path: &str,
    key: &str,
    expected: &Value,
    actual: Option<&Value>,
) -> Result<(), String> {
    let here = at(path, key);
    let mismatch = || {
        Err(format!(
            "{here}: got {}, expected {}",
            show(actual),
            show(Some(expected))
        ))
    };
    if expected.is_null() {
        return match actual {
            None | Some(Value::Null) => Ok(()),
            Some(_) => mismatch(),
        };
    }
    if is_operator(expected) {
        return operators(&here, key, expected, actual);
    }
    let Some(actual) = actual.filter(|a| !a.is_null()) else {
        return mismatch();
    };
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (k, v) in want {
                matches(&here, k, v, got.get(k))?;
            }
            Ok(())
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() != got.len() {
                return Err(format!(
                    "{here}: got {} items, expected {}",
                    got.len(),
                    want.len()
                ));
            }
            set_match(&here, key, want, got)
        }
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) if (a - b).abs() <= 1e-6 * a.abs().max(1.0) => Ok(()),
            _ => mismatch(),
        },
        (Value::Bool(a), Value::Bool(b)) if a == b => Ok(()),
        (Value::String(a), Value::String(b)) if strings_match(key, a, b) => Ok(()),
        _ => mismatch(),
    }
}

/// Each expected element matches a distinct actual element (greedy, in order).
fn set_match(path: &str, key: &str, want: &[Value], got: &[Value]) -> Result<(), String> {
    let elem_key = element_key(key);
    let mut used = vec![false; got.len()];
    for w in want {
        let mut why = String::new();
        let found = got.iter().enumerate().position(|(i, g)| {
            if used[i] {
                return false;
            }
            match matches(path, elem_key, w, Some(g)) {
                Ok(()) => true,
                Err(e) => {
                    why = e;
                    false
                }
            }
        });
        match found {
            Some(i) => used[i] = true,
            None => {
                return Err(format!(
                    "{}: no item matches {} ({why})",
                    at(path, key),
                    show(Some(w))
                ))
            }
        }
    }
    Ok(())
}

/// The key an array's elements compare under (`states` → `state`).
fn element_key(key: &str) -> &str {
    match key {
        "states" => "state",
        "rfcs" => "rfc",
        other => other,
    }
}

fn operators(
    here: &str,
    key: &str,
    expected: &Value,
    actual: Option<&Value>,
) -> Result<(), String> {
    let ops = expected.as_object().cloned().unwrap_or_default();
    let elem_key = element_key(key);
    let items: Vec<Value> = match actual {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    for (op, arg) in &ops {
        let ok = match op.as_str() {
            "$len" => arg
                .as_u64()
                .is_some_and(|n| matches!(actual, Some(Value::Array(a)) if a.len() as u64 == n)),
            "$includes" => {
                matches!(actual, Some(Value::Array(_)))
                    && arg.as_array().is_some_and(|want| {
                        want.iter().all(|w| {
                            items
                                .iter()
                                .any(|g| matches(here, elem_key, w, Some(g)).is_ok())
                        })
                    })
            }
            "$within" => {
                matches!(actual, Some(Value::Array(_)))
                    && arg.as_array().is_some_and(|allowed| {
                        items.iter().all(|g| {
                            allowed
                                .iter()
                                .any(|w| matches(here, elem_key, w, Some(g)).is_ok())
                        })
                    })
            }
            "$each" => {
                matches!(actual, Some(Value::Array(a)) if !a.is_empty())
                    && items
                        .iter()
                        .all(|g| matches(here, elem_key, arg, Some(g)).is_ok())
            }
            "$one_of" => arg
                .as_array()
                .is_some_and(|options| options.iter().any(|w| matches("", key, w, actual).is_ok())),
            _ => false,
        };
        if !ok {
            return Err(format!(
                "{here}: got {}, expected {op} {}",
                show(actual),
                show(Some(arg))
            ));
        }
    }
    Ok(())
}

fn strings_match(key: &str, want: &str, got: &str) -> bool {
    match key {
        "state" => match (
            State::normalize(want, StateContext::Filter),
            State::normalize(got, StateContext::Filter),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => fold(want) == fold(got),
        },
        "buyer" => buyer(want) == buyer(got),
        "giro" => match (Giro::parse(want), Giro::parse(got)) {
            (Ok(a), Ok(b)) => a == b,
            _ => fold(want) == fold(got),
        },
        "topic" => {
            fold(want.trim_start_matches("topic:")) == fold(got.trim_start_matches("topic:"))
        }
        "date_from" | "date_to" => day(want, key == "date_to") == day(got, key == "date_to"),
        "query" => {
            matches!((Giro::parse(want), Giro::parse(got)), (Ok(a), Ok(b)) if a == b)
                || contains_words(got, want)
        }
        k if FREE_TEXT.contains(&k) => contains_words(got, want),
        _ => fold(want) == fold(got),
    }
}

fn contains_words(haystack: &str, needle: &str) -> bool {
    format!(" {} ", fold(haystack)).contains(&format!(" {} ", fold(needle)))
}

/// A buyer by its acronym when it is a known federal buyer.
fn buyer(s: &str) -> String {
    let f = fold(s);
    BUYERS
        .iter()
        .find(|(abbr, full)| fold(abbr) == f || fold(full) == f)
        .map_or(f, |(abbr, _)| fold(abbr))
}

/// A date as a day: `2023` → `2023-01-01` (or `-12-31` as an end), `2023-05` → its
/// first (or last) day; placeholders resolve to the day the bench runs.
fn day(s: &str, end: bool) -> String {
    let today = Utc::now().date_naive();
    let s = s
        .replace("{this_year}", &today.year().to_string())
        .replace("{last_year}", &(today.year() - 1).to_string())
        .replace("{this_month}", &today.format("%Y-%m").to_string())
        .replace("{today}", &today.format("%Y-%m-%d").to_string());
    let s = s.trim();
    let parts: Vec<&str> = s.split('-').collect();
    let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u32>().ok());
    let date = match (num(0), num(1), num(2), parts.len()) {
        (Some(y), _, _, 1) => {
            NaiveDate::from_ymd_opt(y as i32, if end { 12 } else { 1 }, if end { 31 } else { 1 })
        }
        (Some(y), Some(m), _, 2) => {
            let first = NaiveDate::from_ymd_opt(y as i32, m, 1);
            if end {
                first.and_then(|d| {
                    d.checked_add_months(chrono::Months::new(1))
                        .and_then(|n| n.pred_opt())
                })
            } else {
                first
            }
        }
        (Some(y), Some(m), Some(d), 3) => NaiveDate::from_ymd_opt(y as i32, m, d),
        _ => None,
    };
    date.map_or_else(|| fold(s), |d| d.format("%Y-%m-%d").to_string())
}

/// Every key of `args` exists in `schema` (descending into objects, array items and
/// `anyOf`/`oneOf` branches); operators are looked through. Returns the unknown paths.
pub fn unknown_keys(tool: &str, args: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(tool, "", args, schema, schema, &mut out);
    out
}

fn walk(tool: &str, path: &str, args: &Value, schema: &Value, root: &Value, out: &mut Vec<String>) {
    let schema = resolve(schema, root);
    if is_operator(args) {
        for (op, arg) in args.as_object().into_iter().flatten() {
            if !OPERATORS.contains(&op.as_str()) {
                out.push(format!("{tool}: {path}: unknown operator {op}"));
                continue;
            }
            let item = items_schema(schema, root);
            match (op.as_str(), arg) {
                ("$len", _) => {}
                ("$each", v) => walk(tool, path, v, &item, root, out),
                ("$one_of", Value::Array(vs)) => {
                    for v in vs {
                        walk(tool, path, v, schema, root, out)
                    }
                }
                (_, Value::Array(vs)) => {
                    for v in vs {
                        walk(tool, path, v, &item, root, out)
                    }
                }
                _ => out.push(format!("{tool}: {path}: {op} needs a list")),
            }
        }
        return;
    }
    match args {
        Value::Object(obj) => {
            for (k, v) in obj {
                let here = at(path, k);
                match property(schema, k, root) {
                    Some(sub) => walk(tool, &here, v, &sub, root, out),
                    None if path.is_empty() && TARGET_KEYS.contains(&(tool, k.as_str())) => {}
                    None => out.push(format!("{tool}: unknown argument {here}")),
                }
            }
        }
        Value::Array(items) => {
            let item = items_schema(schema, root);
            for v in items {
                walk(tool, path, v, &item, root, out);
            }
        }
        _ => {}
    }
}

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or(schema),
        None => schema,
    }
}

fn branches<'a>(schema: &'a Value, root: &'a Value) -> Vec<&'a Value> {
    let schema = resolve(schema, root);
    let mut all = vec![schema];
    for k in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(bs)) = schema.get(k) {
            for b in bs {
                all.extend(branches(b, root));
            }
        }
    }
    all
}

fn property(schema: &Value, key: &str, root: &Value) -> Option<Value> {
    branches(schema, root).into_iter().find_map(|b| {
        b.get("properties")
            .and_then(|p| p.get(key))
            .cloned()
            .or_else(|| {
                b.get("additionalProperties")
                    .filter(|a| a.is_object())
                    .cloned()
            })
    })
}

fn items_schema(schema: &Value, root: &Value) -> Value {
    branches(schema, root)
        .into_iter()
        .find_map(|b| b.get("items").cloned())
        .unwrap_or(Value::Null)
}
