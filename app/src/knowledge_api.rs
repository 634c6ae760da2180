//! Server functions of the knowledge review page (`/conocimiento`): the queue, and
//! merging or rejecting one item. Owners and admins only (the engine answers
//! `FORBIDDEN`, sent as 403); every resolution is audited by the engine.

use leptos::prelude::*;
use luna_protocol::knowledge::{Resolution, ReviewBoard};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// Pending notes and suggested edits with their diffs, and recent Knowledge topics.
#[server(prefix = "/api", endpoint = "knowledge_review", output = crate::codec::Answer)]
pub async fn knowledge_review() -> Result<ReviewBoard, AppError> {
    let caller = caller()?;
    engine()?
        .knowledge
        .review_board(&caller)
        .await
        .map_err(fail)
}

/// "Fusionar": the note or edit becomes Knowledge. Merging twice is a no-op.
#[server(prefix = "/api", endpoint = "knowledge_merge", output = crate::codec::Answer)]
pub async fn knowledge_merge(id: String) -> Result<Resolution, AppError> {
    let caller = caller()?;
    engine()?
        .knowledge
        .merge_from_review(&caller, &id)
        .await
        .map_err(fail)
}

/// "Rechazar": the note is discarded or the edit dropped. Rejecting twice is a no-op.
#[server(prefix = "/api", endpoint = "knowledge_reject", output = crate::codec::Answer)]
pub async fn knowledge_reject(id: String) -> Result<Resolution, AppError> {
    let caller = caller()?;
    engine()?
        .knowledge
        .reject_from_review(&caller, &id)
        .await
        .map_err(fail)
}
