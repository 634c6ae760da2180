//! Market benchmark (not a timed test): generates suppliers + awards into a temporary
//! SQLite file — or, with `LUNA_TEST_DATABASE_URL=postgres://…`, a fresh schema on that
//! PostgreSQL server — then reports p50/p95 of `market_search`, `market_count` and
//! `market_aggregate`, build time and database size, and writes a markdown section
//! to `docs/BENCH.md`.
//!
//! Run: `cargo bench -p luna-engine --bench market` (full size: 200k suppliers, 2M
//! awards). `LUNA_BENCH_SCALE=0.1` runs at 1/10 scale. Heavy on 2 cores: run once.

use std::time::{Duration, Instant};

use luna_engine::market::generator::{GenerateReport, GeneratorConfig};
use luna_engine::market::*;
use luna_engine::store::Backend;
use luna_engine::Store;
use serde_json::json;

fn pct(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx].as_secs_f64() * 1000.0
}

const STATES: &[&str] = &[
    "Jalisco",
    "CDMX",
    "Edomex",
    "Nuevo León",
    "Puebla",
    "Guanajuato",
    "Veracruz",
    "Sonora",
];
const GIROS: &[&str] = &[
    "empaque",
    "insumos médicos",
    "construcción",
    "servicios de TI",
    "alimentos",
    "limpieza",
];
const BUYERS: &[&str] = &["IMSS", "ISSSTE", "CFE", "PEMEX", "SEDENA", "DICONSA"];
const QUERIES: &[&str] = &[
    "cartón",
    "envases",
    "material de curación",
    "software",
    "limpieza",
    "carretera",
];

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let scale: f64 = std::env::var("LUNA_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let iterations: usize = 200;
    // LUNA_BENCH_DB keeps the generated data in that database (built once, reused by
    // later runs), for EXPLAIN sessions with `sqlite3` or `psql`.
    let keep = std::env::var("LUNA_BENCH_DB").ok();
    let store = match &keep {
        Some(url) => Store::open(url).await.expect("open LUNA_BENCH_DB"),
        None => Store::open_temp().await.expect("open"),
    };
    let engine_name = match store.backend() {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    };
    let market = Market::new(store.clone(), b"bench".to_vec());
    let cfg = GeneratorConfig::bench(scale);
    eprintln!(
        "generating {} suppliers, {} awards…",
        cfg.suppliers, cfg.awards
    );
    let t0 = Instant::now();
    let built: i64 = sqlx::query_scalar("select count(*) from mk_suppliers")
        .fetch_one(store.pool())
        .await
        .expect("count");
    let reused = keep.is_some() && built > 0;
    let report = if reused {
        eprintln!("reusing the data in LUNA_BENCH_DB (build time and BENCH.md not written)");
        let mut r = GenerateReport::default();
        for (n, table) in [
            (&mut r.suppliers, "mk_suppliers"),
            (&mut r.awards, "mk_awards"),
            (&mut r.opportunities, "mk_opportunities"),
            (&mut r.permits, "mk_permits"),
            (&mut r.risks, "mk_risks"),
        ] {
            let c: i64 = sqlx::query_scalar(&format!("select count(*) from {table}"))
                .fetch_one(store.pool())
                .await
                .expect("count");
            *n = c as u64;
        }
        r
    } else {
        market.generate(&cfg).await.expect("generate")
    };
    let build = t0.elapsed();
    sqlx::query("analyze")
        .execute(store.pool())
        .await
        .expect("analyze");
    let size: i64 = match store.backend() {
        Backend::Sqlite => {
            sqlx::query("pragma wal_checkpoint(truncate)")
                .execute(store.pool())
                .await
                .expect("checkpoint");
            sqlx::query_scalar(
                "select page_count * page_size from pragma_page_count(), pragma_page_size()",
            )
            .fetch_one(store.pool())
            .await
            .expect("size")
        }
        // Tables, indexes and TOAST of this run's schema.
        Backend::Postgres => sqlx::query_scalar(
            "select cast(coalesce(sum(pg_total_relation_size(c.oid)), 0) as bigint)
               from pg_class c join pg_namespace n on n.oid = c.relnamespace
              where n.nspname = current_schema() and c.relkind = 'r'",
        )
        .fetch_one(store.pool())
        .await
        .expect("size"),
    };
    eprintln!("built in {build:?}, {} MB", size / 1_000_000);

    let mut search_t = Vec::new();
    // Per query shape, to see which one drives the tail.
    let mut shape_t: [Vec<Duration>; 4] = Default::default();
    let mut count_t = Vec::new();
    let mut agg_t = Vec::new();
    for i in 0..iterations {
        let state = STATES[i % STATES.len()];
        let giro = GIROS[i % GIROS.len()];
        let buyer = BUYERS[i % BUYERS.len()];
        let args: SearchArgs = match i % 4 {
            0 => parse_args(json!({"kind": "suppliers", "filters": {"state": state, "giro": giro, "has_awards": true}, "limit": 50})),
            1 => parse_args(json!({"kind": "awards", "filters": {"state": state, "buyer": buyer, "date_from": "2022"}, "limit": 50})),
            2 => parse_args(json!({"kind": "awards", "query": QUERIES[i % QUERIES.len()], "filters": {"state": state}, "limit": 50})),
            _ => parse_args(json!({"kind": "suppliers", "query": QUERIES[i % QUERIES.len()], "filters": {"state": state}, "limit": 20})),
        }
        .expect("args");
        let t = Instant::now();
        let page = market.search(&args, None).await.expect("search");
        search_t.push(t.elapsed());
        shape_t[i % 4].push(t.elapsed());
        std::hint::black_box(page);

        let count: CountArgs = match i % 3 {
            0 => parse_args(json!({"filters": {"giro": giro, "has_awards": true}, "states": [state]})),
            1 => parse_args(json!({"kind": "awards", "filters": {"state": state, "giro": giro}})),
            _ => parse_args(json!({"kind": "awards", "filters": {"buyer": buyer, "date_from": "2023", "date_to": "2023"}})),
        }
        .expect("args");
        let t = Instant::now();
        std::hint::black_box(market.count(&count).await.expect("count"));
        count_t.push(t.elapsed());

        if i % 4 == 0 {
            let group_by = ["supplier", "buyer", "state", "year"][(i / 4) % 4];
            let agg: AggregateArgs =
                parse_args(json!({"filters": {"state": state}, "group_by": group_by}))
                    .expect("args");
            let t = Instant::now();
            std::hint::black_box(market.aggregate(&agg).await.expect("aggregate"));
            agg_t.push(t.elapsed());
        }
    }
    let (s50, s95) = (pct(&mut search_t, 0.5), pct(&mut search_t, 0.95));
    let (c50, c95) = (pct(&mut count_t, 0.5), pct(&mut count_t, 0.95));
    let shapes = [
        "Proveedores by state + giro + with awards",
        "Adjudicaciones by state + buyer + since a year",
        "Adjudicaciones by free text + state",
        "Proveedores by free text + state",
    ];
    let by_shape: String = shapes
        .iter()
        .zip(shape_t.iter_mut())
        .map(|(name, t)| {
            format!(
                "| `market_search` {name} p50 / p95 | {:.2} ms / {:.2} ms |\n",
                pct(t, 0.5),
                pct(t, 0.95)
            )
        })
        .collect();
    let (a50, a95) = (pct(&mut agg_t, 0.5), pct(&mut agg_t, 0.95));
    // The machine is shared: say how busy it was while measuring.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    let profile = if cfg!(debug_assertions) {
        "dev (deps opt-level 1)"
    } else {
        "release"
    };
    let section = format!(
        "## Market data ({engine_name})\n\n\
         Generated with `GeneratorConfig::bench({scale})` (seed {seed}): {sup} Proveedores, {aw} Adjudicaciones, {op} Licitaciones, {pe} Registros, {ri} marcas de riesgo. \
         Profile: {profile}; machine: {cores} cores, 1-minute load average {load} at the end of the run. {scale_note}\n\n\
         | metric | value |\n|---|---|\n\
         | build time (generate + indexes + FTS) | {build:.1} s |\n\
         | database size | {mb:.0} MB |\n\
         | `market_search` p50 / p95 ({n} calls, 4 query shapes, limit 20–50) | {s50:.2} ms / {s95:.2} ms |\n\
         {by_shape}\
         | `market_count` p50 / p95 ({n} calls) | {c50:.2} ms / {c95:.2} ms |\n\
         | `market_aggregate` p50 / p95 ({na} calls, by supplier/buyer/state/year in one state) | {a50:.2} ms / {a95:.2} ms |\n\n\
         Goals (issue 4): search p95 ≤ 25 ms, count p95 ≤ 50 ms.\n\n",
        seed = cfg.seed,
        sup = report.suppliers,
        aw = report.awards,
        op = report.opportunities,
        pe = report.permits,
        ri = report.risks,
        cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        scale_note = if scale < 1.0 { format!("**Scaled run at {scale} of the full size (200k/2M)**.") } else { "Full size.".into() },
        build = build.as_secs_f64(),
        mb = size as f64 / 1e6,
        n = iterations,
        na = agg_t.len(),
    );
    println!("{section}");
    if reused {
        store.pool().close().await;
        return;
    }
    let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/BENCH.md");
    let existing = std::fs::read_to_string(&doc).unwrap_or_else(|_| "# Benchmarks\n\n".into());
    let heading = format!("## Market data ({engine_name})");
    let updated = match existing.find(&heading) {
        Some(start) => {
            let rest = &existing[start + 3..];
            let end = rest
                .find("\n## ")
                .map(|e| start + 3 + e + 1)
                .unwrap_or(existing.len());
            format!("{}{}{}", &existing[..start], section, &existing[end..])
        }
        None => format!("{existing}{section}"),
    };
    if let Some(parent) = doc.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(&doc, updated).expect("write BENCH.md");
    drop(market);
    store.pool().close().await;
}
