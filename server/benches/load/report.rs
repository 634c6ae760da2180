//! The printed report: set-up, memory, turns, delivery latency, and every error and
//! dropped event counted. `print` returns the number of failures (0: the proof holds).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::Result;

use crate::args::Args;
use crate::socket::Outcome;
use crate::stats::line_ms;
use crate::turns::TurnTiming;
use crate::Readings;

pub struct Report<'a> {
    pub args: &'a Args,
    /// (workspace index, session id) per socket.
    pub sessions: &'a [(usize, String)],
    /// Each session's last seq from `session_snapshot`, after the turns.
    pub expected: &'a [Result<u64>],
    pub outcomes: &'a HashMap<usize, Outcome>,
    /// (session, seq) → ms the server stamped when appending.
    pub appended: &'a HashMap<(String, u64), i64>,
    pub timings: &'a mut Vec<TurnTiming>,
    pub turn_errors: &'a [String],
    pub connect_errors: &'a [String],
    pub readings: &'a mut Readings,
    pub server_alive: bool,
    pub server_log: &'a Path,
}

/// Shows at most a few examples of a list of problems.
fn examples(label: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    println!("  {label}: {} (first ones below)", items.len());
    for item in items.iter().take(5) {
        println!("    - {item}");
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

impl Report<'_> {
    pub fn print(self) -> u64 {
        let a = self.args;
        let r = self.readings;
        let mut socket_errors = Vec::new();
        let mut tool_failures = Vec::new();
        let mut api_errors = Vec::new();
        let (mut gaps, mut duplicates, mut dropped, mut snapshots, mut refusals) = (0, 0, 0, 0, 0);
        let (mut received, mut unknown) = (0u64, 0u64);
        let mut latencies = Vec::new();
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for (i, (_, session)) in self.sessions.iter().enumerate() {
            let Some(o) = self.outcomes.get(&i) else {
                continue; // refused at connect: counted there
            };
            socket_errors.extend(o.errors.iter().map(|e| format!("{session}: {e}")));
            tool_failures.extend(o.tool_failures.iter().cloned());
            gaps += o.gaps;
            duplicates += o.duplicates;
            snapshots += o.snapshots;
            refusals += o.refusals;
            received += o.events;
            for k in &o.kinds {
                *kinds.entry(k).or_default() += 1;
            }
            match &self.expected[i] {
                Ok(last) if *last > o.last_seq => {
                    dropped += last - o.last_seq;
                }
                Ok(_) => {}
                Err(e) => api_errors.push(format!("{e:#}")),
            }
            for (seq, at_us) in &o.received {
                match self.appended.get(&(session.clone(), *seq)) {
                    Some(ms) => latencies.push((at_us - ms * 1000) as f64 / 1000.0),
                    None => unknown += 1,
                }
            }
        }
        let mut per_session: HashMap<&str, u64> = HashMap::new();
        for (session, _) in self.appended.keys() {
            *per_session.entry(session.as_str()).or_default() += 1;
        }
        let in_log: u64 = self
            .sessions
            .iter()
            .map(|(_, s)| per_session.get(s.as_str()).copied().unwrap_or(0))
            .sum();
        println!();
        println!("## Result");
        println!(
            "sockets {} (sessions {}, workspaces {}); turns: {} sessions × {} at most {} at once; text «{}»",
            a.sockets,
            self.sessions.len(),
            a.teams + 1,
            a.turn_sessions,
            a.turns_per_session,
            a.concurrency,
            a.text
        );
        println!(
            "connect: {} sockets in {:.1} s; handshake {}",
            r.handshake_ms.len(),
            r.connect_secs,
            line_ms(&mut r.handshake_ms)
        );
        let per_socket = (r.rss_idle_kib as f64 - r.rss_baseline_kib as f64) / a.sockets as f64;
        println!("| memory (server VmRSS) | MiB |");
        println!("|---|---|");
        println!("| after start | {:.1} |", mib(r.rss_start_kib));
        println!(
            "| baseline: sessions created, 0 sockets | {:.1} |",
            mib(r.rss_baseline_kib)
        );
        println!(
            "| {} idle sockets | {:.1} |",
            a.sockets,
            mib(r.rss_idle_kib)
        );
        println!(
            "| after the load, sockets still open | {:.1} |",
            mib(r.rss_after_kib)
        );
        println!("| peak (VmHWM) | {:.1} |", mib(r.rss_peak_kib));
        println!(
            "memory per idle session: {per_socket:.1} KiB; server threads {}; server CPU while idle {:.2} s in {:.1} s",
            r.threads_idle, r.idle_cpu_secs, r.idle_window_secs
        );
        let turns = self.timings.len();
        let mut ack: Vec<f64> = self.timings.iter().map(|t| t.ack_ms).collect();
        let mut first: Vec<f64> = self.timings.iter().map(|t| t.first_event_ms).collect();
        let mut done: Vec<f64> = self.timings.iter().map(|t| t.finished_ms).collect();
        println!(
            "turns: {turns} in {:.1} s = {:.1} turns/s; events received {received} = {:.0} events/s",
            r.load_secs,
            turns as f64 / r.load_secs.max(1e-9),
            received as f64 / r.load_secs.max(1e-9)
        );
        println!("  POST send_message → 200: {}", line_ms(&mut ack));
        println!(
            "  POST → user.message on the socket: {}",
            line_ms(&mut first)
        );
        println!(
            "  POST → turn.finished on the socket: {}",
            line_ms(&mut done)
        );
        println!(
            "delivery latency (receipt − server append stamp, ms resolution): {}",
            line_ms(&mut latencies)
        );
        println!(
            "CPU during the load: server {:.1} s ({:.0}% of one core), bench {:.1} s ({:.0}%)",
            r.load_server_cpu_secs,
            100.0 * r.load_server_cpu_secs / r.load_secs.max(1e-9),
            r.load_bench_cpu_secs,
            100.0 * r.load_bench_cpu_secs / r.load_secs.max(1e-9)
        );
        let by_thread: Vec<String> = r
            .load_cpu_by_thread
            .iter()
            .map(|(kind, secs)| format!("{kind} {secs:.1} s"))
            .collect();
        println!("server CPU by thread kind: {}", by_thread.join(", "));
        println!("events by kind: {kinds:?}");

        println!();
        println!("## Checks");
        println!("  events in the log (these sessions) {in_log}, received {received}");
        println!("  gaps {gaps}, duplicates {duplicates}, dropped (API last seq − socket last seq) {dropped}");
        println!("  snapshots instead of events {snapshots}; events without a log row {unknown}; refused turns {refusals}");
        examples("refused websocket handshakes", self.connect_errors);
        examples("socket errors and closes", &socket_errors);
        examples("turn errors (HTTP or timeout)", self.turn_errors);
        examples("session_snapshot errors", &api_errors);
        examples("tools that failed (e.g. RATE_LIMITED)", &tool_failures);
        if !self.server_alive {
            println!(
                "  the server died during the run; see {}",
                self.server_log.display()
            );
        }
        let failures = self.connect_errors.len() as u64
            + socket_errors.len() as u64
            + self.turn_errors.len() as u64
            + api_errors.len() as u64
            + tool_failures.len() as u64
            + gaps
            + duplicates
            + dropped
            + unknown
            + refusals
            + u64::from(!self.server_alive)
            + u64::from(in_log != received);
        println!(
            "errors and dropped events: {failures}{}",
            if failures == 0 { " — OK" } else { "" }
        );
        failures
    }
}
