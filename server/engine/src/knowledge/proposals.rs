//! Proposals: storing one, suggested edits with their diff, a draft applied by the
//! person's tap, the reviewers' queue, and merge and reject (owner/admin, audited).

use super::*;

impl Knowledge {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn insert_proposal(
        &self,
        conn: &mut crate::base::store::Conn,
        caller: &Caller,
        kind: ProposalKind,
        topic_id: Option<&str>,
        t: &NewTopic,
        summary: &str,
        patch: Option<&str>,
        diff: Option<&str>,
        base_updated_at: Option<i64>,
        status: ProposalStatus,
        surface: &str,
        now: i64,
    ) -> EngineResult<String> {
        let id = new_id("prp");
        sqlx::query(
            "insert into kn_proposals (id, workspace_id, kind, topic_id, title, area, summary, body,
                                       patterns, patch, diff, base_updated_at, status, proposed_by,
                                       surface, created_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(&id)
        .bind(&caller.workspace_id)
        .bind(match kind {
            ProposalKind::Note => "note",
            ProposalKind::Edit => "edit",
        })
        .bind(topic_id)
        .bind(&t.title)
        .bind(&t.area)
        .bind(summary.trim())
        .bind(match kind {
            ProposalKind::Note => Some(t.body.as_str()),
            ProposalKind::Edit => None,
        })
        .bind(to_json(&t.patterns)?)
        .bind(patch)
        .bind(diff)
        .bind(base_updated_at)
        .bind(status.as_str())
        .bind(&caller.user_id)
        .bind(surface)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        Ok(id)
    }

    /// A proposal of the caller's workspace, else `NOT_FOUND`.
    pub async fn proposal(&self, caller: &Caller, id: &str) -> EngineResult<Proposal> {
        let id = id.trim().trim_start_matches("proposal:");
        let row = sqlx::query(&format!(
            "select {PROPOSAL_COLS} from {PROPOSAL_FROM} where p.workspace_id = $1 and p.id = $2"
        ))
        .bind(&caller.workspace_id)
        .bind(id)
        .fetch_optional(self.store.pool())
        .await?;
        row.map(|r| proposal_from(&r))
            .ok_or_else(|| EngineError::not_found("esa propuesta"))
    }

    /// A suggested edit to a topic (`context_suggest_edit`, or `context_update` on a
    /// Knowledge topic). `patch` is the proposed body; without it the proposal is a
    /// question to the reviewer. `draft`: Luna's preview, awaiting the person's tap.
    pub async fn suggest_edit(
        &self,
        caller: &Caller,
        topic: &str,
        summary: &str,
        changes: &TopicChanges,
        draft: bool,
        surface: &str,
    ) -> EngineResult<Proposal> {
        check_summary(summary)?;
        let current = self.get(caller, topic).await?;
        if let Some(t) = &changes.title {
            check_title(t)?;
        }
        if let Some(a) = &changes.area {
            check_area(&normalize_area(a))?;
        }
        if let Some(b) = &changes.body {
            check_body(b)?;
        }
        if let Some(p) = &changes.patterns {
            check_patterns(p)?;
        }
        let proposed = NewTopic {
            title: changes
                .title
                .as_deref()
                .map(str::trim)
                .unwrap_or(&current.title)
                .to_owned(),
            area: changes
                .area
                .as_deref()
                .map(normalize_area)
                .unwrap_or_else(|| current.area.clone()),
            body: current.body.clone(),
            patterns: changes
                .patterns
                .as_ref()
                .map(|ps| ps.iter().map(|p| p.trim().to_owned()).collect())
                .unwrap_or_else(|| current.patterns.clone()),
        };
        let patch = changes.body.as_deref().map(str::trim);
        let diff = match patch {
            // Bounded (bodies are capped, the diff has a deadline) but still CPU work:
            // it runs on the blocking pool, not on an async worker.
            Some(p) => {
                let (name, old, new) = (current.ref_(), current.body.clone(), p.to_owned());
                let d = tokio::task::spawn_blocking(move || diff::unified(&name, &old, &new))
                    .await
                    .map_err(EngineError::internal)??;
                Some(d)
            }
            None => None,
        };
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let status = if draft {
            ProposalStatus::Borrador
        } else {
            ProposalStatus::Pendiente
        };
        let pid = self
            .insert_proposal(
                &mut tx,
                caller,
                ProposalKind::Edit,
                Some(&current.id),
                &proposed,
                summary,
                patch,
                diff.as_deref(),
                Some(current.updated_at),
                status,
                surface,
                now,
            )
            .await?;
        tx.commit().await?;
        self.proposal(caller, &pid).await
    }

    /// The one-tap card of `context_note` / `context_suggest_edit`: turns Luna's
    /// `borrador` into a note en revisión / a pending edit. Applying twice is a no-op.
    pub async fn apply_draft(&self, caller: &Caller, proposal_id: &str) -> EngineResult<Proposal> {
        let p = self.proposal(caller, proposal_id).await?;
        if p.status != ProposalStatus::Borrador {
            return Ok(p);
        }
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let still: Option<String> = sqlx::query_scalar(
            "select status from kn_proposals where workspace_id = $1 and id = $2",
        )
        .bind(&caller.workspace_id)
        .bind(&p.id)
        .fetch_optional(&mut *tx)
        .await?;
        if still.as_deref() != Some("borrador") {
            tx.rollback().await?;
            return self.proposal(caller, &p.id).await;
        }
        let mut topic_id = p.topic_id.clone();
        if p.kind == ProposalKind::Note {
            let t = NewTopic {
                title: p.title.clone(),
                area: p.area.clone(),
                body: p.body.clone().unwrap_or_default(),
                patterns: p.patterns.clone(),
            };
            let slug = self
                .insert_topic(
                    &mut tx,
                    &caller.workspace_id,
                    &caller.user_id,
                    &t,
                    TopicStatus::EnRevision,
                    now,
                )
                .await?;
            topic_id = sqlx::query_scalar(
                "select id from kn_topics where workspace_id = $1 and slug = $2",
            )
            .bind(&caller.workspace_id)
            .bind(&slug)
            .fetch_optional(&mut *tx)
            .await?;
        }
        sqlx::query("update kn_proposals set status = 'pendiente', topic_id = $1 where workspace_id = $2 and id = $3")
            .bind(&topic_id)
            .bind(&caller.workspace_id)
            .bind(&p.id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.proposal(caller, &p.id).await
    }

    /// Notes and suggested edits awaiting an owner/admin, oldest first, with diffs.
    pub async fn pending(&self, caller: &Caller) -> EngineResult<Vec<Proposal>> {
        // Proposals made in one millisecond keep the order they were made in.
        let made = self.store.backend().insertion_order();
        let rows = sqlx::query(&format!(
            "select {PROPOSAL_COLS} from {PROPOSAL_FROM}
              where p.workspace_id = $1 and p.status = 'pendiente' order by p.created_at, p.{made}"
        ))
        .bind(&caller.workspace_id)
        .fetch_all(self.store.pool())
        .await?;
        Ok(rows.iter().map(proposal_from).collect())
    }

    /// The proposal to resolve as `target`: `Ok(None)` when it is pending, `Ok(Some)`
    /// when it already has that outcome (resolving twice is a no-op), else a typed
    /// error. Owner/admin only.
    async fn resolvable(
        &self,
        caller: &Caller,
        id: &str,
        target: ProposalStatus,
    ) -> EngineResult<Option<Proposal>> {
        require_reviewer(caller)?;
        let p = self.proposal(caller, id).await?;
        match p.status {
            ProposalStatus::Pendiente => Ok(None),
            s if s == target => Ok(Some(p)),
            ProposalStatus::Borrador => Err(EngineError::typed(
                ErrorCode::Conflict,
                "Esa propuesta todavía no se envía a revisión.",
                "Quien la propuso debe confirmarla primero.",
            )),
            ProposalStatus::Fusionada | ProposalStatus::Rechazada => Err(EngineError::typed(
                ErrorCode::Conflict,
                "Esa propuesta ya se resolvió de otra forma.",
                "Revisa la lista de pendientes.",
            )),
        }
    }

    /// `fusionar_conocimiento`: a note becomes Knowledge, or a suggested edit is
    /// applied (`VERSION_CONFLICT` if the topic changed since it was proposed; a
    /// question without patch is marked resolved). Owner/admin only; audited once:
    /// merging an already merged proposal is a no-op.
    pub async fn merge(&self, caller: &Caller, id: &str) -> EngineResult<Proposal> {
        let p = match self
            .resolvable(caller, id, ProposalStatus::Fusionada)
            .await?
        {
            Some(done) => return Ok(done),
            None => self.proposal(caller, id).await?,
        };
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        if !self
            .claim(&mut tx, caller, &p, ProposalStatus::Fusionada, now)
            .await?
        {
            // Resolved by someone else meanwhile: same rules as a second call.
            tx.rollback().await?;
            return Box::pin(self.merge(caller, id)).await;
        }
        let Some(topic_id) = p.topic_id.as_deref() else {
            return Err(EngineError::not_found("el tema de esa propuesta"));
        };
        match p.kind {
            ProposalKind::Note => {
                sqlx::query(
                    "update kn_topics set status = 'knowledge', updated_at = $1, updated_by = $2
                      where workspace_id = $3 and id = $4",
                )
                .bind(now)
                .bind(&caller.user_id)
                .bind(&caller.workspace_id)
                .bind(topic_id)
                .execute(&mut *tx)
                .await?;
            }
            ProposalKind::Edit => {
                let base: Option<i64> = sqlx::query_scalar(
                    "select base_updated_at from kn_proposals where workspace_id = $1 and id = $2",
                )
                .bind(&caller.workspace_id)
                .bind(&p.id)
                .fetch_one(&mut *tx)
                .await?;
                let current: Option<i64> = sqlx::query_scalar(
                    "select updated_at from kn_topics where workspace_id = $1 and id = $2",
                )
                .bind(&caller.workspace_id)
                .bind(topic_id)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(current) = current else {
                    return Err(EngineError::not_found("el tema de esa propuesta"));
                };
                if base != Some(current) {
                    return Err(EngineError::typed(
                        ErrorCode::VersionConflict,
                        "El tema cambió después de que se propuso esta edición.",
                        "Recházala y pide una edición nueva sobre la versión actual.",
                    ));
                }
                sqlx::query(
                    "update kn_topics set title = $1, area = $2, patterns = $3, body = coalesce($4, body),
                            stale_marked = 0, updated_at = $5, updated_by = $6
                      where workspace_id = $7 and id = $8",
                )
                .bind(&p.title)
                .bind(&p.area)
                .bind(to_json(&p.patterns)?)
                .bind(&p.body)
                .bind(now)
                .bind(&caller.user_id)
                .bind(&caller.workspace_id)
                .bind(topic_id)
                .execute(&mut *tx)
                .await?;
            }
        }
        audit_in(&mut tx, caller, "knowledge.merge", &Self::audit_detail(&p)).await?;
        tx.commit().await?;
        self.proposal(caller, &p.id).await
    }

    /// Rejects a pending note (its topic en revisión is removed) or edit. Owner/admin
    /// only; audited once: rejecting an already rejected proposal is a no-op.
    pub async fn reject(&self, caller: &Caller, id: &str) -> EngineResult<Proposal> {
        let p = match self
            .resolvable(caller, id, ProposalStatus::Rechazada)
            .await?
        {
            Some(done) => return Ok(done),
            None => self.proposal(caller, id).await?,
        };
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        if !self
            .claim(&mut tx, caller, &p, ProposalStatus::Rechazada, now)
            .await?
        {
            tx.rollback().await?;
            return Box::pin(self.reject(caller, id)).await;
        }
        if let (ProposalKind::Note, Some(topic_id)) = (p.kind, p.topic_id.as_deref()) {
            sqlx::query(
                "update kn_proposals set topic_id = null where workspace_id = $1 and id = $2",
            )
            .bind(&caller.workspace_id)
            .bind(&p.id)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "delete from kn_topics where workspace_id = $1 and id = $2 and status = 'en_revision'",
            )
            .bind(&caller.workspace_id)
            .bind(topic_id)
            .execute(&mut *tx)
            .await?;
        }
        audit_in(&mut tx, caller, "knowledge.reject", &Self::audit_detail(&p)).await?;
        tx.commit().await?;
        self.proposal(caller, &p.id).await
    }

    /// Marks a pending proposal resolved inside the write transaction. False when it
    /// was no longer pending (a concurrent resolution won).
    async fn claim(
        &self,
        conn: &mut crate::base::store::Conn,
        caller: &Caller,
        p: &Proposal,
        status: ProposalStatus,
        now: i64,
    ) -> EngineResult<bool> {
        let done = sqlx::query(
            "update kn_proposals set status = $1, resolved_by = $2, resolved_at = $3
              where workspace_id = $4 and id = $5 and status = 'pendiente'",
        )
        .bind(status.as_str())
        .bind(&caller.user_id)
        .bind(now)
        .bind(&caller.workspace_id)
        .bind(&p.id)
        .execute(&mut *conn)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    fn audit_detail(p: &Proposal) -> serde_json::Value {
        json!({"proposal": p.id, "kind": p.kind, "topic": p.topic_slug, "title": p.title})
    }
}
