//! The owner's review page (CONTRACT §11, §13): the pending notes and suggested edits with
//! their diffs, and the Knowledge topics updated most recently, as the wire types of
//! `luna_protocol::knowledge`. Owner/admin only; resolving goes through
//! [`Knowledge::merge`] and [`Knowledge::reject`].

use luna_protocol::knowledge::{
    Resolution, ReviewBoard, ReviewItem, ReviewKind, ReviewOutcome, TopicSummary,
};

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::EngineResult;

use super::{
    require_reviewer, topic_from, Knowledge, Proposal, ProposalKind, ProposalStatus, DAY_MS,
    TOPIC_COLS,
};

/// Knowledge topics listed under the queue.
const RECENT_TOPICS: i64 = 8;

fn ago(now: i64, at: i64) -> String {
    match (now - at).max(0) / DAY_MS {
        0 => "hoy".into(),
        1 => "ayer".into(),
        d => format!("hace {d} días"),
    }
}

fn item(p: &Proposal, now: i64) -> ReviewItem {
    ReviewItem {
        id: p.id.clone(),
        kind: match p.kind {
            ProposalKind::Note => ReviewKind::Note,
            ProposalKind::Edit => ReviewKind::Edit,
        },
        title: p.title.clone(),
        area: p.area.clone(),
        summary: p.summary.clone(),
        topic_ref: p.topic_slug.as_ref().map(|s| format!("topic:{s}")),
        body: p.body.clone(),
        diff: p.diff.clone().filter(|d| !d.is_empty()),
        proposed_by: p.proposed_by_name.clone(),
        proposed_ago: ago(now, p.created_at),
    }
}

impl From<&Proposal> for Resolution {
    fn from(p: &Proposal) -> Resolution {
        Resolution {
            id: p.id.clone(),
            title: p.title.clone(),
            outcome: if p.status == ProposalStatus::Fusionada {
                ReviewOutcome::Merged
            } else {
                ReviewOutcome::Rejected
            },
            topic_ref: p.topic_slug.as_ref().map(|s| format!("topic:{s}")),
        }
    }
}

impl Knowledge {
    /// The review page: pending items oldest first, then the recent Knowledge topics.
    /// `FORBIDDEN` for members.
    pub async fn review_board(&self, caller: &Caller) -> EngineResult<ReviewBoard> {
        require_reviewer(caller)?;
        let now = now_ms();
        let pending = self.pending(caller).await?;
        let rows = sqlx::query(&format!(
            "select {TOPIC_COLS} from kn_topics where workspace_id = $1 and status = 'knowledge'
              order by updated_at desc, id limit $2"
        ))
        .bind(&caller.workspace_id)
        .bind(RECENT_TOPICS)
        .fetch_all(self.store.pool())
        .await?;
        Ok(ReviewBoard {
            pending: pending.iter().map(|p| item(p, now)).collect(),
            recent: rows
                .iter()
                .map(|r| {
                    let t = topic_from(r);
                    TopicSummary {
                        topic_ref: t.ref_(),
                        badge: t.badge(now),
                        title: t.title,
                        area: t.area,
                    }
                })
                .collect(),
        })
    }

    /// Merges from the review page and returns what the page confirms.
    pub async fn merge_from_review(&self, caller: &Caller, id: &str) -> EngineResult<Resolution> {
        self.merge(caller, id).await.map(|p| Resolution::from(&p))
    }

    /// Rejects from the review page and returns what the page confirms.
    pub async fn reject_from_review(&self, caller: &Caller, id: &str) -> EngineResult<Resolution> {
        self.reject(caller, id).await.map(|p| Resolution::from(&p))
    }
}
