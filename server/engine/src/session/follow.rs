//! Following one session from inside the process that writes it: the turn loop reads
//! what the log gained since its last step from the hub ([`Follow::next`]), the
//! committed events this instance published (and, on PostgreSQL, the other
//! instances' through `session::bus`), and goes to the log only when the feed shows
//! a gap: an event published out of order, a lagged or closed channel. The log stays
//! the source of truth; the feed only saves a read per step when nothing is missing.

use luna_protocol::event::StoredEvent;
use tokio::sync::broadcast::{error::TryRecvError, Receiver};

use super::Hub;

/// A subscription to one session's committed events. Subscribe before reading the
/// state the follower starts from, so nothing committed after that read is missed.
/// Dropping it forgets the session's channel if nobody else here listens.
#[derive(Debug)]
pub struct Follow {
    feed: Option<Receiver<StoredEvent>>,
    hub: Hub,
    session_id: String,
}

impl Follow {
    pub(super) fn new(hub: &Hub, session_id: &str) -> Self {
        Follow {
            feed: Some(hub.subscribe(session_id)),
            hub: hub.clone(),
            session_id: session_id.to_owned(),
        }
    }

    /// The events with `seq > after` the feed holds, in order and without a gap, or
    /// `None` when the feed cannot vouch for that (a seq missing, the channel lagged
    /// or closed): then read the log from `after`. Events at or before `after` are
    /// skipped, so a read of the log and the feed can follow each other freely.
    pub fn next(&mut self, after: u64) -> Option<Vec<StoredEvent>> {
        let feed = self.feed.as_mut()?;
        let mut out: Vec<StoredEvent> = Vec::new();
        loop {
            let expected = after + out.len() as u64 + 1;
            match feed.try_recv() {
                Ok(e) if e.seq < expected => continue,
                Ok(e) if e.seq == expected => out.push(e),
                Ok(_) | Err(TryRecvError::Lagged(_)) | Err(TryRecvError::Closed) => {
                    // Drain what is left: the log read replaces all of it.
                    while let Ok(_) | Err(TryRecvError::Lagged(_)) = feed.try_recv() {}
                    return None;
                }
                Err(TryRecvError::Empty) => return Some(out),
            }
        }
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        drop(self.feed.take());
        self.hub.release(&self.session_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::event::{SessionEvent, UserMessage};

    fn event(seq: u64) -> StoredEvent {
        StoredEvent {
            seq,
            event: SessionEvent::UserMessage(UserMessage {
                turn_id: "turn_1".into(),
                text: format!("mensaje {seq}"),
                steering: true,
            }),
        }
    }

    fn seqs(events: Option<Vec<StoredEvent>>) -> Option<Vec<u64>> {
        events.map(|v| v.iter().map(|e| e.seq).collect())
    }

    #[test]
    fn the_feed_hands_over_consecutive_events_and_skips_what_was_read() {
        let hub = Hub::default();
        let mut follow = Follow::new(&hub, "ses_1");
        assert_eq!(seqs(follow.next(0)), Some(vec![]));
        hub.publish("ses_1", [event(1), event(2), event(3)]);
        // Read up to 1 elsewhere (the log): the feed gives only what follows.
        assert_eq!(seqs(follow.next(1)), Some(vec![2, 3]));
        assert_eq!(seqs(follow.next(3)), Some(vec![]));
        // Another session's events are not this one's.
        hub.publish("ses_2", [event(4)]);
        assert_eq!(seqs(follow.next(3)), Some(vec![]));
    }

    #[test]
    fn a_missing_seq_sends_the_reader_to_the_log() {
        let hub = Hub::default();
        let mut follow = Follow::new(&hub, "ses_1");
        // Seq 2 was committed by another appender that published after seq 3: the
        // hub drops the late one, and the follower must not skip it.
        hub.publish("ses_1", [event(1), event(3)]);
        hub.publish("ses_1", [event(2)]);
        assert_eq!(seqs(follow.next(0)), None);
        // After the log read (up to 3) the feed is usable again.
        hub.publish("ses_1", [event(4)]);
        assert_eq!(seqs(follow.next(3)), Some(vec![4]));
    }

    #[test]
    fn a_lagged_feed_sends_the_reader_to_the_log() {
        let hub = Hub::default();
        let mut follow = Follow::new(&hub, "ses_1");
        hub.publish("ses_1", (1..=400).map(event));
        assert_eq!(seqs(follow.next(0)), None);
        assert_eq!(seqs(follow.next(400)), Some(vec![]));
    }

    #[test]
    fn dropping_the_follower_forgets_the_channel() {
        let hub = Hub::default();
        let follow = Follow::new(&hub, "ses_1");
        assert_eq!(hub.channel_count(), 1);
        drop(follow);
        assert_eq!(hub.channel_count(), 0);
    }
}
