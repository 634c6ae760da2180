//! Registry-wide tests. The first group walks the real catalog, so it keeps
//! checking every tool as later issues register their families; the second drives
//! the pipeline with a few stand-in tools.

use std::sync::Arc;

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::{ErrorBody, ErrorCode};
use luna_protocol::tool::{Envelope, ResultRow, ResultStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::*;
use crate::testkit;
use crate::testkit::World;
use crate::tools::catalog;

// ---------------------------------------------------------------- the real catalog

fn is_snake_case(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with('_')
        && !name.ends_with('_')
        && !name.contains("__")
}

#[test]
fn every_name_is_snake_case_without_brand_and_not_a_retired_name() {
    let reg = catalog();
    for d in reg.all() {
        assert!(is_snake_case(d.name), "{}", d.name);
        assert!(
            alias::strip_brand(d.name).is_none(),
            "{} carries a brand",
            d.name
        );
        assert!(!alias::is_deleted(d.name), "{} is a deleted name", d.name);
        assert!(
            alias::legacy(d.name).is_none(),
            "{} is a legacy name",
            d.name
        );
    }
}

#[test]
fn every_schema_is_a_closed_object_with_required_at_the_root() {
    for d in catalog().all() {
        let v = schema::root_rule_violations(&d.input_schema);
        assert!(v.is_empty(), "{}: {v:?}", d.name);
    }
}

#[test]
fn every_example_validates_and_searches_carry_two() {
    let reg = catalog();
    for d in reg.all() {
        let want = if d.is_search { 2 } else { 1 };
        assert_eq!(
            d.examples.len(),
            want,
            "{} has {} examples",
            d.name,
            d.examples.len()
        );
        let entry = reg.get(d.name).unwrap();
        for ex in &d.examples {
            if let Err(e) = entry.validate(ex.args.clone()) {
                panic!("{} example {} is invalid: {:?}", d.name, ex.args, e.body());
            }
        }
        // The model sees the examples inside the description.
        let full = d.full_description();
        for ex in &d.examples {
            assert!(
                full.contains(&serde_json::to_string(&ex.args).unwrap()),
                "{}",
                d.name
            );
        }
    }
}

#[test]
fn model_definitions_carry_the_examples_and_the_same_schema() {
    for d in catalog().all() {
        let m = d.model_definition();
        assert_eq!(m["function"]["name"], json!(d.name));
        assert_eq!(m["function"]["parameters"], d.input_schema);
        let desc = m["function"]["description"].as_str().unwrap();
        assert!(desc.contains("Ejemplo"), "{}", d.name);
        assert!(m.get("examples").is_none() && m["function"].get("examples").is_none());
    }
}

#[test]
fn every_description_opens_with_when_and_says_when_not() {
    for d in catalog().all() {
        let text = d.description.trim();
        assert!(text.starts_with("Úsala cuando"), "{}: {text}", d.name);
        assert!(text.contains("NO la uses para"), "{}: {text}", d.name);
        assert!(text.contains("(usa "), "{}: {text}", d.name);
        assert!(!d.label.trim().is_empty(), "{} has no label", d.name);
    }
}

#[test]
fn annotations_follow_the_metadata() {
    for d in catalog().all() {
        let a = d.annotations();
        assert_eq!(a.read_only, d.side_effect == SideEffect::None, "{}", d.name);
        assert_eq!(
            a.destructive,
            d.side_effect == SideEffect::Destructive,
            "{}",
            d.name
        );
        assert_eq!(a.idempotent, d.idempotent, "{}", d.name);
        assert_eq!(
            a.open_world,
            d.side_effect == SideEffect::External,
            "{}",
            d.name
        );
        // A tool that reads only is level 0 and never charges contact credits.
        if a.read_only {
            assert_eq!(d.level, Level::L0, "{}", d.name);
            assert_ne!(d.cost_class, CostClass::Contact, "{}", d.name);
        }
    }
}

/// The stages a session can be in (`agent::turn::memory::derive_stage`; `sin_criterio`
/// is no longer derived).
const REACHABLE: [Stage; 5] = [
    Stage::Buscando,
    Stage::ConSeleccion,
    Stage::ConListaGuardada,
    Stage::ConBorrador,
    Stage::DecisionPendiente,
];

/// Every Luna tool can be seen in a stage the product reaches — by the stage's
/// priorities, or when the person's message asks for its job — and each job's tools
/// are in view where the job arises (CONTRACT §7.4).
#[test]
fn every_luna_tool_is_reachable_where_its_job_arises() {
    let reg = catalog();
    let visible = |stage: Stage, message: &str, tool: &str| {
        reg.for_turn(stage, message).iter().any(|d| d.name == tool)
    };
    for d in reg.list(Surface::Luna) {
        let asked = d.cues.first().copied().unwrap_or("");
        assert!(
            REACHABLE
                .iter()
                .any(|s| visible(*s, "", d.name) || visible(*s, asked, d.name)),
            "{} is never in view of Luna",
            d.name
        );
    }
    // A new search while a card waits for the person must still reach the selection.
    for tool in ["market_search", "selection_update"] {
        assert!(
            visible(Stage::DecisionPendiente, "", tool),
            "{tool} while a card waits"
        );
    }
    // Contacts asked for while a card waits (the card of another company's contact).
    for tool in ["people_search", "people_quote"] {
        assert!(
            visible(
                Stage::DecisionPendiente,
                "consígueme el correo de la tercera",
                tool
            ),
            "{tool} asked for while a card waits"
        );
    }
    for tool in ["sequence_update_draft", "sequence_get", "sequence_list"] {
        assert!(visible(Stage::ConBorrador, "", tool), "{tool} with a draft");
    }
    assert!(visible(
        Stage::ConListaGuardada,
        "cambia el asunto del borrador",
        "sequence_update_draft"
    ));
    for tool in ["research_start", "market_compare", "crm_save_companies"] {
        assert!(
            visible(Stage::ConSeleccion, "", tool),
            "{tool} with a selection"
        );
    }
    for stage in REACHABLE {
        for (message, tool) in [
            (
                "deja una nota: el cliente pidió factura global",
                "context_note",
            ),
            (
                "sugiere una edición al playbook de precios",
                "context_suggest_edit",
            ),
            ("¿cuántos créditos me quedan?", "usage"),
            (
                "investiga quién domina el empaque en Jalisco",
                "research_start",
            ),
            ("busca fabricantes de muebles en Puebla", "market_search"),
        ] {
            assert!(visible(stage, message, tool), "{tool} in {stage:?}");
            assert!(reg.for_turn(stage, message).len() <= MAX_VISIBLE_TOOLS);
        }
    }
    // A new search after a list was saved can still change the selection.
    assert!(visible(Stage::ConListaGuardada, "", "selection_update"));
    // Boundary tools are never Luna's: a card runs them.
    assert!(!reg
        .list(Surface::Luna)
        .iter()
        .any(|d| d.name == "people_reveal"));
}

#[test]
fn stage_sets_stay_within_twelve_and_the_public_list_is_stable() {
    let reg = catalog();
    for s in Stage::ALL {
        assert!(reg.for_stage(s).len() <= MAX_VISIBLE_TOOLS);
    }
    assert!(reg
        .for_stage(Stage::SinCriterio)
        .iter()
        .any(|d| d.name == "usage"));
    let a: Vec<_> = reg.list(Surface::Mcp).iter().map(|d| d.name).collect();
    let b: Vec<_> = catalog()
        .list(Surface::Mcp)
        .iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(a, b);
    let families: Vec<_> = reg.list(Surface::Mcp).iter().map(|d| d.family).collect();
    let mut sorted = families.clone();
    sorted.sort();
    assert_eq!(
        families, sorted,
        "public tools are grouped in catalog family order"
    );
    assert!(a.contains(&"usage") && a.contains(&"workspaces"));
}

fn lexicon_check(what: &str, text: &str) {
    let v = lexicon::violations(text);
    assert!(v.is_empty(), "{what} uses forbidden words {v:?}: {text}");
}

/// Every `description` inside a schema (field docs reach clients and the model).
fn schema_descriptions(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                match (k.as_str(), child) {
                    ("description", Value::String(s)) => out.push(s.clone()),
                    _ => schema_descriptions(child, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|c| schema_descriptions(c, out)),
        _ => {}
    }
}

fn body_strings(b: &ErrorBody) -> String {
    format!("{} {}", b.message, b.hint)
}

#[tokio::test]
async fn every_string_the_registry_emits_respects_the_lexicon() {
    let w = World::new(Plan::Explorer, Role::Member).await.unwrap();
    for d in w.engine.registry.all() {
        lexicon_check(d.name, &d.full_description());
        lexicon_check(d.name, d.label);
        lexicon_check(d.name, d.family.label());
        for ex in &d.examples {
            lexicon_check(d.name, &ex.note);
        }
        let mut texts = Vec::new();
        schema_descriptions(&d.input_schema, &mut texts);
        for t in texts {
            lexicon_check(d.name, &t);
        }
    }
    lexicon_check("TOOLS.md", &docs::markdown(&w.engine.registry));
    // Error messages: one of each kind the registry produces.
    let calls = [
        ("no_such_tool", json!({})),
        ("broker", json!({})),
        ("usage", json!({"estado": "Jalisco"})),
        ("usage", json!([1, 2])),
        ("driftless_market_search_suppliers", json!({"limit": 51})),
        (
            "market_search",
            json!({"kind": "suppliers", "filters": {"mark_kind": "x"}}),
        ),
        (
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "México"}}),
        ),
        (
            "market_count",
            json!({"states": ["Jalisco", "Jalisco"], "filters": {"state": "Colima"}}),
        ),
        ("market_screen", json!({"rfcs": []})),
        ("market_get", json!({"record_ref": "algo"})),
    ];
    for (name, args) in calls {
        let r = w.call(name, args, Surface::Mcp).await;
        let e = r.unwrap_err();
        lexicon_check(name, &body_strings(&e));
    }
    for e in [
        crate::billing::counters::read_ceiling_error(600, 60).body(),
        crate::billing::counters::daily_search_error(5, 60).body(),
        crate::billing::insufficient(crate::billing::Ledger::Intelligence, 1, 0).body(),
        crate::billing::insufficient(crate::billing::Ledger::Contact, 2, 0).body(),
        alias::expired_alias("market_get_supplier", "market_get").body(),
    ] {
        lexicon_check("error", &body_strings(&e));
    }
    let note = alias::replacement_note(
        "x",
        "market_search",
        alias::Translate::SearchKind("awards"),
        0,
    );
    lexicon_check("next_action", &note);
}

#[test]
fn tools_md_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/TOOLS.md");
    let fresh = docs::markdown(&catalog());
    if std::env::var("LUNA_UPDATE_DOCS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "docs/TOOLS.md is stale; run LUNA_UPDATE_DOCS=1 cargo test -p luna-engine tools_md"
    );
}

// ------------------------------------------------------------ the pipeline

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    kind: EchoKind,
    query: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
    #[serde(default)]
    filters: serde_json::Map<String, Value>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum EchoKind {
    Suppliers,
    Opportunities,
    Awards,
    Permits,
    Risks,
}

use serde::Serialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn echo_search() -> ToolDef {
    ToolDef::new::<EchoArgs>("market_search", Family::Market)
        .label("Buscando")
        .cost(CostClass::Search)
        .search()
        .handler(|ctx: ToolCtx, args: EchoArgs| async move {
            let row = ResultRow::new("record:1", "uno")
                .with("kind", args.kind)
                .with("query", args.query)
                .with("limit", args.limit)
                .with("cursor", args.cursor)
                .with("filters", args.filters)
                .with("page_size", ctx.page_size_hint(200, 50));
            Ok(Envelope::rows(vec![row]).into())
        })
}

fn mode_probe() -> ToolDef {
    ToolDef::new::<NoArgs>("probe_level_one", Family::Crm)
        .label("Guardando")
        .level(Level::L1)
        .side_effect(SideEffect::Write)
        .idempotent(false)
        .surfaces(&[Surface::Luna, Surface::Ui])
        .handler(|ctx: ToolCtx, _: NoArgs| async move {
            Ok(Envelope::rows(vec![
                ResultRow::new("proposal:1", "propuesta").with("preview", ctx.is_preview())
            ])
            .into())
        })
}

fn big_output() -> ToolDef {
    ToolDef::new::<NoArgs>("probe_big_output", Family::Crm)
        .label("Leyendo")
        .budget(20_000)
        .handler(|_: ToolCtx, _: NoArgs| async move {
            let rows = (0..300)
                .map(|i| {
                    ResultRow::new(
                        format!("record:{i}"),
                        format!("Registro número {i:04} con nombre largo"),
                    )
                })
                .collect();
            Ok(Envelope::rows(rows).into())
        })
}

async fn engine_with(tools: Vec<ToolDef>) -> World {
    let mut w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let mut reg = catalog();
    for t in tools {
        reg.replace(t);
    }
    w.engine.registry = Arc::new(reg);
    w
}

async fn respond(w: &World, name: &str, args: Value, s: Surface) -> ToolResponse {
    w.engine
        .call_tool(&w.caller, ToolRequest::new(name, args, s))
        .await
}

#[tokio::test]
async fn usage_reports_the_ledgers_and_reads_left_as_an_envelope() {
    let w = engine_with(vec![]).await;
    let r = respond(&w, "usage", json!({}), Surface::Mcp).await;
    let env = r.outcome.unwrap();
    assert!(env.ref_.starts_with("call:"));
    assert_eq!(env.status, ResultStatus::Ok);
    let row = &env.results[0];
    assert_eq!(row.ref_, format!("workspace:{}", w.caller.workspace_id));
    assert_eq!(row.fields["intelligence_credits_left"], json!(2_000));
    assert_eq!(row.fields["contact_credits_left"], json!(100));
    assert_eq!(row.fields["reads_left_this_hour"], json!(600));
    assert_eq!(r.label, "Consultando tus créditos");
}

#[tokio::test]
async fn unknown_keys_are_rejected_before_the_handler_with_allowed_values() {
    let w = engine_with(vec![echo_search()]).await;
    let r = respond(
        &w,
        "market_search",
        json!({"kind": "suppliers", "estado": "Jalisco"}),
        Surface::Luna,
    )
    .await;
    let e = r.outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.allowed_values.unwrap(),
        vec!["cursor", "filters", "kind", "limit", "query"]
    );
    let r = respond(
        &w,
        "market_search",
        json!({"kind": "empresas"}),
        Surface::Luna,
    )
    .await;
    let e = r.outcome.unwrap_err();
    assert_eq!(
        e.allowed_values.unwrap(),
        vec!["suppliers", "opportunities", "awards", "permits", "risks"]
    );
    // No read was counted for calls that never ran.
    assert_eq!(
        w.engine
            .billing
            .reads_left(&w.caller.workspace_id, crate::base::clock::now_ms())
            .await
            .unwrap(),
        600
    );
}

#[tokio::test]
async fn legacy_market_names_translate_arguments_and_name_the_replacement() {
    let w = engine_with(vec![echo_search()]).await;
    let r = respond(
        &w,
        "driftless_market_search_suppliers",
        json!({"query": "empaque", "state": "Jalisco"}),
        Surface::Mcp,
    )
    .await;
    assert_eq!(r.tool, "market_search");
    let env = r.outcome.unwrap();
    let row = &env.results[0];
    assert_eq!(row.fields["kind"], json!("suppliers"));
    assert_eq!(row.fields["filters"], json!({"state": "Jalisco"}));
    let note = env.next_action.unwrap();
    assert!(
        note.contains("market_search") && note.contains("suppliers"),
        "{note}"
    );
    // Bare and brein_ forms work too; aliases never appear in the list.
    assert!(respond(&w, "market_search_awards", json!({}), Surface::Mcp)
        .await
        .is_ok());
    assert!(respond(&w, "brein_usage", json!({}), Surface::Mcp)
        .await
        .is_ok());
    let listed: Vec<_> = w
        .engine
        .registry
        .list(Surface::Mcp)
        .iter()
        .map(|d| d.name)
        .collect();
    assert!(listed
        .iter()
        .all(|n| alias::strip_brand(n).is_none() && alias::legacy(n).is_none()));
}

#[tokio::test]
async fn legacy_names_expire_into_unknown_tool_naming_the_new_tool() {
    let w = engine_with(vec![echo_search()]).await;
    w.engine
        .registry
        .set_alias_release_date(chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap());
    let r = respond(&w, "market_count_suppliers", json!({}), Surface::Mcp).await;
    let e = r.outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownTool);
    assert!(e.hint.contains("market_count"), "{}", e.hint);
    let e = respond(&w, "driftless_market_search_risks", json!({}), Surface::Mcp)
        .await
        .outcome
        .unwrap_err();
    assert!(e.hint.contains("market_search"));
}

#[tokio::test]
async fn deleted_and_unknown_names_have_no_alias() {
    let w = engine_with(vec![]).await;
    for name in [
        "broker",
        "driftless_context_share",
        "members",
        "hubspot_records",
    ] {
        let e = respond(&w, name, json!({}), Surface::Mcp)
            .await
            .outcome
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownTool, "{name}");
        assert!(e.allowed_values.is_none(), "{name}");
    }
    let e = respond(&w, "usagee", json!({}), Surface::Mcp)
        .await
        .outcome
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownTool);
    assert!(e.allowed_values.unwrap().contains(&"usage".to_owned()));
    // A legacy name whose target is not registered yet is unknown, not a crash.
    let pending = alias::LEGACY_NAMES
        .iter()
        .find(|l| w.engine.registry.get(l.target).is_none());
    if let Some(l) = pending {
        let e = respond(&w, l.legacy, json!({}), Surface::Mcp)
            .await
            .outcome
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownTool);
    }
}

#[tokio::test]
async fn luna_previews_level_one_tools_while_the_ui_executes_them() {
    let w = engine_with(vec![mode_probe()]).await;
    let luna = respond(&w, "probe_level_one", json!({}), Surface::Luna).await;
    assert_eq!(luna.mode, Some(ExecMode::PreviewOnly));
    assert_eq!(
        luna.outcome.unwrap().results[0].fields["preview"],
        json!(true)
    );
    let ui = respond(&w, "probe_level_one", json!({}), Surface::Ui).await;
    assert_eq!(
        ui.outcome.unwrap().results[0].fields["preview"],
        json!(false)
    );
    // Not on MCP: unknown there, and not listed.
    let mcp = respond(&w, "probe_level_one", json!({}), Surface::Mcp).await;
    assert_eq!(mcp.outcome.unwrap_err().code, ErrorCode::UnknownTool);
    assert!(!w
        .engine
        .registry
        .list(Surface::Mcp)
        .iter()
        .any(|d| d.name == "probe_level_one"));
}

#[tokio::test]
async fn the_read_ceiling_stops_the_601st_read_of_the_hour() {
    let w = engine_with(vec![echo_search()]).await;
    let now = crate::base::clock::now_ms();
    w.engine
        .billing
        .admit_reads(&w.caller.workspace_id, 599, now)
        .await
        .unwrap();
    assert!(
        respond(&w, "market_search", json!({"kind": "awards"}), Surface::Mcp)
            .await
            .is_ok()
    );
    let r = respond(&w, "market_search", json!({"kind": "awards"}), Surface::Mcp).await;
    let e = r.outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimited);
    assert!(e.retry_after.unwrap() >= 1);
    // Free tools still answer.
    assert!(respond(&w, "usage", json!({}), Surface::Mcp).await.is_ok());
}

#[tokio::test]
async fn searches_charge_once_per_idempotency_key_with_the_same_receipt_on_every_surface() {
    let w = engine_with(vec![echo_search()]).await;
    let mut req = ToolRequest::new("market_search", json!({"kind": "suppliers"}), Surface::Ui);
    req.idempotency_key = Some("turn-1-step-2".into());
    let a = w.engine.call_tool(&w.caller, req.clone()).await;
    req.surface = Surface::Mcp;
    let b = w.engine.call_tool(&w.caller, req).await;
    assert_eq!(a.receipts[0].id, b.receipts[0].id);
    assert!(b.receipts[0].replayed);
    assert_eq!(a.receipts[0].surface, "ui");
    let bal = w.balance(crate::billing::Ledger::Intelligence).await;
    assert_eq!(bal.used, 1);
    // Without a key every call is its own charge.
    respond(
        &w,
        "market_search",
        json!({"kind": "suppliers"}),
        Surface::Luna,
    )
    .await;
    let bal = w.balance(crate::billing::Ledger::Intelligence).await;
    assert_eq!(bal.used, 2);
}

#[tokio::test]
async fn a_reused_key_is_bound_to_its_exact_request_and_replays_without_running() {
    let w = engine_with(vec![echo_search()]).await;
    let used = || async { w.balance(crate::billing::Ledger::Intelligence).await.used };
    let keyed = |args: Value, s: Surface| {
        let mut req = ToolRequest::new("market_search", args, s);
        req.idempotency_key = Some("busqueda-1".into());
        req
    };
    let first = w
        .engine
        .call_tool(
            &w.caller,
            keyed(
                json!({"kind": "suppliers", "query": "empaque"}),
                Surface::Ui,
            ),
        )
        .await;
    let first_env = first.outcome.clone().unwrap();
    assert_eq!(used().await, 1);

    // The same key with other arguments: refused, nothing runs, nothing is charged.
    for (args, s) in [
        (json!({"kind": "suppliers", "query": "acero"}), Surface::Ui),
        (json!({"kind": "awards", "query": "empaque"}), Surface::Mcp),
    ] {
        let other = w.engine.call_tool(&w.caller, keyed(args, s)).await;
        let e = other.outcome.unwrap_err();
        assert_eq!(e.code, ErrorCode::IdempotencyConflict, "{e:?}");
        assert!(other.receipts.is_empty());
    }
    assert_eq!(used().await, 1);

    // The same request (keys in another order, from MCP) gets the stored outcome: the
    // same call ref proves the tool did not run again.
    let again = w
        .engine
        .call_tool(
            &w.caller,
            keyed(
                json!({"query": "empaque", "kind": "suppliers"}),
                Surface::Mcp,
            ),
        )
        .await;
    let env = again.outcome.unwrap();
    assert_eq!(env.ref_, first_env.ref_);
    assert_eq!(env.results, first_env.results);
    assert_eq!(again.receipts.len(), 1);
    assert!(again.receipts[0].replayed);
    assert_eq!(again.receipts[0].id, first.receipts[0].id);
    assert_eq!(used().await, 1);

    // A key longer than the bound is a typed error, not a stored claim.
    let mut long = ToolRequest::new("market_search", json!({"kind": "suppliers"}), Surface::Mcp);
    long.idempotency_key = Some("k".repeat(201));
    let e = w
        .engine
        .call_tool(&w.caller, long)
        .await
        .outcome
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

/// Fails on its first call, answers on the next ones.
fn flaky() -> ToolDef {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    ToolDef::new::<NoArgs>("probe_flaky", Family::Crm)
        .label("Leyendo")
        .handler(|_: ToolCtx, _: NoArgs| async move {
            if CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return Err(crate::base::error::EngineError::Internal(
                    "first call fails".into(),
                ));
            }
            Ok(Envelope::rows(vec![ResultRow::new("record:1", "uno")]).into())
        })
}

#[tokio::test]
async fn a_failed_call_frees_its_key_for_the_retry() {
    let w = engine_with(vec![flaky()]).await;
    let mut req = ToolRequest::new("probe_flaky", json!({}), Surface::Ui);
    req.idempotency_key = Some("reintento".into());
    let failed = w.engine.call_tool(&w.caller, req.clone()).await;
    assert_eq!(failed.outcome.unwrap_err().code, ErrorCode::Internal);
    // The retry with the same key runs (it is not a replay of the failure).
    let retried = w.engine.call_tool(&w.caller, req).await;
    assert!(retried.is_ok(), "{:?}", retried.outcome);
}

#[tokio::test]
async fn results_are_cut_by_whole_rows_to_the_surface_budget() {
    let w = engine_with(vec![big_output(), echo_search()]).await;
    let luna = respond(&w, "probe_big_output", json!({}), Surface::Luna)
        .await
        .outcome
        .unwrap();
    assert!(budget::size_chars(&luna) <= TOOL_RESULT_CAP);
    assert!(luna.has_more && luna.shown == luna.results.len() && luna.shown > 0);
    let mcp = respond(&w, "probe_big_output", json!({}), Surface::Mcp)
        .await
        .outcome
        .unwrap();
    assert!(
        budget::size_chars(&mcp) <= 20_000,
        "{} {}",
        budget::size_chars(&mcp),
        mcp.shown
    );
    assert!(mcp.shown > luna.shown);
    // The page-size hint pushes the budget down for market pages.
    let s = respond(
        &w,
        "market_search",
        json!({"kind": "awards"}),
        Surface::Luna,
    )
    .await
    .outcome
    .unwrap();
    assert_eq!(s.results[0].fields["page_size"], json!(20));
}

#[tokio::test]
async fn every_call_leaves_a_telemetry_row_and_lost_telemetry_never_fails_a_call() {
    let w = engine_with(vec![]).await;
    respond(&w, "usage", json!({}), Surface::Mcp).await;
    respond(&w, "usage", json!({"x": 1}), Surface::Luna).await;
    let rows: Vec<(String, i64, String)> = sqlx::query_as(
        "select tool, ok, surface from tool_calls where workspace_id = $1 and event = 'agent_tool_used' order by id",
    )
    .bind(&w.caller.workspace_id)
    .fetch_all(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(
        rows,
        vec![
            ("usage".into(), 1, "mcp".into()),
            ("usage".into(), 0, "luna".into())
        ]
    );
    sqlx::query("drop table tool_calls")
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    assert!(respond(&w, "usage", json!({}), Surface::Ui).await.is_ok());
}

#[tokio::test]
async fn workspaces_lists_the_memberships_of_a_person_and_only_the_key_workspace_for_a_key() {
    let w = engine_with(vec![]).await;
    let other = w
        .engine
        .accounts
        .create_workspace("Otra", Plan::Explorer)
        .await
        .unwrap();
    w.engine
        .accounts
        .add_member(&other, &w.caller.user_id, Role::Owner)
        .await
        .unwrap();
    let env = respond(&w, "workspaces", json!({}), Surface::Ui)
        .await
        .outcome
        .unwrap();
    assert_eq!(env.results.len(), 2);
    assert_eq!(
        env.results
            .iter()
            .filter(|r| r.fields["current"] == json!(true))
            .count(),
        1
    );
    let mut keyed = w.caller.clone();
    keyed.api_key = Some(crate::testkit::grant(&[]));
    let env = testkit::call(&w.engine, &keyed, "workspaces", json!({}), Surface::Mcp)
        .await
        .unwrap();
    assert_eq!(env.results.len(), 1);
}

/// Every description a model or an MCP client reads in an input schema is Spanish.
#[test]
fn input_schema_descriptions_are_spanish() {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(d) = m.get("description").and_then(serde_json::Value::as_str) {
                    out.push(d.to_owned());
                }
                m.values().for_each(|x| walk(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let english = [
        " the ",
        "The ",
        " or ",
        " of ",
        "Free text",
        " default",
        "Up to",
        "Which ",
        " with ",
        " from ",
    ];
    let mut bad = Vec::new();
    for d in catalog().all() {
        let mut found = Vec::new();
        walk(&d.input_schema, &mut found);
        for text in found {
            if english.iter().any(|w| text.contains(w)) {
                bad.push(format!("{}: {text}", d.name));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "English in input schemas:\n{}",
        bad.join("\n")
    );
}

/// Every free input is bounded: each string of every tool's input schema has a
/// `maxLength` (closed enums excepted), each array a `maxItems`, and each open object
/// a `maxProperties` and a bounded value schema. An oversized argument is then
/// `INVALID_ARGUMENT` from the validator, never a handler's or the database's failure.
#[test]
fn every_input_is_bounded() {
    fn types(v: &serde_json::Map<String, Value>) -> Vec<&str> {
        match v.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }
    fn walk(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                let ts = types(m);
                let closed = m.contains_key("enum") || m.contains_key("const");
                if ts.contains(&"string") && !closed && !m.contains_key("maxLength") {
                    out.push(format!("{at}: string without maxLength"));
                }
                if ts.contains(&"array") && !m.contains_key("maxItems") {
                    out.push(format!("{at}: array without maxItems"));
                }
                if ts.contains(&"object") && m.get("additionalProperties") != Some(&json!(false)) {
                    if !m.contains_key("maxProperties") {
                        out.push(format!("{at}: open object without maxProperties"));
                    }
                    if !m.get("additionalProperties").is_some_and(Value::is_object) {
                        out.push(format!("{at}: open object with unbounded values"));
                    }
                }
                for (k, x) in m {
                    walk(x, &format!("{at}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut unbounded = Vec::new();
    for d in catalog().all() {
        walk(&d.input_schema, d.name, &mut unbounded);
    }
    assert!(
        unbounded.is_empty(),
        "unbounded inputs:\n{}",
        unbounded.join("\n")
    );
}
