//! Turn engine overhead (issues 6 and 20): one 8-step turn — seven tool steps and the
//! final answer — played by a scripted model (no model latency) against the real
//! registry and tools on the demo market data, writing every event to the session log.
//! Reports p50/p95 of the whole turn and per step, then the same turns again with a
//! span timer attached: where a turn's time goes (the tools' own queries vs
//! validation, admission, metering, telemetry, event appends, snapshots, trajectory).
//!
//! Run: `cargo bench -p luna-engine --bench turn` (release). `LUNA_BENCH_TURNS=N`
//! changes the number of measured turns (default 200, after 10 warm-up turns);
//! `LUNA_BENCH_JSON=1` prints one JSON line instead of the tables (for
//! `benches/turn_vs_langgraph.sh`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use luna_engine::accounts::Caller;
use luna_engine::turn::gateway::{ModelStep, ScriptedModel, ToolCall};
use luna_engine::turn::intent::{TurnIntent, TurnOutput};
use luna_engine::turn::runner::{run_turn, MAX_STEPS};
use luna_engine::{testkit, Engine, Store};
use luna_protocol::account::{Plan, Role};
use serde_json::{json, Value};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

fn pct(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx].as_secs_f64() * 1000.0
}

fn tools(name: &str, args: Value) -> ModelStep {
    ModelStep::Tools(vec![ToolCall {
        name: name.to_owned(),
        args,
    }])
}

/// Seven different reads (so the stagnation governor never cuts the loop) and a
/// final answer anchored to the first count.
fn trajectory() -> Vec<ModelStep> {
    let jalisco = json!({"giro": "empaque", "state": "Jalisco", "has_awards": true});
    vec![
        tools(
            "market_count",
            json!({"kind": "suppliers", "filters": jalisco}),
        ),
        tools(
            "market_search",
            json!({"kind": "suppliers", "filters": jalisco, "limit": 50}),
        ),
        tools(
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "Guanajuato"}, "limit": 50}),
        ),
        tools(
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "Nuevo León"}, "limit": 50}),
        ),
        tools(
            "market_count",
            json!({"kind": "suppliers", "filters": {"state": "Puebla"}}),
        ),
        tools("usage", json!({})),
        tools(
            "market_count",
            json!({"kind": "awards", "filters": {"state": "Jalisco"}}),
        ),
        ModelStep::Final(TurnOutput {
            intent: TurnIntent::Responder {},
            narracion: "Hay [[evidence:c1.shown]] resultados con ese criterio.".to_owned(),
        }),
    ]
}

/// Wall time of every closed span, summed by name (spans only; events stay off so
/// no log line is formatted). The engine's phase spans are `trace` level and cost
/// nothing without a subscriber.
#[derive(Clone, Default)]
struct Phases(Arc<Mutex<HashMap<&'static str, Duration>>>);

impl Phases {
    fn take(&self) -> HashMap<&'static str, Duration> {
        std::mem::take(&mut *self.0.lock().expect("phases"))
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Phases {
    fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Instant::now());
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id) {
            if let Some(started) = span.extensions().get::<Instant>() {
                *self
                    .0
                    .lock()
                    .expect("phases")
                    .entry(span.name())
                    .or_default() += started.elapsed();
            }
        }
    }
}

/// Queries sent to the database, counted from sqlx's per-query `sqlx::query` events
/// and grouped by their text (whitespace collapsed, cut at 100 characters). A query is
/// one round trip: on SQLite a `WriteBatch` flush sends several statements as one
/// query, listed by its first statement. SQLite runs every query on its connection's
/// own thread, where no span is entered, so this is a list per turn, not per phase.
#[derive(Clone, Default)]
struct Statements(Arc<Mutex<HashMap<String, usize>>>);

impl Statements {
    fn total(&self) -> usize {
        self.0.lock().expect("statements").values().sum()
    }
}

/// The `db.statement` field of one sqlx event.
struct StatementText(String);

impl tracing::field::Visit for StatementText {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "db.statement" {
            self.0 = value.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "db.statement" {
            self.record_str(field, &format!("{value:?}"));
        }
    }
}

impl<S: Subscriber> Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            let mut text = StatementText(String::new());
            event.record(&mut text);
            let key: String = text.0.chars().take(100).collect();
            *self.0.lock().expect("statements").entry(key).or_default() += 1;
        }
    }
}

/// The rows of the breakdown: (label, span names whose time it sums).
const ROWS: &[(&str, &[&str])] = &[
    ("tools' own queries (handlers)", &["tool.execute"]),
    (
        "validation + policy (resolve, schema, authorize)",
        &["tool.validate"],
    ),
    (
        "admission (read ceiling, quotas, balance, key budget)",
        &["tool.admit"],
    ),
    ("metering charge (intelligence credit)", &["tool.charge"]),
    ("telemetry row (`tool_calls`)", &["tool.telemetry"]),
    ("session event appends (commits)", &["session.append"]),
    ("snapshot reads (fold of the log)", &["session.snapshot"]),
    ("steering reads (events since)", &["session.read"]),
    ("trajectory writes", &["turn.trajectory"]),
];

async fn one_turn(engine: &Engine, caller: &Caller, i: usize) -> Duration {
    // Each measured turn reads ~200 rows and spends 7 intelligence credits; reset the
    // hourly read ceiling (600) and the month's credits so the bench measures the
    // loop, not RATE_LIMITED or INSUFFICIENT_CREDITS answers.
    for reset in [
        "delete from usage_counters",
        "update credit_ledgers set used = 0",
    ] {
        sqlx::query(reset)
            .execute(engine.store.pool())
            .await
            .expect("reset counters");
    }
    let session = engine.sessions.create(caller).await.expect("session").id;
    let model = ScriptedModel::new(trajectory());
    let t = Instant::now();
    let out = run_turn(
        engine,
        &model,
        caller,
        &session,
        &format!("turn_{i}"),
        "¿Cuántos fabricantes de empaque hay en Jalisco que le vendieron a gobierno?",
    )
    .await
    .expect("turn");
    let elapsed = t.elapsed();
    assert_eq!(
        out.steps,
        MAX_STEPS,
        "the bench turn must use all {MAX_STEPS} steps: {:?}",
        out.transcript
            .iter()
            .map(|e| format!(
                "{} {}",
                e.tool.name,
                e.result.to_string().chars().take(300).collect::<String>()
            ))
            .collect::<Vec<_>>()
    );
    assert!(!out.repaired && !out.trimmed, "{:?}", out.narration);
    assert!(
        out.transcript
            .iter()
            .all(|e| e.result.get("error").is_none()),
        "every tool answered: {:?}",
        out.transcript
            .iter()
            .filter_map(|e| e.result.get("error").map(|err| (&e.tool.name, err)))
            .collect::<Vec<_>>()
    );
    elapsed
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let turns: usize = std::env::var("LUNA_BENCH_TURNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let as_json = std::env::var("LUNA_BENCH_JSON").is_ok_and(|v| v == "1");
    let engine = Engine::from_store(Store::open_temp().await.expect("temp database"));
    let started = Instant::now();
    engine.market.ensure_demo().await.expect("demo market data");
    let seed_time = started.elapsed();
    let suppliers: i64 = sqlx::query_scalar("select count(*) from mk_suppliers")
        .fetch_one(engine.store.pool())
        .await
        .expect("count");
    let awards: i64 = sqlx::query_scalar("select count(*) from mk_awards")
        .fetch_one(engine.store.pool())
        .await
        .expect("count");
    let caller = testkit::caller(&engine, Plan::Founder, Role::Member)
        .await
        .expect("caller");

    // 1. The whole turn, no subscriber (what production pays).
    let mut samples = Vec::with_capacity(turns);
    for i in 0..turns + 10 {
        let elapsed = one_turn(&engine, &caller, i).await;
        if i >= 10 {
            samples.push(elapsed);
        }
    }
    let mut per_step: Vec<Duration> = samples.iter().map(|d| *d / MAX_STEPS as u32).collect();
    let (p50, p95) = (pct(&mut samples, 0.50), pct(&mut samples, 0.95));
    let (s50, s95) = (pct(&mut per_step, 0.50), pct(&mut per_step, 0.95));

    // 2. The same turns with the span timer: per-turn time of every phase.
    let phases = Phases::default();
    let subscriber = tracing_subscriber::registry().with(
        phases
            .clone()
            .with_filter(tracing_subscriber::filter::filter_fn(|m| m.is_span())),
    );
    let guard = tracing::subscriber::set_default(subscriber);
    let mut per_row: Vec<Vec<Duration>> = vec![Vec::new(); ROWS.len()];
    let (mut timed, mut overhead) = (Vec::new(), Vec::new());
    for i in 0..turns {
        phases.take();
        let whole = one_turn(&engine, &caller, turns + 10 + i).await;
        let spans = phases.take();
        let sum = |names: &[&str]| -> Duration {
            names
                .iter()
                .map(|n| spans.get(n).copied().unwrap_or_default())
                .sum()
        };
        for (k, (_, names)) in ROWS.iter().enumerate() {
            per_row[k].push(sum(names));
        }
        timed.push(whole);
        overhead.push(whole.saturating_sub(sum(&["tool.execute"])));
    }
    drop(guard);

    // 3. Statements per turn: a few turns with a global subscriber (the database
    //    threads log there), after the timed passes so their formatting costs nothing.
    let statements = Statements::default();
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(statements.clone().with_filter(
            tracing_subscriber::filter::filter_fn(|m| m.target() == "sqlx::query"),
        )),
    )
    .expect("one global subscriber");
    const COUNTED: usize = 5;
    statements.0.lock().expect("statements").clear();
    for i in 0..COUNTED {
        one_turn(&engine, &caller, 2 * turns + 10 + i).await;
    }
    // Each turn also runs the bench's two resets and the session's creation
    // (an insert and its read back): 4.
    let per_turn = statements.total() / COUNTED - 4;
    let mut listed_statements: Vec<(String, f64)> = statements
        .0
        .lock()
        .expect("statements")
        .drain()
        .map(|(sql, n)| (sql, n as f64 / COUNTED as f64))
        .collect();
    listed_statements.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let mean = |v: &[Duration]| v.iter().sum::<Duration>().as_secs_f64() * 1000.0 / v.len() as f64;
    let listed: f64 = per_row.iter().map(|v| mean(v)).sum();
    let rest = mean(&timed) - listed;
    let (o50, o95) = (pct(&mut overhead, 0.50), pct(&mut overhead, 0.95));
    let tools50 = pct(&mut per_row[0].clone(), 0.50);

    let events = engine
        .sessions
        .events_since(
            &caller,
            &engine
                .sessions
                .latest(&caller)
                .await
                .expect("latest")
                .expect("a session")
                .id,
            0,
        )
        .await
        .expect("events")
        .len();
    if as_json {
        println!(
            "{}",
            json!({"engine": "luna", "turns": turns, "p50_ms": (p50 * 100.0).round() / 100.0,
                   "p95_ms": (p95 * 100.0).round() / 100.0,
                   "overhead_p50_ms": (o50 * 100.0).round() / 100.0,
                   "tools_p50_ms": (tools50 * 100.0).round() / 100.0,
                   "queries_per_turn": per_turn})
        );
        return;
    }
    println!("## Turn engine overhead (scripted model, 8 steps)\n");
    println!(
        "Demo market data ({suppliers} Proveedores, {awards} Adjudicaciones) generated in {:.1} s; \
         {turns} measured turns after 10 warm-up turns, each in a new session; {events} session \
         events per turn.\n",
        seed_time.as_secs_f64()
    );
    println!(
        "Queries sent to the database per turn (tools' own included; a batch of statements sent as one query counts once): {per_turn}.\n"
    );
    println!("| metric | p50 | p95 |\n|---|---|---|");
    println!("| whole turn (8 steps: 7 tool calls + final answer) | {p50:.2} ms | {p95:.2} ms |");
    println!("| per step | {s50:.2} ms | {s95:.2} ms |");
    println!(
        "| overhead: whole turn − tools' own queries (span-timed pass) | {o50:.2} ms | {o95:.2} ms |"
    );
    println!("\n### Where a turn's time goes (span-timed pass, per turn)\n");
    println!("| phase | p50 | mean |\n|---|---|---|");
    for (k, (label, _)) in ROWS.iter().enumerate() {
        let mut v = per_row[k].clone();
        println!(
            "| {label} | {:.2} ms | {:.2} ms |",
            pct(&mut v, 0.5),
            mean(&v)
        );
    }
    println!(
        "| rest (loop bookkeeping, ledger, profile, plan, idempotency-free pipeline glue) | — | {rest:.2} ms |"
    );
    println!(
        "| whole turn (span-timed) | {:.2} ms | {:.2} ms |",
        pct(&mut timed.clone(), 0.5),
        mean(&timed)
    );
    if std::env::var("LUNA_BENCH_STATEMENTS").is_ok_and(|v| v == "1") {
        println!("\n### Queries per turn, by text (the bench's own resets included)\n");
        println!("| per turn | statement |\n|---|---|");
        for (sql, n) in &listed_statements {
            println!("| {n:.1} | `{}` |", sql.replace('|', "\\|"));
        }
    }
}
