//! Turn engine overhead (issue 6): one 8-step turn — seven tool steps and the final
//! answer — played by a scripted model (no model latency) against the real registry
//! and tools on the demo market data, writing every event to the session log.
//! Reports p50/p95 of the whole turn and per step.
//!
//! Run: `cargo bench -p luna-engine --bench turn` (release). `LUNA_BENCH_TURNS=N`
//! changes the number of measured turns (default 200, after 10 warm-up turns).

use std::time::{Duration, Instant};

use luna_engine::turn::gateway::{ModelStep, ScriptedModel, ToolCall};
use luna_engine::turn::intent::{TurnIntent, TurnOutput};
use luna_engine::turn::runner::{run_turn, MAX_STEPS};
use luna_engine::{testkit, Engine, Store};
use luna_protocol::account::{Plan, Role};
use serde_json::{json, Value};

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

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let turns: usize = std::env::var("LUNA_BENCH_TURNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
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

    let mut samples = Vec::with_capacity(turns);
    for i in 0..turns + 10 {
        // Each measured turn reads ~200 rows; reset the hourly read ceiling (600) so
        // the bench measures the loop, not RATE_LIMITED answers.
        sqlx::query("delete from usage_counters")
            .execute(engine.store.pool())
            .await
            .expect("reset counters");
        let session = engine.sessions.create(&caller).await.expect("session").id;
        let model = ScriptedModel::new(trajectory());
        let t = Instant::now();
        let out = run_turn(
            &engine,
            &model,
            &caller,
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
        if i >= 10 {
            samples.push(elapsed);
        }
    }
    let mut per_step: Vec<Duration> = samples.iter().map(|d| *d / MAX_STEPS as u32).collect();
    let (p50, p95) = (pct(&mut samples, 0.50), pct(&mut samples, 0.95));
    let (s50, s95) = (pct(&mut per_step, 0.50), pct(&mut per_step, 0.95));
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
    println!("## Turn engine overhead (scripted model, 8 steps)\n");
    println!(
        "Demo market data ({suppliers} Proveedores, {awards} Adjudicaciones) generated in {:.1} s; \
         {turns} measured turns after 10 warm-up turns, each in a new session; {events} session \
         events per turn.\n",
        seed_time.as_secs_f64()
    );
    println!("| metric | p50 | p95 |\n|---|---|---|");
    println!("| whole turn (8 steps: 7 tool calls + final answer) | {p50:.2} ms | {p95:.2} ms |");
    println!("| per step | {s50:.2} ms | {s95:.2} ms |");
}
