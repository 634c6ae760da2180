//! Turn drivers: each driven session sends its turns one after the other (a new
//! idempotency key each), with at most `concurrency` turns running across the whole
//! server. A turn is timed from the POST to its `user.message` and to its
//! `turn.finished` as seen on the session's own websocket.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use tokio::sync::{mpsc, Semaphore};

use crate::http::Api;
use crate::socket::Mark;

/// A turn waits this long for its `turn.finished` before it counts as an error.
const TURN_TIMEOUT: Duration = Duration::from_secs(120);

/// One turn's timings, in ms from the POST.
#[derive(Debug, Clone, Copy)]
pub struct TurnTiming {
    pub ack_ms: f64,
    pub first_event_ms: f64,
    pub finished_ms: f64,
}

/// Runs `turns` turns in `session`; returns their timings and errors.
pub async fn drive(
    api: Api,
    session: String,
    mut marks: mpsc::UnboundedReceiver<Mark>,
    turns: usize,
    text: String,
    gate: Arc<Semaphore>,
) -> (Vec<TurnTiming>, Vec<String>) {
    let mut timings = Vec::new();
    let mut errors = Vec::new();
    for n in 0..turns {
        let Ok(_permit) = gate.acquire().await else {
            errors.push("the turn gate closed".into());
            break;
        };
        match one_turn(&api, &session, &mut marks, n, &text).await {
            Ok(t) => timings.push(t),
            Err(e) => errors.push(format!("{session} turn {n}: {e:#}")),
        }
    }
    (timings, errors)
}

async fn one_turn(
    api: &Api,
    session: &str,
    marks: &mut mpsc::UnboundedReceiver<Mark>,
    n: usize,
    text: &str,
) -> Result<TurnTiming> {
    let key = format!("load-{session}-{n}");
    let posted = Instant::now();
    let ack = api.send_message(session, text, &key).await?;
    let ack_ms = ms(posted.elapsed());
    if ack.steering {
        bail!("the message steered a running turn instead of starting one");
    }
    let mut first = None;
    let deadline = tokio::time::Instant::now() + TURN_TIMEOUT;
    loop {
        let mark = match tokio::time::timeout_at(deadline, marks.recv()).await {
            Ok(Some(mark)) => mark,
            Ok(None) => bail!("the socket stopped before the turn finished"),
            Err(_) => bail!("no turn.finished within {TURN_TIMEOUT:?}"),
        };
        if mark.turn_id != ack.turn_id {
            continue; // a mark of an earlier turn (cannot happen: turns run in order)
        }
        let since = ms(mark.at.saturating_duration_since(posted));
        if !mark.end {
            first = Some(since);
            continue;
        }
        return Ok(TurnTiming {
            ack_ms,
            first_event_ms: first.unwrap_or(since),
            finished_ms: since,
        });
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
