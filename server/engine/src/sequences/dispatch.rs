//! The dispatcher: sends due steps. For each due send it claims the row (one
//! dispatcher wins), re-checks that the sequence is still the authorized version and
//! that the step's fingerprint still matches what the person authorized, honours
//! suppressions and the workspace's sending rate, sends, and records the outcome.
//! Transient failures go back to `pending` with backoff and, after [`MAX_ATTEMPTS`],
//! fail with «sin entregar tras N intentos»; permanent ones fail. A bounce (the
//! mailbox refused for good) fails the send, puts the address on the suppression list
//! (`bounced`) and cancels its later steps, in one transaction. A recipient suppressed
//! or who replied (`replies`) is skipped with the reason the board shows. Every message
//! carries the recipient's signed unsubscribe link (`unsubscribe`).
//! A claim left by a crash is resolved with the transport's own record (the outbox
//! knows whether the file exists); when the transport cannot know (SMTP) the send is
//! marked `unknown` and never retried, so a person never gets a step twice.

use std::time::Duration;

use std::collections::HashMap;

use super::window::{self, Window};
use super::{zones, Deps};
use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::base::store::{Conn, Scope};

use super::model::Status;
use super::rows::{self, SendRow, SendStatus};
use super::suppressions::{self, Reason};
use super::template;
use super::transport::{Outgoing, SendError};

/// Attempts before a transient failure becomes `failed`.
pub const MAX_ATTEMPTS: i64 = 5;
/// A claim older than this without an outcome is treated as a crash.
pub const STUCK_AFTER_MS: i64 = 5 * 60_000;
const BATCH: i64 = 50;

/// What one pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    pub sent: usize,
    pub retried: usize,
    pub failed: usize,
    pub suppressed: usize,
    /// Mailboxes refused for good: the send failed and the address is suppressed.
    pub bounced: usize,
    /// Skipped because the recipient replied.
    pub cancelled: usize,
    pub blocked: usize,
    pub rate_limited: usize,
    pub lost_race: usize,
    /// Moved to the sending window's next opening (outside the window in the
    /// recipient's zone, or over the mailbox's daily cap).
    pub deferred: usize,
}

fn backoff_ms(attempts: i64) -> i64 {
    30_000 * (1i64 << attempts.clamp(0, 8))
}

/// One pass over the sends due at `now`.
pub async fn run_once(engine: &impl Deps, worker: &str, now: i64) -> EngineResult<Report> {
    let mut report = Report::default();
    let mut touched = std::collections::BTreeSet::new();
    let due = {
        let mut conn = engine.store().pool().acquire().await?;
        rows::due(&mut conn, now, BATCH).await?
    };
    let mut windows: HashMap<String, Window> = HashMap::new();
    let mut mailboxes: HashMap<String, String> = HashMap::new();
    for send in due {
        {
            let mut conn = engine.store().pool().acquire().await?;
            // The window, in the recipient's zone: outside it, wait for its opening.
            let w = match windows.get(&send.workspace_id) {
                Some(w) => *w,
                None => {
                    let w = window::load(
                        &mut conn,
                        &send.workspace_id,
                        engine.sequences().default_window,
                    )
                    .await?;
                    windows.insert(send.workspace_id.clone(), w);
                    w
                }
            };
            let tz = send
                .time_zone
                .as_deref()
                .and_then(zones::parse)
                .unwrap_or(w.time_zone);
            let wait_until = if !w.allows(now, tz) {
                Some(w.send_time(now, tz))
            } else if sent_today(&mut conn, &mut mailboxes, &send, &w, now).await?
                >= i64::from(w.daily_cap)
            {
                // Over the mailbox's cap for the day: the next sending day's opening.
                Some(w.next_day_opening(now, tz))
            } else {
                None
            };
            if let Some(at) = wait_until {
                rows::defer(&mut conn, &send.id, at).await?;
                report.deferred += 1;
                touched.insert((send.workspace_id.clone(), send.sequence_id.clone()));
                continue;
            }
            // Rate next: a send over the limit stays pending for the next pass.
            let recent = rows::sent_since(&mut conn, &send.workspace_id, now - 60_000).await?;
            if recent >= engine.sequences().rate_per_minute {
                report.rate_limited += 1;
                continue;
            }
            if !rows::claim(&mut conn, &send.id, worker, now).await? {
                report.lost_race += 1;
                continue;
            }
        }
        deliver(engine, &send, now, &mut report).await?;
        touched.insert((send.workspace_id.clone(), send.sequence_id.clone()));
    }
    // Per-recipient progress on the board of each sequence that moved.
    for (workspace_id, sequence_id) in touched {
        let s = {
            let mut conn = engine.store().pool().acquire().await?;
            rows::find(&mut conn, &workspace_id, &sequence_id).await?
        };
        if let Some(s) = s {
            if let Err(e) = super::publish_board(engine, &s).await {
                tracing::warn!(sequence = %s.id, error = %e, "board update failed");
            }
        }
    }
    Ok(report)
}

/// Steps the mailbox of `send`'s sequence sent since the start of the workspace
/// zone's day (every sequence of the workspace with that sender address counts).
async fn sent_today(
    conn: &mut Conn,
    mailboxes: &mut HashMap<String, String>,
    send: &SendRow,
    w: &Window,
    now: i64,
) -> EngineResult<i64> {
    let mailbox = match mailboxes.get(&send.sequence_id) {
        Some(m) => m.clone(),
        None => {
            let m = rows::find(conn, &send.workspace_id, &send.sequence_id)
                .await?
                .map(|s| window::mailbox(&s.sender))
                .unwrap_or_default();
            mailboxes.insert(send.sequence_id.clone(), m.clone());
            m
        }
    };
    Ok(
        rows::sent_by_sender_since(conn, &send.workspace_id, w.day_start(now))
            .await?
            .into_iter()
            .filter(|(sender, _)| window::mailbox(sender) == mailbox)
            .map(|(_, n)| n)
            .sum(),
    )
}

async fn settle(
    engine: &impl Deps,
    id: &str,
    status: SendStatus,
    message_id: Option<&str>,
    error: Option<&str>,
    next: Option<i64>,
    now: i64,
) -> EngineResult<()> {
    let mut conn = engine.store().pool().acquire().await?;
    rows::settle(&mut conn, id, status, message_id, error, next, now).await
}

/// Sends one claimed row, after every check.
async fn deliver(
    engine: &impl Deps,
    send: &SendRow,
    now: i64,
    report: &mut Report,
) -> EngineResult<()> {
    let (sequence, authorized, audience, suppressed, replied) = {
        let mut conn = engine.store().pool().acquire().await?;
        let s = rows::find(&mut conn, &send.workspace_id, &send.sequence_id).await?;
        let a = rows::authorization(&mut conn, &send.sequence_id, send.version, send.step).await?;
        let aud = rows::audience(&mut conn, &send.sequence_id, send.version).await?;
        let sup = suppressions::find(&mut conn, &send.workspace_id, &send.email).await?;
        let rep = rows::replied(&mut conn, &send.sequence_id, &send.email).await?;
        (s, a, aud, sup, rep)
    };
    let Some(s) = sequence.filter(|s| s.status == Status::Activa && s.version == send.version)
    else {
        report.blocked += 1;
        return settle(
            engine,
            &send.id,
            SendStatus::Blocked,
            None,
            Some("la secuencia cambió después de autorizarla"),
            None,
            now,
        )
        .await;
    };
    let step_index = usize::try_from(send.step).unwrap_or(usize::MAX);
    let (Some(authorized), Some(step)) = (authorized, s.steps.get(step_index)) else {
        report.blocked += 1;
        return settle(
            engine,
            &send.id,
            SendStatus::Blocked,
            None,
            Some("paso sin autorización"),
            None,
            now,
        )
        .await;
    };
    if template::fingerprint(&s.sender, step_index, step, &audience) != authorized {
        tracing::warn!(send = %send.id, sequence = %s.id, "fingerprint mismatch: not sending");
        report.blocked += 1;
        return settle(
            engine,
            &send.id,
            SendStatus::Blocked,
            None,
            Some("el contenido no coincide con lo autorizado"),
            None,
            now,
        )
        .await;
    }
    if let Some(sup) = suppressed {
        report.suppressed += 1;
        return settle(
            engine,
            &send.id,
            SendStatus::Suppressed,
            None,
            Some(sup.reason.label()),
            None,
            now,
        )
        .await;
    }
    if replied {
        report.cancelled += 1;
        return settle(
            engine,
            &send.id,
            SendStatus::Cancelled,
            None,
            Some(super::replies::REPLIED),
            None,
            now,
        )
        .await;
    }
    let Some(recipient) = audience.iter().find(|r| r.email == send.email) else {
        report.blocked += 1;
        return settle(
            engine,
            &send.id,
            SendStatus::Blocked,
            None,
            Some("fuera de la audiencia autorizada"),
            None,
            now,
        )
        .await;
    };
    let rendered = template::render(step, recipient);
    let unsubscribe =
        super::unsubscribe::link(engine, &send.id, &send.workspace_id, &send.email).await?;
    let msg = Outgoing {
        send_id: send.id.clone(),
        from: s.sender.clone(),
        to: recipient.email.clone(),
        subject: rendered.subject,
        body: rendered.body,
        unsubscribe: Some(unsubscribe),
    };
    match engine.sequences().mailer.send(&msg).await {
        Ok(message_id) => {
            report.sent += 1;
            settle(
                engine,
                &send.id,
                SendStatus::Sent,
                Some(&message_id),
                None,
                None,
                now,
            )
            .await?;
        }
        Err(SendError::Transient(e)) if send.attempts + 1 < MAX_ATTEMPTS => {
            report.retried += 1;
            let next = now + backoff_ms(send.attempts);
            settle(
                engine,
                &send.id,
                SendStatus::Pending,
                None,
                Some(&e),
                Some(next),
                now,
            )
            .await?;
        }
        Err(SendError::Bounced(answer)) => {
            report.bounced += 1;
            let mut tx = engine
                .store()
                .begin_write_in(Scope::Workspace(&send.workspace_id))
                .await?;
            rows::settle(
                &mut tx,
                &send.id,
                SendStatus::Failed,
                None,
                Some(&format!("rebotó: {answer}")),
                None,
                now,
            )
            .await?;
            suppressions::suppress_in(
                &mut tx,
                &send.workspace_id,
                &send.email,
                Reason::Bounced,
                Some(&answer),
                None,
            )
            .await?;
            let touched =
                suppressions::sequences_of(&mut tx, &send.workspace_id, &send.email).await?;
            tx.commit().await?;
            suppressions::republish(engine, &send.workspace_id, &touched).await;
        }
        Err(SendError::Transient(e)) => {
            report.failed += 1;
            let why = format!("sin entregar tras {MAX_ATTEMPTS} intentos: {e}");
            settle(
                engine,
                &send.id,
                SendStatus::Failed,
                None,
                Some(&why),
                None,
                now,
            )
            .await?;
        }
        Err(e) => {
            report.failed += 1;
            settle(
                engine,
                &send.id,
                SendStatus::Failed,
                None,
                Some(&e.to_string()),
                None,
                now,
            )
            .await?;
        }
    }
    Ok(())
}

/// Resolves claims left by a dispatcher that stopped mid-send.
pub async fn recover(engine: &impl Deps, now: i64) -> EngineResult<usize> {
    let stuck = {
        let mut conn = engine.store().pool().acquire().await?;
        rows::stuck(&mut conn, now - STUCK_AFTER_MS).await?
    };
    for id in &stuck {
        match engine.sequences().mailer.was_sent(id).await {
            Some(true) => {
                settle(
                    engine,
                    id,
                    SendStatus::Sent,
                    Some(&format!("<{id}@luna.local>")),
                    None,
                    None,
                    now,
                )
                .await?
            }
            Some(false) => {
                settle(
                    engine,
                    id,
                    SendStatus::Pending,
                    None,
                    Some("reintento tras una interrupción"),
                    Some(now),
                    now,
                )
                .await?
            }
            None => {
                settle(
                    engine,
                    id,
                    SendStatus::Unknown,
                    None,
                    Some("interrumpido durante el envío; no se reintenta"),
                    None,
                    now,
                )
                .await?
            }
        }
    }
    Ok(stuck.len())
}

/// Runs the dispatcher in the background: recover, then a pass every `every`.
pub fn spawn(engine: impl Deps + Clone + 'static, every: Duration) -> tokio::task::JoinHandle<()> {
    let worker = crate::base::ids::new_id("disp");
    tokio::spawn(async move {
        loop {
            let now = now_ms();
            if let Err(e) = recover(&engine, now).await {
                tracing::warn!(error = %e, "dispatcher recovery failed");
            }
            match run_once(&engine, &worker, now).await {
                Ok(r)
                    if r.sent + r.failed + r.bounced + r.blocked + r.suppressed + r.cancelled
                        > 0 =>
                {
                    tracing::info!(?r, "dispatcher pass");
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "dispatcher pass failed"),
            }
            tokio::time::sleep(every).await;
        }
    })
}
