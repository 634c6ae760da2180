//! Writing topics: a note created or drafted (the topic with its proposal), an update
//! (direct on a note, a suggested edit on Knowledge) and a delete.

use super::*;

impl Knowledge {
    async fn free_slug(
        &self,
        conn: &mut crate::base::store::Conn,
        ws: &str,
        title: &str,
    ) -> EngineResult<String> {
        let base = slugify(title);
        let mut slug = base.clone();
        let mut n = 2;
        loop {
            let taken: Option<i64> =
                sqlx::query_scalar("select 1 from kn_topics where workspace_id = $1 and slug = $2")
                    .bind(ws)
                    .bind(&slug)
                    .fetch_optional(&mut *conn)
                    .await?;
            if taken.is_none() {
                return Ok(slug);
            }
            slug = format!("{base}-{n}");
            n += 1;
        }
    }

    pub(super) async fn insert_topic(
        &self,
        conn: &mut crate::base::store::Conn,
        workspace_id: &str,
        user_id: &str,
        t: &NewTopic,
        status: TopicStatus,
        now: i64,
    ) -> EngineResult<String> {
        let id = new_id("tpc");
        let slug = self.free_slug(conn, workspace_id, &t.title).await?;
        sqlx::query(
            "insert into kn_topics (id, workspace_id, slug, area, title, body, patterns, status,
                                    created_by, updated_by, created_at, updated_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(&id)
        .bind(workspace_id)
        .bind(&slug)
        .bind(&t.area)
        .bind(&t.title)
        .bind(&t.body)
        .bind(to_json(&t.patterns)?)
        .bind(status.as_str())
        .bind(user_id)
        .bind(user_id)
        .bind(now)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        Ok(slug)
    }

    /// A note born "en revisión" (`context_create`, `context_note` executed): the
    /// topic plus a pending proposal for the reviewers.
    pub async fn create_note(
        &self,
        caller: &Caller,
        topic: &NewTopic,
        summary: &str,
        surface: &str,
    ) -> EngineResult<(Topic, Proposal)> {
        let t = check_new(topic)?;
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
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
        let topic_id: String =
            sqlx::query_scalar("select id from kn_topics where workspace_id = $1 and slug = $2")
                .bind(&caller.workspace_id)
                .bind(&slug)
                .fetch_one(&mut *tx)
                .await?;
        let pid = self
            .insert_proposal(
                &mut tx,
                caller,
                ProposalKind::Note,
                Some(&topic_id),
                &t,
                summary,
                None,
                None,
                None,
                ProposalStatus::Pendiente,
                surface,
                now,
            )
            .await?;
        tx.commit().await?;
        Ok((
            self.get(caller, &slug).await?,
            self.proposal(caller, &pid).await?,
        ))
    }

    /// A note Luna previewed: a `borrador` proposal, nothing visible until the tap.
    pub async fn draft_note(
        &self,
        caller: &Caller,
        topic: &NewTopic,
        surface: &str,
    ) -> EngineResult<Proposal> {
        let t = check_new(topic)?;
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let summary = format!("Nota nueva: {}", t.title);
        let pid = self
            .insert_proposal(
                &mut tx,
                caller,
                ProposalKind::Note,
                None,
                &t,
                &summary,
                None,
                None,
                None,
                ProposalStatus::Borrador,
                surface,
                now,
            )
            .await?;
        tx.commit().await?;
        self.proposal(caller, &pid).await
    }

    /// Updates a topic (`context_update`). En revisión: applied. Knowledge: only the
    /// stale mark applies directly; any other change becomes a pending suggested edit.
    pub async fn update(
        &self,
        caller: &Caller,
        topic: &str,
        changes: &TopicChanges,
        surface: &str,
    ) -> EngineResult<UpdateOutcome> {
        let current = self.get(caller, topic).await?;
        let content_change = changes.title.is_some()
            || changes.area.is_some()
            || changes.body.is_some()
            || changes.patterns.is_some();
        if current.status == TopicStatus::Knowledge && content_change {
            let summary = "Cambio propuesto desde una integración".to_owned();
            return self
                .suggest_edit(caller, topic, &summary, changes, false, surface)
                .await
                .map(UpdateOutcome::Proposed);
        }
        let next = check_new(&NewTopic {
            title: changes.title.clone().unwrap_or(current.title.clone()),
            area: changes.area.clone().unwrap_or(current.area.clone()),
            body: changes.body.clone().unwrap_or(current.body.clone()),
            patterns: changes.patterns.clone().unwrap_or(current.patterns.clone()),
        })?;
        let stale = changes
            .stale
            .unwrap_or(current.stale_marked && !content_change);
        let now = now_ms();
        sqlx::query(
            "update kn_topics set title = $1, area = $2, body = $3, patterns = $4, stale_marked = $5,
                                  updated_at = $6, updated_by = $7
              where workspace_id = $8 and id = $9",
        )
        .bind(&next.title)
        .bind(&next.area)
        .bind(&next.body)
        .bind(to_json(&next.patterns)?)
        .bind(i64::from(stale))
        .bind(if content_change {
            now
        } else {
            current.updated_at
        })
        .bind(&caller.user_id)
        .bind(&caller.workspace_id)
        .bind(&current.id)
        .execute(self.store.pool())
        .await?;
        Ok(UpdateOutcome::Applied(
            self.get(caller, &current.slug).await?,
        ))
    }

    /// Deletes a topic (`context_delete`). A Knowledge topic only by an owner/admin;
    /// a note en revisión by any member. Audited.
    pub async fn delete(&self, caller: &Caller, topic: &str) -> EngineResult<Topic> {
        let current = self.get(caller, topic).await?;
        if current.status == TopicStatus::Knowledge && !caller.role.can_administer() {
            return Err(EngineError::forbidden(
                "Solo el dueño o un administrador puede borrar un tema de Knowledge.",
            ));
        }
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        sqlx::query("delete from kn_proposals where workspace_id = $1 and topic_id = $2")
            .bind(&caller.workspace_id)
            .bind(&current.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("delete from kn_topics where workspace_id = $1 and id = $2")
            .bind(&caller.workspace_id)
            .bind(&current.id)
            .execute(&mut *tx)
            .await?;
        audit_in(
            &mut tx,
            caller,
            "knowledge.delete",
            &json!({"topic": current.ref_(), "title": current.title}),
        )
        .await?;
        tx.commit().await?;
        Ok(current)
    }
}
