//! Load proof (issue 12): 1,000 concurrent websocket sessions on one `luna-server`
//! with turns running on the local director.
//!
//! Shape: start the real server binary on a fresh database (embedded SQLite by
//! default, or `--database-url`), sign in enough people in every Founder workspace
//! that none holds more than `MAX_SOCKETS_PER_USER` sockets, open `--sockets` work
//! sessions through the app's server functions and one websocket on each. Phase 1
//! (idle): resident memory with every socket open against a baseline with none.
//! Phase 2 (load): `--turn-sessions` of them run `--turns-per-session` scene turns
//! each, at most `--concurrency` at once, while every socket stays open.
//! Delivery latency of an event = its receipt on the socket − the time the server
//! stamped on it when appending it (`session_events.created_at`, ms resolution, same
//! machine and clock). Every socket checks that seqs are contiguous and end at the
//! session's last seq as the API reports it; every HTTP call must answer 200; any close
//! or error of a socket counts. The report is printed; the exit code is 1 if there was
//! any error or dropped event.
//!
//! `end2end/load/run.sh` raises the open-files limit and runs it in release.

mod args;
mod db;
mod http;
mod report;
mod server;
mod socket;
mod stats;
mod turns;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use futures_util::{stream, StreamExt};
use luna_engine::demo::DEMO_PASSWORD;
use tokio::sync::{mpsc, watch, Semaphore};

use crate::http::Api;
use crate::server::Server;
use crate::socket::Outcome;
use crate::turns::{ms, TurnTiming};

/// HTTP calls in flight at once during set-up and the final check.
const SETUP_CONCURRENCY: usize = 8;

fn main() {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e:#}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(args)) {
        Ok(0) => {}
        Ok(failures) => {
            eprintln!("FAILED: {failures} errors or dropped events");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("load bench aborted: {e:#}");
            std::process::exit(1);
        }
    }
}

/// The readings the report is made of.
#[derive(Default)]
struct Readings {
    rss_start_kib: u64,
    rss_baseline_kib: u64,
    rss_idle_kib: u64,
    rss_after_kib: u64,
    rss_peak_kib: u64,
    threads_idle: u64,
    idle_cpu_secs: f64,
    idle_window_secs: f64,
    connect_secs: f64,
    handshake_ms: Vec<f64>,
    load_secs: f64,
    load_server_cpu_secs: f64,
    load_bench_cpu_secs: f64,
    /// Server CPU seconds per kind of thread during the load (threads that ended
    /// during the load are missing).
    load_cpu_by_thread: Vec<(String, f64)>,
}

async fn run(args: args::Args) -> Result<u64> {
    let limit = server::open_files_limit().unwrap_or(0);
    if limit < args.sockets as u64 + 256 {
        bail!(
            "the open-files limit is {limit}; {} sockets need more: run `ulimit -n 65536` \
             first (end2end/load/run.sh does)",
            args.sockets
        );
    }
    let data_dir = std::env::temp_dir().join(format!("luna-load-{}", std::process::id()));
    std::fs::create_dir_all(&data_dir).context("the data dir")?;
    let url = if args.database_url.is_empty() {
        format!("sqlite://{}", data_dir.join("luna.db").display())
    } else {
        args.database_url.clone()
    };
    let engine = if args.database_url.is_empty() {
        "SQLite (embedded, default)"
    } else {
        "PostgreSQL"
    };
    println!(
        "# Luna load bench — {engine}, data in {}",
        data_dir.display()
    );
    println!("{args:?}");
    // Enough people that none holds more than the server's per-person socket cap.
    let workspaces = args.teams + 1;
    let people_per_team = (args.sockets + 1)
        .div_ceil(luna_server::sockets::MAX_SOCKETS_PER_USER)
        .div_ceil(workspaces)
        .max(1);
    let logins = db::seed_teams(&url, args.teams, people_per_team).await?;
    let mut srv = Server::start(&args.server, &data_dir, &args.database_url).await?;
    let mut r = Readings {
        rss_start_kib: srv.memory_kib()?.0,
        ..Readings::default()
    };
    println!("server pid {} on {}", srv.pid(), srv.bind);

    // Sign everyone in and open the sessions round-robin over them.
    let client = http::client()?;
    let mut people = Vec::new();
    for email in &logins {
        people.push(Api::login(&client, &srv.base, email, DEMO_PASSWORD).await?);
    }
    let total = args.sockets + 1; // the last one is the warm-up session
    let sessions: Vec<(usize, String)> = stream::iter(0..total)
        .map(|i| {
            let person = i % people.len();
            let api = people[person].clone();
            async move { api.create_session().await.map(|s| (person, s)) }
        })
        .buffered(SETUP_CONCURRENCY)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let (warm_person, warm_session) = sessions[args.sockets].clone();
    let sessions = &sessions[..args.sockets];
    println!(
        "{} sessions over {} workspaces",
        sessions.len(),
        people.len()
    );

    // Warm-up: one turn on its own socket, so pools and caches exist before the baseline.
    let warm = warm_up(&srv, &people[warm_person], &warm_session, &args.text).await?;
    println!(
        "warm-up turn: {} events in {:.0} ms",
        warm.events, warm.finished_ms
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    r.rss_baseline_kib = srv.memory_kib()?.0;

    // Phase 1: every socket open and idle.
    let (stop_tx, stop_rx) = watch::channel(false);
    let started = Instant::now();
    let connected: Vec<_> = stream::iter(sessions.iter().enumerate())
        .map(|(i, (person, session))| {
            let cookie = people[*person].cookie().to_owned();
            let bind = srv.bind.clone();
            async move {
                let t = Instant::now();
                let socket = socket::connect(&bind, &cookie, session).await;
                (i, socket, ms(t.elapsed()))
            }
        })
        .buffer_unordered(args.connect_concurrency)
        .collect()
        .await;
    r.connect_secs = started.elapsed().as_secs_f64();
    let mut followers = Vec::new();
    let mut drivers_marks = HashMap::new();
    let mut connect_errors = Vec::new();
    for (i, socket, handshake) in connected {
        let socket = match socket {
            Ok(s) => s,
            Err(e) => {
                connect_errors.push(format!("{e:#}"));
                continue;
            }
        };
        r.handshake_ms.push(handshake);
        let marks = if i < args.turn_sessions {
            let (tx, rx) = mpsc::unbounded_channel();
            drivers_marks.insert(i, rx);
            Some(tx)
        } else {
            None
        };
        followers.push((
            i,
            tokio::spawn(socket::follow(socket, marks, stop_rx.clone())),
        ));
    }
    println!(
        "{} sockets open in {:.1} s ({} refused)",
        followers.len(),
        r.connect_secs,
        connect_errors.len()
    );
    let cpu0 = srv.cpu_secs()?;
    let idle_started = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.idle_secs)).await;
    r.idle_cpu_secs = srv.cpu_secs()? - cpu0;
    r.idle_window_secs = idle_started.elapsed().as_secs_f64();
    r.rss_idle_kib = srv.memory_kib()?.0;
    r.threads_idle = srv.threads()?;

    // Phase 2: turns on the first `turn_sessions` sessions while all sockets stay open.
    let gate = Arc::new(Semaphore::new(args.concurrency));
    let cpu0 = srv.cpu_secs()?;
    let threads0 = srv.cpu_by_thread()?;
    let me0 = server::cpu_secs_of("/proc/self/stat")?;
    let started = Instant::now();
    let mut drivers = Vec::new();
    for (i, (person, session)) in sessions.iter().enumerate().take(args.turn_sessions) {
        let Some(marks) = drivers_marks.remove(&i) else {
            continue; // its socket was refused (already counted)
        };
        drivers.push(tokio::spawn(turns::drive(
            people[*person].clone(),
            session.clone(),
            marks,
            args.turns_per_session,
            args.text.clone(),
            gate.clone(),
        )));
    }
    let mut timings: Vec<TurnTiming> = Vec::new();
    let mut turn_errors = Vec::new();
    for d in drivers {
        let (t, e) = d.await.context("a turn driver panicked")?;
        timings.extend(t);
        turn_errors.extend(e);
    }
    r.load_secs = started.elapsed().as_secs_f64();
    r.load_server_cpu_secs = srv.cpu_secs()? - cpu0;
    r.load_bench_cpu_secs = server::cpu_secs_of("/proc/self/stat")? - me0;
    for (kind, secs) in srv.cpu_by_thread()? {
        let used = secs - threads0.get(&kind).copied().unwrap_or(0.0);
        r.load_cpu_by_thread.push((kind, used));
    }
    println!(
        "{} turns finished in {:.1} s ({} errors)",
        timings.len(),
        r.load_secs,
        turn_errors.len()
    );

    // Every session's last seq as the API reports it; let the sockets drain, then stop.
    let expected: Vec<Result<u64>> = stream::iter(sessions.iter())
        .map(|(person, session)| {
            let api = people[*person].clone();
            async move { api.last_seq(session).await }
        })
        .buffered(SETUP_CONCURRENCY)
        .collect()
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = stop_tx.send(true);
    let mut outcomes: HashMap<usize, Outcome> = HashMap::new();
    for (i, f) in followers {
        outcomes.insert(i, f.await.context("a socket task panicked")?);
    }
    let alive = srv.alive();
    let (rss, peak) = srv.memory_kib().unwrap_or((0, 0));
    r.rss_after_kib = rss;
    r.rss_peak_kib = peak;
    let log = srv.log.clone();
    srv.stop()?;

    let appended = db::append_times(&url).await?;
    let report = report::Report {
        args: &args,
        sessions,
        expected: &expected,
        outcomes: &outcomes,
        appended: &appended,
        timings: &mut timings,
        turn_errors: &turn_errors,
        connect_errors: &connect_errors,
        readings: &mut r,
        server_alive: alive,
        server_log: &log,
    };
    let failures = report.print();
    if failures == 0 {
        // Keep the data (database and server log) only when something needs a look.
        let _ = std::fs::remove_dir_all(&data_dir);
    } else {
        println!("data and server log kept in {}", data_dir.display());
    }
    Ok(failures)
}

/// The warm-up turn's size and duration.
struct WarmUp {
    events: u64,
    finished_ms: f64,
}

async fn warm_up(srv: &Server, api: &Api, session: &str, text: &str) -> Result<WarmUp> {
    let socket = socket::connect(&srv.bind, api.cookie(), session).await?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let (tx, rx) = mpsc::unbounded_channel();
    let follower = tokio::spawn(socket::follow(socket, Some(tx), stop_rx));
    let gate = Arc::new(Semaphore::new(1));
    let (timings, errors) =
        turns::drive(api.clone(), session.to_owned(), rx, 1, text.into(), gate).await;
    let _ = stop_tx.send(true);
    let outcome = follower.await.context("the warm-up socket panicked")?;
    if let Some(e) = errors.first().or(outcome.errors.first()) {
        bail!("warm-up turn failed: {e}");
    }
    Ok(WarmUp {
        events: outcome.events,
        finished_ms: timings.first().map_or(0.0, |t| t.finished_ms),
    })
}
