//! In-process fan-out of appended events: one tokio broadcast channel per session,
//! created lazily on first subscribe and dropped when nobody listens. It is only a
//! wake-up and a fast path: a subscriber that lags or misses a publish catches up
//! from the log, which stays the source of truth. Each channel remembers the newest
//! seq it carried, so events another app instance appended (`session::bus`) are
//! read from the log once and only when someone here listens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use luna_protocol::event::StoredEvent;
use luna_protocol::stream::StreamMessage;
use tokio::sync::{broadcast, mpsc};

/// Events buffered per session before a slow subscriber lags (and re-reads the log).
const CHANNEL_CAPACITY: usize = 256;
/// Live frames buffered per session; a lagging subscriber just skips some.
const LIVE_CAPACITY: usize = 64;
/// Live frames waiting for the relay to the other instances; beyond it they are
/// dropped (best effort, like a lagging watcher).
const RELAY_CAPACITY: usize = 256;

/// A live frame on its way to the other instances: (session, frame).
type Relay = mpsc::Sender<(String, StreamMessage)>;

#[derive(Clone, Debug, Default)]
pub struct Hub {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
    /// Live frames per session (a streaming model's reasoning and the narration it is
    /// writing): best effort, never stored, never replayed.
    live: Arc<Mutex<HashMap<String, broadcast::Sender<StreamMessage>>>>,
    /// Where this instance's live frames also go when other instances share the
    /// database (`session::bus` relays it); `None` on one instance.
    relay: Arc<Mutex<Option<Relay>>>,
}

#[derive(Debug)]
struct Channel {
    sender: broadcast::Sender<StoredEvent>,
    /// The newest seq published on this channel (0: none yet).
    last: u64,
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Channel>> {
        // The map holds no invariant a panicking holder could break; keep serving.
        self.channels.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn subscribe(&self, session_id: &str) -> broadcast::Receiver<StoredEvent> {
        let mut map = self.lock();
        map.entry(session_id.to_owned())
            .or_insert_with(|| Channel {
                sender: broadcast::channel(CHANNEL_CAPACITY).0,
                last: 0,
            })
            .sender
            .subscribe()
    }

    /// Sends committed events to the session's subscribers, in the given order, each
    /// seq once (an older seq than one already sent is dropped: subscribers that see a
    /// gap read the log).
    pub fn publish(&self, session_id: &str, events: impl IntoIterator<Item = StoredEvent>) {
        let mut map = self.lock();
        let Some(channel) = map.get_mut(session_id) else {
            return;
        };
        for event in events {
            // A channel carries each seq once: the appender and the bus (catching up
            // from the log) may both hand over the same event.
            if event.seq <= channel.last {
                continue;
            }
            channel.last = event.seq;
            if channel.sender.send(event).is_err() {
                // Nobody listens any more: forget the channel until someone subscribes.
                map.remove(session_id);
                return;
            }
        }
    }

    /// Live frames of the session's running turn (see [`Hub::live`]).
    pub fn subscribe_live(&self, session_id: &str) -> broadcast::Receiver<StreamMessage> {
        let mut map = self.live.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(session_id.to_owned())
            .or_insert_with(|| broadcast::channel(LIVE_CAPACITY).0)
            .subscribe()
    }

    /// Hands a live frame (`Thinking` or `Narrating`, frames without a seq) to whoever
    /// watches the session right now. Nobody watching: it is dropped, as it is never
    /// stored.
    pub fn live(&self, session_id: &str, frame: StreamMessage) {
        debug_assert!(frame.seq().is_none(), "only seq-less frames are live");
        let relay = self.relay.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(relay) = relay {
            let _ = relay.try_send((session_id.to_owned(), frame.clone()));
        }
        self.live_here(session_id, frame);
    }

    /// A live frame for this instance's watchers only (what another instance relayed).
    pub(crate) fn live_here(&self, session_id: &str, frame: StreamMessage) {
        let mut map = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = map.get(session_id) {
            if sender.send(frame).is_err() {
                map.remove(session_id);
            }
        }
    }

    /// From now on, every frame [`Hub::live`] gets is also queued on the returned
    /// receiver, for `session::bus` to relay to the other instances.
    pub(crate) fn relay_live(&self) -> mpsc::Receiver<(String, StreamMessage)> {
        let (tx, rx) = mpsc::channel(RELAY_CAPACITY);
        *self.relay.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        rx
    }

    /// Forgets the session's channels if nobody here listens any more. Called when a
    /// websocket ends: otherwise a channel (and its buffer) lived until the session's
    /// next event — for ever if none came — and the bus kept catching it up.
    pub fn release(&self, session_id: &str) {
        {
            let mut map = self.lock();
            if map
                .get(session_id)
                .is_some_and(|c| c.sender.receiver_count() == 0)
            {
                map.remove(session_id);
            }
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live
            .get(session_id)
            .is_some_and(|s| s.receiver_count() == 0)
        {
            live.remove(session_id);
        }
    }

    /// The newest seq this instance published for the session, or `None` when nobody
    /// here listens to it.
    pub fn last_published(&self, session_id: &str) -> Option<u64> {
        self.lock().get(session_id).map(|c| c.last)
    }

    /// The sessions someone here listens to.
    pub fn listened(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Sessions with a live channel (for tests and metrics).
    pub fn channel_count(&self) -> usize {
        self.lock().len()
    }

    /// Sessions with a live-frame channel (for tests and metrics).
    pub fn live_count(&self) -> usize {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
