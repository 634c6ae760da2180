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

mod counts;
mod defs;

use counts::count;
pub use defs::register;

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
                format!("record:coverage:{}", k.kind),
                format!("{}: {}", k.label, k.rows),
            )
            .with("kind", &k.kind)
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
    for (i, f) in cov.imports.iter().enumerate() {
        let name = f.publisher.clone().unwrap_or_else(|| f.source.clone());
        rows.push(
            ResultRow::new(format!("record:import:{}", i + 1), name)
                .with("files", f.files)
                .with("last_import", f.last_import_at.and_then(ms_to_date))
                .with("newest_release", &f.newest_release),
        );
    }
    let mut env = Envelope::rows(rows);
    env.coverage = Some(json!({
        "states": cov.states.iter().map(|s| json!({"state": s.state, "suppliers": s.suppliers, "awards": s.awards})).collect::<Vec<_>>(),
        "years": cov.years,
        "last_sync": cov.last_sync.as_ref().map(|s| json!({"status": s.status, "finished": s.finished_at.and_then(ms_to_date), "imported": s.imported})),
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

/// What engine code reads of a `market_search` row of Proveedores, on any surface:
/// its `rfc` (kept by every compaction; `null` when the company has none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupplierRfc {
    pub rfc: Option<String>,
}

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
