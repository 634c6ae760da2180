//! One websocket per work session (`/api/sessions/{id}/events?since=0`), followed by
//! its own task: every event's receipt time is stamped, its `seq` must continue the
//! previous one (no gap, no duplicate), and a close, an error or the end of the stream
//! before the bench says stop is an error. The start and end of each turn are handed to
//! the session's turn driver.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use futures_util::StreamExt;
use luna_protocol::event::SessionEvent;
use luna_protocol::stream::StreamMessage;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::COOKIE;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A turn boundary seen on the socket.
#[derive(Debug)]
pub struct Mark {
    pub turn_id: String,
    /// False: the turn's `user.message`; true: `turn.finished` or `turn.refused`.
    pub end: bool,
    pub at: Instant,
}

/// What one socket saw, returned when it is told to stop (or fails).
#[derive(Debug, Default)]
pub struct Outcome {
    pub last_seq: u64,
    pub events: u64,
    /// Missing seqs (sum of the holes) and repeated seqs.
    pub gaps: u64,
    pub duplicates: u64,
    pub snapshots: u64,
    pub errors: Vec<String>,
    /// (seq, receipt time in µs since the Unix epoch) of every event.
    pub received: Vec<(u64, i64)>,
    /// `tool.finished` with `ok = false`: label and summary.
    pub tool_failures: Vec<String>,
    pub refusals: u64,
    pub kinds: Vec<&'static str>,
}

/// The wall clock in µs since the Unix epoch (the server stamps events in ms).
pub fn unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Opens the events websocket of `session` with the person's cookie.
pub async fn connect(bind: &str, cookie: &str, session: &str) -> Result<Socket> {
    let url = format!("ws://{bind}/api/sessions/{session}/events?since=0");
    let mut request = url.into_client_request()?;
    request.headers_mut().insert(
        COOKIE,
        HeaderValue::from_str(cookie).context("a cookie header")?,
    );
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .with_context(|| format!("websocket of {session}"))?;
    Ok(socket)
}

/// Follows `socket` until `stop` turns true; turn boundaries go to `marks`.
pub async fn follow(
    mut socket: Socket,
    marks: Option<mpsc::UnboundedSender<Mark>>,
    mut stop: watch::Receiver<bool>,
) -> Outcome {
    let mut out = Outcome::default();
    loop {
        let frame = tokio::select! {
            frame = socket.next() => frame,
            () = async { let _ = stop.wait_for(|s| *s).await; } => {
                if let Err(e) = socket.close(None).await {
                    out.errors.push(format!("closing: {e}"));
                }
                return out;
            }
        };
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(close))) => {
                out.errors
                    .push(format!("the server closed the socket: {close:?}"));
                return out;
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => {
                out.errors.push(format!("websocket error: {e}"));
                return out;
            }
            None => {
                out.errors.push("the stream ended".into());
                return out;
            }
        };
        let at_us = unix_us();
        let at = Instant::now();
        let message: StreamMessage = match serde_json::from_str(&text) {
            Ok(m) => m,
            Err(e) => {
                out.errors
                    .push(format!("not a stream message ({e}): {text}"));
                continue;
            }
        };
        match message {
            StreamMessage::Event { seq, event } => {
                receive(&mut out, seq, at_us);
                out.kinds.push(event.kind());
                if let (Some(marks), Some(mark)) = (&marks, mark_of(&event, at)) {
                    let _ = marks.send(mark);
                }
                match &event {
                    SessionEvent::ToolFinished(t) if !t.ok => out
                        .tool_failures
                        .push(format!("{}: {}", t.label, t.summary)),
                    SessionEvent::TurnRefused(_) => out.refusals += 1,
                    _ => {}
                }
            }
            StreamMessage::Snapshot { seq, .. } => {
                out.snapshots += 1;
                out.last_seq = out.last_seq.max(seq);
            }
            StreamMessage::Thinking(_) | StreamMessage::Narrating(_) => {}
        }
    }
}

/// Checks that `seq` continues the stream and records its receipt.
fn receive(out: &mut Outcome, seq: u64, at_us: i64) {
    if seq <= out.last_seq {
        out.duplicates += 1;
        return;
    }
    if seq != out.last_seq + 1 {
        out.gaps += seq - out.last_seq - 1;
    }
    out.last_seq = seq;
    out.events += 1;
    out.received.push((seq, at_us));
}

fn mark_of(event: &SessionEvent, at: Instant) -> Option<Mark> {
    let (turn_id, end) = match event {
        SessionEvent::UserMessage(m) if !m.steering => (&m.turn_id, false),
        SessionEvent::TurnFinished(f) => (&f.turn_id, true),
        SessionEvent::TurnRefused(r) => (&r.turn_id, true),
        _ => return None,
    };
    Some(Mark {
        turn_id: turn_id.clone(),
        end,
        at,
    })
}
