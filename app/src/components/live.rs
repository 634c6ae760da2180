//! The live session: finds (or opens) the person's work session, loads its snapshot,
//! and follows its event stream over the websocket, reconnecting from the last `seq`
//! so nothing is missed or shown twice. Chat and board read the same `Replica`.

use leptos::prelude::*;
use luna_protocol::stream::Replica;

/// Shared by the chat and the board.
#[derive(Clone, Copy)]
pub struct Live {
    pub replica: RwSignal<Replica>,
    pub session_id: RwSignal<Option<String>>,
    pub online: RwSignal<bool>,
    pub error: RwSignal<Option<String>>,
    /// The signed-in person's role (who may resolve which card).
    pub role: RwSignal<Option<luna_protocol::account::Role>>,
    /// Unix ms, ticking every second in the browser (expiry countdowns); 0 on the server.
    pub clock: RwSignal<i64>,
    /// The running turn's live reasoning (turn id, latest text), when the configured
    /// model streams it. Never stored: gone on reload, hidden once the turn ends.
    pub thinking: RwSignal<Option<(String, String)>>,
    /// The running turn's narration as the model writes it (the whole text so far,
    /// each sentence already checked by the server). The stored narration replaces it.
    pub narrating: RwSignal<Option<luna_protocol::event::NarrationDelta>>,
}

impl Live {
    pub fn new() -> Self {
        Live {
            replica: RwSignal::new(Replica::default()),
            session_id: RwSignal::new(None),
            online: RwSignal::new(false),
            error: RwSignal::new(None),
            role: RwSignal::new(None),
            clock: RwSignal::new(0),
            thinking: RwSignal::new(None),
            narrating: RwSignal::new(None),
        }
    }

    /// Starts following the session (browser only).
    pub fn start(self) {
        #[cfg(feature = "hydrate")]
        {
            let clock = self.clock;
            clock.set(js_sys::Date::now() as i64);
            set_interval(
                move || clock.set(js_sys::Date::now() as i64),
                std::time::Duration::from_secs(1),
            );
            let role = self.role;
            leptos::task::spawn_local(async move {
                if let Ok(me) = crate::api::whoami().await {
                    role.set(Some(me.role));
                }
            });
            leptos::task::spawn_local(follow(self));
        }
    }
}

impl Default for Live {
    fn default() -> Self {
        Self::new()
    }
}

/// The close code the server sends when the session behind a socket is gone.
#[cfg(feature = "hydrate")]
const POLICY_VIOLATION: u16 = 1008;

#[cfg(feature = "hydrate")]
async fn follow(live: Live) {
    use crate::session_api::{create_session, latest_session, session_snapshot};
    use futures::StreamExt;
    use gloo_net::websocket::{futures::WebSocket, Message};
    use luna_protocol::stream::StreamMessage;

    let id = match latest_session().await {
        Ok(Some(info)) => info.id,
        Ok(None) => match create_session().await {
            Ok(id) => id,
            Err(e) => return live.error.set(Some(e.message())),
        },
        Err(e) => return live.error.set(Some(e.message())),
    };
    // The history first, then the session: the composer opens (and a message can be
    // sent) only once the conversation so far is on screen.
    match session_snapshot(id.clone()).await {
        Ok(s) => live.replica.set(Replica::new(s.seq, s.view)),
        Err(e) => live.error.set(Some(e.message())),
    }
    live.session_id.set(Some(id.clone()));

    let mut backoff_ms = 500u32;
    loop {
        let since = live.replica.with_untracked(|r| r.seq);
        let location = window().location();
        let scheme = if location.protocol().ok().as_deref() == Some("https:") {
            "wss"
        } else {
            "ws"
        };
        let host = location.host().unwrap_or_default();
        let url = format!("{scheme}://{host}/api/sessions/{id}/events?since={since}");
        if let Ok(mut socket) = WebSocket::open(&url) {
            // Read only (the browser never writes to it): no split into two halves.
            while let Some(frame) = socket.next().await {
                let text = match frame {
                    Ok(Message::Text(text)) => text,
                    // 1008: the server ended the session (logged out, membership
                    // revoked). Reconnecting cannot help; the login page can.
                    Err(gloo_net::websocket::WebSocketError::ConnectionClose(close))
                        if close.code == POLICY_VIOLATION =>
                    {
                        let _ = window().location().set_href("/login");
                        return;
                    }
                    _ => break,
                };
                let Ok(message) = luna_protocol::json::from_str::<StreamMessage>(&text) else {
                    continue;
                };
                live.online.set(true);
                match message {
                    StreamMessage::Thinking(t) => {
                        live.thinking.update(|shown| keep_thinking(shown, t));
                        continue;
                    }
                    StreamMessage::Narrating(n) => {
                        live.narrating.set(Some(n));
                        continue;
                    }
                    _ => {}
                }
                backoff_ms = 500;
                let mut gap = false;
                live.replica.update(|r| gap = r.receive(&message).is_err());
                if gap {
                    break; // reconnect from the last applied seq
                }
            }
        }
        live.online.set(false);
        gloo_timers::future::TimeoutFuture::new(backoff_ms).await;
        backoff_ms = (backoff_ms * 2).min(8_000);
    }
}

/// Longest reasoning tail shown (characters): the newest thoughts matter.
#[cfg(feature = "hydrate")]
const THINKING_TAIL: usize = 400;

/// Appends a piece of reasoning to what is shown for its turn (a new turn starts over),
/// keeping only the tail.
#[cfg(feature = "hydrate")]
fn keep_thinking(shown: &mut Option<(String, String)>, t: luna_protocol::stream::Thinking) {
    match shown {
        Some((turn, text)) if *turn == t.turn_id => text.push_str(&t.text),
        _ => *shown = Some((t.turn_id, t.text)),
    }
    if let Some((_, text)) = shown {
        let count = text.chars().count();
        if count > THINKING_TAIL {
            *text = text.chars().skip(count - THINKING_TAIL).collect();
        }
    }
}
