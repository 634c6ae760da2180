//! Write throughput on PostgreSQL (issue 20): each of 1, 8 and 32 workspaces runs its
//! own writer that loops over one unit of work — a CRM record added (a check-then-write
//! transaction of the workspace, `crm::records::add`) and one event appended to the
//! workspace's session (`Sessions::append_one`) — for a fixed time, on one and on two
//! "instances" (two `Engine`s, each with the production pool of 8 connections, on one
//! database; writers alternate between them). Prints units per second per cell, as a
//! Markdown table.
//!
//! Run: `LUNA_TEST_DATABASE_URL=postgres://… cargo bench -p luna-engine --bench writes`.
//! `LUNA_BENCH_SECS=N` sets the seconds per cell (default 4). Without a PostgreSQL URL
//! it runs on SQLite (one writer by nature) and says so.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use luna_engine::accounts::Caller;
use luna_engine::base::surface::Surface;
use luna_engine::crm::collections::{self, NewCollection};
use luna_engine::crm::model::{Actor, FieldDef, FieldType};
use luna_engine::crm::records::{self, NewRecord};
use luna_engine::{testkit, Engine, Store};
use luna_protocol::account::{Plan, Role};
use luna_protocol::event::{SessionEvent, UserMessage};
use serde_json::{json, Map};

/// One workspace's writer: its caller, collection and session.
#[derive(Clone)]
struct Writer {
    caller: Caller,
    collection: String,
    session: String,
}

async fn writer(engine: &Engine) -> Writer {
    let caller = testkit::caller(engine, Plan::Commercial, Role::Owner)
        .await
        .expect("caller");
    let collection = collections::create(
        &engine.store,
        &caller.workspace_id,
        NewCollection {
            name: "Banco".into(),
            stages: vec!["Nuevo".into(), "Contactado".into()],
            primary_field: "empresa".into(),
            fields: vec![FieldDef {
                key: "empresa".into(),
                label: "Empresa".into(),
                kind: FieldType::Text,
                locked: false,
            }],
        },
    )
    .await
    .expect("collection")
    .id;
    let session = engine.sessions.create(&caller).await.expect("session").id;
    Writer {
        caller,
        collection,
        session,
    }
}

/// One unit of work: a record added and an event appended.
async fn unit(engine: &Engine, w: &Writer, i: u64) {
    let mut fields = Map::new();
    fields.insert("empresa".into(), json!(format!("Empresa {i}")));
    records::add(
        &engine.store,
        &Actor::new(&w.caller, Surface::Ui),
        NewRecord {
            collection_id: w.collection.clone(),
            entity_id: None,
            stage: None,
            fields,
        },
        false,
    )
    .await
    .expect("record added");
    engine
        .sessions
        .append_one(
            &w.session,
            SessionEvent::UserMessage(UserMessage {
                turn_id: format!("turn_{i}"),
                text: format!("mensaje {i}"),
                steering: false,
            }),
        )
        .await
        .expect("event appended");
}

/// Units per second with `writers` concurrent workspaces spread over `instances`.
async fn cell(instances: &[Engine], writers: &[Writer], secs: u64) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for (n, w) in writers.iter().enumerate() {
        let engine = instances[n % instances.len()].clone();
        let (w, done) = (w.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0;
            while Instant::now() < deadline {
                unit(&engine, &w, i).await;
                i += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    for t in tasks {
        t.await.expect("writer");
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let secs: u64 = std::env::var("LUNA_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    // The temporary store owns the schema; the "instances" open it like the server does.
    let owner = Store::open_temp().await.expect("temp database");
    let url = owner.url().to_owned();
    let a = Engine::from_store(Store::open(&url).await.expect("instance A"));
    let b = Engine::from_store(Store::open(&url).await.expect("instance B"));
    println!(
        "backend {:?}, {secs} s per cell, pool 8 per instance, unit = record added + event appended",
        a.store.backend()
    );
    let mut writers = Vec::new();
    for _ in 0..32 {
        writers.push(writer(&a).await);
    }
    // Warm-up: every writer once on each instance (prepared statements, pools).
    for w in &writers {
        unit(&a, w, 1_000_000).await;
        unit(&b, w, 1_000_001).await;
    }
    println!("| workspaces | 1 instance (units/s) | 2 instances (units/s) |");
    println!("|---:|---:|---:|");
    for n in [1usize, 8, 32] {
        let one = cell(std::slice::from_ref(&a), &writers[..n], secs).await;
        let two = cell(&[a.clone(), b.clone()], &writers[..n], secs).await;
        println!("| {n} | {one:.0} | {two:.0} |");
    }
    drop(owner);
}
