//! The Mercado family (CONTRACT §4, seed 000 §3): eight thin tools over [`crate::market`].
//!
//! - `market_capabilities`: the client-safe coverage map (no stage: Luna gets coverage
//!   in the compiled turn input).
//! - `market_search`: one page of any kind, with the output budget pushed down to the
//!   page size so a sealed cursor is never cut after the query.
//! - `market_get`: one record; charges by the branch that ran and counts 1 read.
//! - `market_count`: exact counts, each state admitted and charged on its own.
//! - `market_aggregate`, `market_history`, `market_compare`, `market_screen`.
//!
//! Rows are the domain rows serialised as-is: each carries `ref`, `ref_label` and,
//! where it applies, `evidence`.

use luna_protocol::tool::{Envelope, ResultRow, ResultStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use serde_json::{json, Value};

use crate::base::catalog::states::{State, StateContext};
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::billing::{ChargeSpec, Ledger};
use crate::market::filters::allowed_keys;
use crate::market::{
    self, AggregateArgs, CompareArgs, CountArgs, CountResult, GetArgs, GetBranch, HistoryArgs,
    MarketKind, MarketRecord, ScreenArgs, SearchArgs, SearchPage, StateCount, DEFAULT_LIMIT,
    MAX_COUNT_STATES, MAX_LIMIT,
};
use crate::registry::budget;
use crate::registry::{CostClass, Family, Registry, Stage, Surface, ToolCtx, ToolDef, ToolOutput};

/// `market_capabilities` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilitiesArgs {}

/// Room kept free in a page for what the pipeline adds after the handler (the call
/// `ref`, a legacy-name note in `next_action`).
const ENVELOPE_MARGIN: usize = 400;

/// Rough size in characters of one row of each kind (used for the first page size).
fn row_chars(kind: MarketKind) -> usize {
    match kind {
        MarketKind::Suppliers => 1_300,
        MarketKind::Awards => 850,
        MarketKind::Opportunities => 650,
        MarketKind::Permits => 650,
        MarketKind::Risks => 650,
    }
}

fn filters_by_kind() -> String {
    MarketKind::ALL
        .iter()
        .map(|k| format!("{}: {}", k.key(), allowed_keys(*k).join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Rewrites `oneOf` lists of documented constants (how schemars renders an enum whose
/// variants carry doc comments) into a plain `enum`, so clients and the model see the
/// closed set in one place and a wrong value is answered with `allowed_values`.
fn flatten_const_one_of(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            let consts: Option<Vec<Value>> =
                obj.get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|branches| {
                        branches
                            .iter()
                            .map(|b| b.get("const").cloned())
                            .collect::<Option<Vec<_>>>()
                    });
            if let Some(values) = consts {
                obj.remove("oneOf");
                obj.insert("type".into(), json!("string"));
                obj.insert("enum".into(), Value::Array(values));
            }
            for child in obj.values_mut() {
                flatten_const_one_of(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(flatten_const_one_of),
        _ => {}
    }
}

fn add(reg: &mut Registry, mut def: ToolDef) {
    flatten_const_one_of(&mut def.input_schema);
    use crate::base::catalog::states;
    def.prepare = Some(if def.name == "market_count" {
        // Each state of the list is counted, charged or refused on its own.
        states::canonicalize_args_per_item
    } else {
        states::canonicalize_args
    });
    reg.add(def);
}

pub fn register(reg: &mut Registry) {
    add(
        reg,
        ToolDef::new::<CapabilitiesArgs>("market_capabilities", Family::Market)
            .label("Revisando la cobertura")
            .description(
                "Úsala cuando necesites saber qué cobertura hay cargada antes de prometer una búsqueda: \
                 qué fuentes, cuántos Proveedores, Licitaciones, Adjudicaciones, Registros y marcas de \
                 riesgo, de qué fechas a qué fechas, qué estados tienen datos y cuándo fue la última \
                 importación. NO la uses para contar registros que cumplen un criterio (usa market_count) \
                 ni para encontrarlos (usa market_search).",
            )
            .example("¿Qué fuentes y qué estados están cargados?", json!({}))
            .budget(6_000)
            .citations(&["ref", "rows", "date_from", "date_to", "last_import"])
            .cues(&["cobertura", "fuentes", "actualizad"])
            .handler(capabilities),
    );
    add(
        reg,
        ToolDef::new::<SearchArgs>("market_search", Family::Market)
            .label("Buscando registros")
            .description(format!(
                "Úsala cuando necesites encontrar Proveedores (kind suppliers), Licitaciones \
                 (opportunities), Adjudicaciones (awards), Registros (permits) o marcas de riesgo \
                 (risks) con texto libre —acentos, ñ y mayúsculas no importan— y filtros. `filters` \
                 admite solo las claves de ese kind y una clave ajena se rechaza con la lista \
                 permitida ({}). Un solo estado por filtro; para varios (hasta 5) usa `states`. Cada fila trae ref, ref_label y su \
                 evidencia. Hasta 50 filas por página: si has_more es true, repite la misma consulta \
                 con el cursor. NO la uses para decir cuántos hay (usa market_count) ni para totales \
                 por comprador, estado o año (usa market_aggregate).",
                filters_by_kind()
            ))
            .example(
                "Fabricantes de empaque en Jalisco que ya le vendieron a gobierno",
                json!({"kind": "suppliers", "query": "empaque", "filters": {"state": "Jalisco", "has_awards": true}, "limit": 20}),
            )
            .example(
                "Adjudicaciones del IMSS en insumos médicos desde 2023",
                json!({"kind": "awards", "filters": {"buyer": "IMSS", "giro": "insumos médicos", "date_from": "2023"}, "limit": 10}),
            )
            .cost(CostClass::Search)
            .search()
            .budget(48_000)
            .citations(&[
                "ref",
                "evidence",
                "awards_count",
                "awards_total_mxn",
                "amount",
                "date",
                "buyer",
                "mark_kind",
            ])
            .stage(Stage::SinCriterio, 10)
            .stage(Stage::Buscando, 10)
            .stage(Stage::ConSeleccion, 20)
            .stage(Stage::ConListaGuardada, 100)
            .stage(Stage::ConBorrador, 110)
            .stage(Stage::DecisionPendiente, 20)
            .handler(search),
    );
    add(
        reg,
        ToolDef::new::<GetArgs>("market_get", Family::Market)
            .label("Leyendo el detalle")
            .description(
                "Úsala cuando necesites el detalle de una fila que ya tienes: un Proveedor (ref \
                 company:…) con su evidencia, marcas de riesgo, Registros y, si pides include_awards, \
                 sus Adjudicaciones más recientes; o una Licitación, Adjudicación, Registro o marca de \
                 riesgo (ref record:…). Cuenta 1 lectura y cobra 1 crédito de inteligencia según lo \
                 que se leyó. NO la uses para buscar por nombre (usa market_search) ni para la \
                 trayectoria por año de un RFC (usa market_history).",
            )
            .example(
                "El detalle de un Proveedor con sus Adjudicaciones",
                json!({"record_ref": "company:EMB050315AB1", "include_awards": true}),
            )
            .cost(CostClass::Read)
            .charges_at_least(1)
            .budget(8_000)
            .citations(&["ref", "evidence", "awards", "marks", "permits", "amount", "date"])
            .stage(Stage::SinCriterio, 40)
            .stage(Stage::Buscando, 40)
            .stage(Stage::ConSeleccion, 50)
            .stage(Stage::ConListaGuardada, 150)
            .stage(Stage::DecisionPendiente, 30)
            .handler(get),
    );
    add(
        reg,
        ToolDef::new::<CountArgs>("market_count", Family::Market)
            .label("Contando registros")
            .description(
                "Úsala cuando necesites decir cuántos hay: el número exacto de Proveedores (u otro \
                 kind) que cumplen los filtros, en total o por estado. Con `states` (hasta 5) cada \
                 estado se cuenta, se admite y se cobra por separado (1 lectura y 1 crédito de \
                 inteligencia por estado); si alguno no se pudo contar, total es null y esa fila trae \
                 su error. Es la única forma válida de afirmar «hay N». NO la uses para listar \
                 registros (usa market_search) ni para sumar montos (usa market_aggregate).",
            )
            .example(
                "¿Cuántos Proveedores de empaque con Adjudicaciones hay en Jalisco, Nuevo León y Guanajuato?",
                json!({"filters": {"giro": "empaque", "has_awards": true}, "states": ["Jalisco", "Nuevo León", "Guanajuato"]}),
            )
            .budget(3_000)
            .citations(&["ref", "count", "total"])
            .stage(Stage::SinCriterio, 20)
            .stage(Stage::Buscando, 20)
            .stage(Stage::ConSeleccion, 110)
            .stage(Stage::ConListaGuardada, 120)
            .stage(Stage::DecisionPendiente, 40)
            .handler(count),
    );
    add(
        reg,
        ToolDef::new::<AggregateArgs>("market_aggregate", Family::Market)
            .label("Sumando Adjudicaciones")
            .description(
                "Úsala cuando necesites totales de Adjudicaciones agrupados por proveedor, comprador, \
                 estado o año (group_by): cuántas, por cuánto en MXN y cuántos Proveedores distintos, \
                 con los grupos mayores primero. NO la uses para listar Adjudicaciones una por una \
                 (usa market_search con kind awards) ni para poner segmentos lado a lado (usa \
                 market_compare).",
            )
            .example(
                "¿Qué compradores adjudicaron más en Jalisco desde 2023?",
                json!({"filters": {"state": "Jalisco", "date_from": "2023"}, "group_by": "buyer", "limit": 10}),
            )
            .cost(CostClass::Read)
            .budget(6_000)
            .citations(&["ref", "key", "awards", "amount_mxn", "suppliers"])
            .stage(Stage::SinCriterio, 60)
            .stage(Stage::Buscando, 60)
            .stage(Stage::ConSeleccion, 120)
            .stage(Stage::DecisionPendiente, 120)
            .cues(&["mas", "most", "ranking", "monto"])
            .handler(aggregate),
    );
    add(
        reg,
        ToolDef::new::<HistoryArgs>("market_history", Family::Market)
            .label("Revisando el historial del RFC")
            .description(
                "Úsala cuando necesites la trayectoria de un RFC: sus Adjudicaciones por año, las más \
                 recientes, sus marcas de riesgo y sus Registros. Un dígito verificador que no cuadra \
                 se avisa en warnings, no se rechaza. NO la uses para revisar muchos RFC de una vez \
                 (usa market_screen) ni para buscar Proveedores por nombre (usa market_search).",
            )
            .example(
                "¿Qué le ha vendido este RFC a gobierno año por año?",
                json!({"rfc": "EMB050315AB1"}),
            )
            .cost(CostClass::Read)
            .budget(6_000)
            .citations(&["ref", "by_year", "amount", "date", "mark_kind"])
            .stage(Stage::SinCriterio, 110)
            .stage(Stage::Buscando, 110)
            .stage(Stage::ConSeleccion, 180)
            .stage(Stage::DecisionPendiente, 100)
            .handler(history),
    );
    add(
        reg,
        ToolDef::new::<CompareArgs>("market_compare", Family::Market)
            .label("Comparando segmentos")
            .description(
                "Úsala cuando necesites poner de 2 a 5 segmentos de Adjudicaciones lado a lado (por \
                 ejemplo dos estados, dos giros o dos compradores): cuántas, monto total y promedio, \
                 cuántos Proveedores distintos compiten y quiénes compran más. NO la uses para un solo \
                 grupo de totales (usa market_aggregate).",
            )
            .example(
                "Empaque en Jalisco contra empaque en Nuevo León",
                json!({"segments": [
                    {"label": "Jalisco", "filters": {"state": "Jalisco", "giro": "empaque"}},
                    {"label": "Nuevo León", "filters": {"state": "Nuevo León", "giro": "empaque"}}
                ]}),
            )
            .cost(CostClass::Read)
            .budget(5_000)
            .citations(&["ref", "awards", "amount_mxn", "avg_amount_mxn", "suppliers"])
            .stage(Stage::SinCriterio, 100)
            .stage(Stage::Buscando, 100)
            .stage(Stage::ConSeleccion, 100)
            .stage(Stage::DecisionPendiente, 130)
            .cues(&["compar"])
            .handler(compare),
    );
    add(
        reg,
        ToolDef::new::<ScreenArgs>("market_screen", Family::Market)
            .label("Revisando marcas de riesgo")
            .description(
                "Úsala cuando necesites revisar las marcas de riesgo (SAT 69-B, proveedor sancionado) \
                 de una lista de 1 a 50 RFC: cada RFC trae su nivel (con_marcas, \
                 con_marcas_no_vigentes, sin_marcas o no_verificable), sus avisos y la evidencia; los \
                 que tienen marcas van primero. NO la uses para la trayectoria completa de un RFC (usa \
                 market_history).",
            )
            .example(
                "¿Alguno de estos RFC tiene marcas de riesgo?",
                json!({"rfcs": ["EMB050315AB1", "CAJ990101XY2"]}),
            )
            .cost(CostClass::Read)
            .budget(12_000)
            .citations(&["ref", "risk_level", "marks", "warnings"])
            .stage(Stage::SinCriterio, 70)
            .stage(Stage::Buscando, 70)
            .stage(Stage::ConSeleccion, 60)
            .stage(Stage::ConListaGuardada, 170)
            .stage(Stage::DecisionPendiente, 80)
            .handler(screen),
    );
}

// ---------------------------------------------------------------- helpers

/// A domain row (anything serialising to an object with `ref` and `ref_label`) as an
/// envelope row.
fn to_row<T: Serialize>(value: &T) -> EngineResult<ResultRow> {
    let v = serde_json::to_value(value).map_err(|e| EngineError::Internal(e.to_string()))?;
    let Value::Object(mut fields) = v else {
        return Err(EngineError::Internal(
            "a market row is not an object".into(),
        ));
    };
    let mut take = |key: &str| match fields.remove(key) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let r = take("ref");
    let label = take("ref_label");
    Ok(ResultRow {
        ref_: r,
        ref_label: label,
        fields,
    })
}

fn ms_to_date(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
}

fn intelligence(action: &str, branch: impl Into<String>) -> ChargeSpec {
    ChargeSpec {
        action: action.to_owned(),
        branch: branch.into(),
        amount: 1,
        ledger: Ledger::Intelligence,
    }
}

/// Drops evidence items from the end of a row until the envelope fits `fit`.
fn trim_evidence(env: &mut Envelope, fit: usize) {
    for i in (0..env.results.len()).rev() {
        loop {
            if budget::size_chars(env) <= fit {
                return;
            }
            let Some(Value::Array(items)) = env.results[i].fields.get_mut("evidence") else {
                break;
            };
            if items.len() <= 1 {
                break;
            }
            items.pop();
        }
    }
}

// ---------------------------------------------------------------- handlers

async fn capabilities(ctx: ToolCtx, _args: CapabilitiesArgs) -> EngineResult<ToolOutput> {
    let cov = ctx.engine.market.coverage().await?;
    let last = cov.last_import_at.and_then(ms_to_date);
    let mut rows = vec![ResultRow::new("record:coverage", cov.summary.clone())
        .with("last_import", &last)
        .with("states_with_data", cov.states.len())
        .with("states_without_data", &cov.states_without_data)];
    for k in &cov.kinds {
        rows.push(
            ResultRow::new(
                format!("record:coverage:{}", k.kind.key()),
                format!("{}: {}", k.label, k.rows),
            )
            .with("kind", k.kind)
            .with("rows", k.rows)
            .with("date_from", &k.date_from)
            .with("date_to", &k.date_to),
        );
    }
    for (i, s) in cov.sources.iter().enumerate() {
        rows.push(
            ResultRow::new(format!("record:source:{}", i + 1), s.label.clone())
                .with("source_kind", &s.kind)
                .with("imports", s.imports)
                .with("last_import", ms_to_date(s.last_import_at)),
        );
    }
    let mut env = Envelope::rows(rows);
    env.coverage = Some(json!({
        "states": cov.states.iter().map(|s| json!({"state": s.state, "suppliers": s.suppliers, "awards": s.awards})).collect::<Vec<_>>(),
        "last_import": last,
    }));
    Ok(env.into())
}

/// Fields a search row keeps: enough to choose and to cite; the detail (website, logo,
/// every award) is one `market_get` away. Keeping rows small lets a page under the
/// output budget hold several companies instead of two or three.
const SEARCH_ROW_DROP: &[&str] = &[
    "id", "name", "scian", "website", "logo_url", "source", "ocid",
];
/// Evidence items a search row keeps (the strongest first).
const SEARCH_ROW_EVIDENCE: usize = 2;

fn compact(mut row: ResultRow) -> ResultRow {
    for key in SEARCH_ROW_DROP {
        row.fields.remove(*key);
    }
    if let Some(Value::Array(evidence)) = row.fields.get_mut("evidence") {
        evidence.truncate(SEARCH_ROW_EVIDENCE);
    }
    row
}

/// Luna's rows are tighter still: its results are capped at 4,500 characters, and a
/// page must hold enough companies to build a selection in a few searches. The
/// evidence keeps its ref (citable, opens the drawer) and what makes it evidence.
const LUNA_ROW_KEEP: &[&str] = &[
    "rfc",
    "state",
    "awards_count",
    "awards_total_mxn",
    "last_award",
    "evidence",
    "title",
    "buyer",
    "amount",
    "date",
    "mark_kind",
    "procedure",
];

fn compact_for_luna(mut row: ResultRow) -> ResultRow {
    row.fields
        .retain(|k, _| LUNA_ROW_KEEP.contains(&k.as_str()));
    if let Some(Value::Array(evidence)) = row.fields.get_mut("evidence") {
        evidence.truncate(1);
        for e in evidence.iter_mut() {
            if let Value::Object(map) = e {
                map.retain(|k, _| matches!(k.as_str(), "ref" | "buyer" | "amount" | "date"));
            }
        }
    }
    row
}

fn search_envelope(
    page: &SearchPage,
    surface: Surface,
    found: &HashMap<String, crate::market::provenance::Provenance>,
) -> EngineResult<Envelope> {
    let mut rows = page
        .results
        .iter()
        .map(|r| {
            to_row(r).map(compact).map(|row| {
                if surface == Surface::Luna {
                    compact_for_luna(row)
                } else {
                    row
                }
            })
        })
        .collect::<EngineResult<Vec<_>>>()?;
    if surface != Surface::Luna {
        provenance::attach(&mut rows, found);
    }
    let mut env = Envelope::rows(rows);
    env.has_more = page.has_more;
    env.cursor = page.cursor.clone();
    if page.has_more {
        env.status = ResultStatus::Continue;
        env.next_action = Some(format!(
            "Hay más {}: repite la misma consulta (kind, query y filters iguales) con este cursor para la siguiente página; para el número exacto usa market_count.",
            page.kind.label()
        ));
    }
    Ok(env)
}

async fn search(ctx: ToolCtx, args: Value) -> EngineResult<ToolOutput> {
    let args: SearchArgs = market::parse_args(args)?;
    let market = &ctx.engine.market;
    let fit = ctx.budget.saturating_sub(ENVELOPE_MARGIN);
    // The page size follows the budget *before* the query, so the page that is
    // sealed into the cursor is exactly the page returned.
    let row_estimate = if ctx.surface == Surface::Luna {
        row_chars(args.kind) / 3
    } else {
        row_chars(args.kind)
    };
    let mut cap = ctx.page_size_hint(row_estimate, MAX_LIMIT as usize);
    loop {
        let page = market.search(&args, Some(cap as u32)).await?;
        let found = if ctx.surface == Surface::Luna {
            HashMap::new()
        } else {
            provenance::of_rows(market.store(), &page.results).await?
        };
        let mut env = search_envelope(&page, ctx.surface, &found)?;
        let size = budget::size_chars(&env);
        if size <= fit || page.shown == 0 {
            return Ok(env.into());
        }
        if page.shown == 1 {
            // One row larger than the budget: keep the row, shorten its evidence.
            trim_evidence(&mut env, fit);
            return Ok(env.into());
        }
        let per_row = size / page.shown;
        cap = (fit.saturating_sub(ENVELOPE_MARGIN) / per_row.max(1)).clamp(1, page.shown - 1);
    }
}

async fn get(ctx: ToolCtx, args: GetArgs) -> EngineResult<ToolOutput> {
    let result = ctx.engine.market.get(&args).await?;
    let branch = match result.branch {
        GetBranch::Supplier => "supplier",
        GetBranch::Opportunity => "opportunity",
        GetBranch::Award => "award",
        GetBranch::Permit => "permit",
        GetBranch::Risk => "risk",
    };
    let mut row = match &result.record {
        MarketRecord::Supplier(d) => to_row(d)?,
        MarketRecord::Opportunity(r) => to_row(r)?,
        MarketRecord::Award(r) => to_row(r)?,
        MarketRecord::Permit(r) => to_row(r)?,
        MarketRecord::Risk(r) => to_row(r)?,
    };
    row.fields.insert("record_kind".into(), json!(branch));
    if let Some(p) = provenance::of_record(ctx.engine.market.store(), &result.record).await? {
        row.fields.insert("provenance".into(), json!(p));
    }
    let mut env = Envelope::rows(vec![row]);
    // A supplier with many awards must not lose the whole row to the budget: shorten
    // its award list instead and say where the rest is.
    let fit = ctx.budget.saturating_sub(ENVELOPE_MARGIN);
    let mut cut = false;
    while budget::size_chars(&env) > fit {
        let Some(Value::Array(awards)) = env.results[0].fields.get_mut("awards") else {
            break;
        };
        if awards.pop().is_none() {
            break;
        }
        cut = true;
    }
    if cut {
        env.results[0]
            .fields
            .insert("awards_truncated".into(), json!(true));
        env.next_action = Some(
            "La lista de Adjudicaciones se acortó: para verlas todas usa market_search con kind awards y filters.rfc de este Proveedor.".into(),
        );
    }
    trim_evidence(&mut env, fit);
    Ok(ToolOutput::from(env).with_charge(intelligence("market_get", branch)))
}

/// Admits one read and checks that one more crédito de inteligencia is available
/// (`pending` are already promised in this call).
async fn admit_one(ctx: &ToolCtx, pending: usize) -> EngineResult<()> {
    let now = now_ms();
    let billing = &ctx.engine.billing;
    billing
        .admit_reads(&ctx.caller.workspace_id, 1, now)
        .await?;
    let left = billing
        .balance_at(&ctx.caller, Ledger::Intelligence, now)
        .await?
        .left();
    let need = pending as i64 + 1;
    if left < need {
        return Err(crate::billing::insufficient(
            Ledger::Intelligence,
            1,
            left - pending as i64,
        ));
    }
    Ok(())
}

fn count_error_row(i: usize, input: &str, e: &EngineError) -> StateCount {
    StateCount {
        input: input.to_owned(),
        state: None,
        r#ref: Some(format!("record:count:{}", i + 1)),
        ref_label: format!("«{}» no se pudo contar", input.trim()),
        count: None,
        error: Some(e.body()),
    }
}

async fn count(ctx: ToolCtx, args: CountArgs) -> EngineResult<ToolOutput> {
    let market = &ctx.engine.market;
    let kind = args.kind.unwrap_or(MarketKind::Suppliers);
    let mut charges = Vec::new();
    let result = if args.states.is_empty() || args.states.len() > MAX_COUNT_STATES {
        // One count (or the domain's typed error for too many states).
        if args.states.is_empty() {
            args.filters.resolve(kind)?;
            admit_one(&ctx, 0).await?;
        }
        let r = market.count(&args).await?;
        charges.push(intelligence("market_count", "total"));
        r
    } else {
        // Whole-call checks first (bad filters, `state` with `states`, a kind without
        // states): those fail the call before anything is admitted. The domain rejects
        // the last two before touching SQL.
        args.filters.resolve(kind)?;
        if args.filters.state.is_some() || !allowed_keys(kind).contains(&"state") {
            market.count(&args).await?;
            return Err(EngineError::Internal(
                "market_count accepted states it should reject".into(),
            ));
        }
        let mut seen: Vec<State> = Vec::new();
        let mut out = Vec::with_capacity(args.states.len());
        for (i, input) in args.states.iter().enumerate() {
            let state = State::normalize(input, StateContext::Filter).and_then(|s| {
                if seen.contains(&s) {
                    Err(market::filters::invalid(
                        format!("{} aparece más de una vez en `states`.", s.name()),
                        "Escribe cada estado una sola vez.",
                    ))
                } else {
                    seen.push(s);
                    Ok(s)
                }
            });
            let state = match state {
                Ok(s) => s,
                Err(e) => {
                    out.push(count_error_row(i, input, &e));
                    continue;
                }
            };
            if let Err(e) = admit_one(&ctx, charges.len()).await {
                out.push(count_error_row(i, input, &e));
                continue;
            }
            let one = CountArgs {
                kind: args.kind,
                filters: args.filters.clone(),
                states: vec![input.clone()],
            };
            match market.count(&one).await {
                Ok(mut r) if r.states.len() == 1 && r.states[0].count.is_some() => {
                    charges.push(intelligence(
                        "market_count",
                        format!("state:{:02}", state.code()),
                    ));
                    out.push(r.states.remove(0));
                }
                Ok(mut r) => {
                    if let Some(s) = r.states.pop() {
                        out.push(s);
                    }
                }
                Err(e) => out.push(count_error_row(i, input, &e)),
            }
        }
        let total = out.iter().map(|s| s.count).sum::<Option<u64>>();
        CountResult {
            kind,
            states: out,
            total,
        }
    };
    Ok(count_envelope(&result, charges))
}

fn count_envelope(r: &CountResult, charges: Vec<ChargeSpec>) -> ToolOutput {
    let label = match r.total {
        Some(n) => format!("{} que cumplen los filtros: {n}", r.kind.label()),
        None => format!(
            "{}: el total no está disponible porque un estado no se pudo contar",
            r.kind.label()
        ),
    };
    let mut rows = vec![ResultRow::new("record:count:total", label)
        .with("kind", r.kind)
        .with("total", r.total)];
    for s in &r.states {
        let mut row = ResultRow::new(
            s.r#ref
                .clone()
                .unwrap_or_else(|| "record:count:state".into()),
            s.ref_label.clone(),
        )
        .with("input", &s.input)
        .with("state", &s.state)
        .with("count", s.count);
        if let Some(e) = &s.error {
            row = row.with("error", e);
        }
        rows.push(row);
    }
    let mut env = Envelope::rows(rows);
    if r.total.is_none() {
        env.status = ResultStatus::Incomplete;
        env.next_action = Some(
            "Corrige o quita los estados con error y vuelve a contar; no afirmes un total.".into(),
        );
    }
    ToolOutput {
        envelope: env,
        charges,
    }
}

async fn aggregate(ctx: ToolCtx, mut args: AggregateArgs) -> EngineResult<ToolOutput> {
    // Push the budget down to the number of groups (an out-of-range limit still
    // reaches the domain, which rejects it with its typed error).
    let requested = args.limit.unwrap_or(DEFAULT_LIMIT);
    if (1..=MAX_LIMIT).contains(&requested) {
        let cap = ctx.page_size_hint(300, MAX_LIMIT as usize) as u32;
        args.limit = Some(requested.min(cap));
    }
    let r = ctx.engine.market.aggregate(&args).await?;
    let mut rows = Vec::with_capacity(r.groups.len());
    for g in &r.groups {
        rows.push(to_row(g)?);
    }
    let mut env = Envelope::rows(rows);
    env.has_more = r.has_more || args.limit.unwrap_or(DEFAULT_LIMIT) < requested;
    env.coverage = Some(json!({
        "total_awards": r.total_awards,
        "total_amount_mxn": r.total_amount_mxn,
        "group_by": r.group_by,
    }));
    if env.has_more {
        env.next_action = Some(
            "Hay más grupos: acota los filtros para ver otros; los totales de coverage cubren todas las Adjudicaciones que cumplen los filtros.".into(),
        );
    }
    Ok(env.into())
}

async fn history(ctx: ToolCtx, args: HistoryArgs) -> EngineResult<ToolOutput> {
    let h = ctx.engine.market.history(&args).await?;
    let mut head = ResultRow::new(h.r#ref.clone(), h.ref_label.clone())
        .with("rfc", &h.rfc)
        .with("check_digit_ok", h.check_digit_ok)
        .with("warnings", &h.warnings)
        .with("by_year", &h.by_year);
    if let Some(s) = &h.supplier {
        head = head
            .with("name", &s.name)
            .with("state", &s.state)
            .with("scian_name", &s.scian_name)
            .with("awards_count", s.awards_count)
            .with("awards_total_mxn", s.awards_total_mxn)
            .with("last_award", &s.last_award);
    }
    let mut rows = vec![head];
    // Marks and registrations first: a budget cut drops the oldest awards, not a risk.
    for m in &h.marks {
        rows.push(to_row(m)?.with("section", "marca_de_riesgo"));
    }
    for p in &h.permits {
        rows.push(to_row(p)?.with("section", "registro"));
    }
    for a in &h.awards {
        rows.push(to_row(a)?.with("section", "adjudicacion"));
    }
    Ok(Envelope::rows(rows).into())
}

async fn compare(ctx: ToolCtx, args: Value) -> EngineResult<ToolOutput> {
    let args: CompareArgs = market::parse_args(args)?;
    let r = ctx.engine.market.compare(&args).await?;
    let rows = r
        .segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            ResultRow::new(
                format!("record:segment:{}", i + 1),
                format!(
                    "{}: {} adjudicaciones por {}",
                    s.label,
                    s.awards,
                    market::rows::money(s.amount_mxn, "MXN")
                ),
            )
            .with("label", &s.label)
            .with("awards", s.awards)
            .with("amount_mxn", s.amount_mxn)
            .with("avg_amount_mxn", s.avg_amount_mxn)
            .with("suppliers", s.suppliers)
            .with("top_buyers", &s.top_buyers)
        })
        .collect();
    Ok(Envelope::rows(rows).into())
}

async fn screen(ctx: ToolCtx, args: ScreenArgs) -> EngineResult<ToolOutput> {
    let r = ctx.engine.market.screen(&args).await?;
    let rank = |level: &str| match level {
        "con_marcas" => 0,
        "con_marcas_no_vigentes" => 1,
        "no_verificable" => 2,
        _ => 3,
    };
    let mut ordered: Vec<_> = r.results.iter().collect();
    ordered.sort_by_key(|row| rank(&row.risk_level));
    let mut rows = Vec::with_capacity(ordered.len());
    for s in ordered {
        let mut row = to_row(s)?;
        // Evidence is what justifies the level: one item per mark.
        let evidence: Vec<_> = s.marks.iter().map(market::rows::risk_evidence).collect();
        row.fields.insert("evidence".into(), json!(evidence));
        if s.marks.is_empty() {
            row.fields.remove("marks");
        }
        rows.push(row);
    }
    let mut env = Envelope::rows(rows);
    env.coverage = Some(json!({"screened": r.results.len(), "with_marks": r.with_marks}));
    Ok(env.into())
}

/// Used by `registry::catalog()` and tests: every market tool name.
pub const TOOL_NAMES: [&str; 8] = [
    "market_capabilities",
    "market_search",
    "market_get",
    "market_count",
    "market_aggregate",
    "market_history",
    "market_compare",
    "market_screen",
];

mod provenance;

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod tests;
