//! Revealing a quote's people (`people_reveal` and the accepted `revelar_contactos`
//! card): the checks in order, the one write transaction that claims, charges and
//! records, and the replay of a key that already ran.

use super::*;

impl People {
    /// The decision card `revelar_contactos` once accepted (by the person, or inside
    /// their auto budget): reveals the quote's people with the server-minted key,
    /// capped at the quote's current price (which can only have gone down since the
    /// card was shown).
    pub async fn execute_reveal(
        &self,
        caller: &Caller,
        quote_id: &str,
        server_minted_key: &str,
        via: RevealVia<'_>,
    ) -> EngineResult<RevealOutcome> {
        let now = now_ms();
        let state = self.status_at(caller, quote_id, now).await?;
        self.reveal_at(
            caller,
            &RevealRequest {
                quote_id: state.id,
                confirm: true,
                max_credits: state.price,
                idempotency_key: server_minted_key.to_owned(),
            },
            via,
            now,
        )
        .await
    }

    pub async fn reveal(
        &self,
        caller: &Caller,
        req: &RevealRequest,
        via: RevealVia<'_>,
    ) -> EngineResult<RevealOutcome> {
        self.reveal_at(caller, req, via, now_ms()).await
    }

    /// `people_reveal`. See the module invariants. Order of checks: the quote exists in
    /// this workspace (`NOT_FOUND`), a replayed key returns the original outcome, the
    /// quote is current (`QUOTE_EXPIRED`), the price fits `max_credits`
    /// (`MAX_CREDITS_EXCEEDED`), the ledger pays (`INSUFFICIENT_CREDITS`).
    pub async fn reveal_at(
        &self,
        caller: &Caller,
        req: &RevealRequest,
        via: RevealVia<'_>,
        now: i64,
    ) -> EngineResult<RevealOutcome> {
        let quote_id = req.quote_id.trim().trim_start_matches("quote:").to_owned();
        let key = req.idempotency_key.trim();
        if key.is_empty() || key.len() > 200 {
            return Err(EngineError::typed(
                ErrorCode::InvalidArgument,
                "idempotency_key debe tener entre 1 y 200 caracteres.",
                "Usa una llave única por revelado y repítela solo al reintentar.",
            ));
        }
        if req.max_credits < 0 {
            return Err(EngineError::typed(
                ErrorCode::InvalidArgument,
                "max_credits no puede ser negativo.",
                "Pasa el precio de la cotización o un tope mayor.",
            ));
        }
        let quote = self.load_quote(caller, &quote_id).await?;
        if let Some(out) = self.replay(caller, &quote_id, key, now).await? {
            return Ok(out);
        }
        if now >= quote.expires_at {
            return Err(quote_expired());
        }
        if !req.confirm {
            let state = self.status_at(caller, &quote_id, now).await?;
            return Ok(RevealOutcome {
                quote_id,
                executed: false,
                replayed: false,
                charged: 0,
                receipt_id: None,
                already_revealed: state.already_revealed,
                balance: state.balance,
                people: Vec::new(),
                preview: Some(state),
            });
        }
        // Fetch contact data before taking the write lock (a real provider is remote).
        let known =
            Self::revealed_in(self.store.pool(), &caller.workspace_id, &quote.handles).await?;
        let pending: Vec<String> = quote
            .handles
            .iter()
            .filter(|h| !known.contains_key(*h))
            .cloned()
            .collect();
        let price_now = CONTACT_REVEAL_COST * pending.len() as i64;
        if price_now > req.max_credits {
            return Err(over_max(price_now, req.max_credits));
        }
        // An API key over its monthly budget reveals nothing (the charge re-checks it).
        if price_now > 0 {
            crate::billing::key_budget::admit(&self.store, caller, price_now, now).await?;
        }
        let contacts: HashMap<String, Contact> = if pending.is_empty() {
            HashMap::new()
        } else {
            self.provider
                .reveal(&quote.token, &quote.handles, &pending)
                .await?
                .into_iter()
                .map(|c| (c.handle.clone(), c))
                .collect()
        };
        let cards: HashMap<String, PersonCard> = self
            .cards(&quote.handles)
            .await?
            .into_iter()
            .map(|c| (c.handle.clone(), c))
            .collect();

        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let ran: Option<i64> = sqlx::query_scalar(
            "select 1 from people_reveal_runs where workspace_id = $1 and idempotency_key = $2",
        )
        .bind(&caller.workspace_id)
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?;
        if ran.is_some() {
            tx.rollback().await?;
            return self
                .replay(caller, &quote_id, key, now)
                .await?
                .ok_or_else(|| EngineError::Internal("reveal run vanished".into()));
        }
        // Re-read inside the lock: a concurrent reveal may have taken some people.
        let taken = Self::revealed_in(&mut *tx, &caller.workspace_id, &quote.handles).await?;
        let new: Vec<&String> = quote
            .handles
            .iter()
            .filter(|h| !taken.contains_key(*h))
            .collect();
        let price = CONTACT_REVEAL_COST * new.len() as i64;
        if price > req.max_credits {
            return Err(over_max(price, req.max_credits));
        }
        let receipt = if price > 0 {
            let receipt_key = format!("people_reveal:{key}");
            let r = self
                .billing
                .charge_in(
                    &mut tx,
                    caller,
                    &ChargeSpec {
                        action: "people_reveal".into(),
                        branch: "people".into(),
                        amount: price,
                        ledger: Ledger::Contact,
                    },
                    &ChargeContext {
                        surface: via.surface,
                        idempotency_key: &receipt_key,
                        auto_policy: via.auto_policy,
                        call_ref: via.call_ref,
                    },
                    now,
                )
                .await?;
            if r.replayed {
                return Err(EngineError::typed(
                    ErrorCode::IdempotencyConflict,
                    "Esa llave de idempotencia ya se usó para otro cobro.",
                    "Usa una llave nueva para este revelado.",
                ));
            }
            Some(r)
        } else {
            None
        };
        let receipt_id = receipt.as_ref().map(|r| r.id.clone());
        for handle in &new {
            let (Some(card), Some(contact)) = (cards.get(*handle), contacts.get(*handle)) else {
                return Err(EngineError::Internal(format!(
                    "provider returned no contact for {handle}"
                )));
            };
            sqlx::query(
                "insert into people_reveals (workspace_id, person_id, company_ref, company_name, role,
                                             full_name, email, revealed_by, quote_id, receipt_id,
                                             surface, revealed_at)
                 values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            )
            .bind(&caller.workspace_id)
            .bind(*handle)
            .bind(card.company_ref())
            .bind(&card.company_name)
            .bind(&card.role)
            .bind(&contact.full_name)
            .bind(&contact.email)
            .bind(&caller.user_id)
            .bind(&quote_id)
            .bind(&receipt_id)
            .bind(via.surface)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(
            "insert into people_reveal_runs (workspace_id, idempotency_key, quote_id, receipt_id,
                                             charged, newly_revealed, created_at)
             values ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&caller.workspace_id)
        .bind(key)
        .bind(&quote_id)
        .bind(&receipt_id)
        .bind(price)
        .bind(serde_json::to_string(&new).map_err(|e| EngineError::Internal(e.to_string()))?)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let new_set: HashSet<String> = new.into_iter().cloned().collect();
        self.outcome(
            caller,
            &quote_id,
            &quote.handles,
            &new_set,
            price,
            receipt_id,
            false,
            now,
        )
        .await
    }

    /// The original outcome of a key that already ran, or `None`.
    async fn replay(
        &self,
        caller: &Caller,
        quote_id: &str,
        key: &str,
        now: i64,
    ) -> EngineResult<Option<RevealOutcome>> {
        let Some(run) = sqlx::query(
            "select quote_id, receipt_id, charged, newly_revealed from people_reveal_runs
              where workspace_id = $1 and idempotency_key = $2",
        )
        .bind(&caller.workspace_id)
        .bind(key)
        .fetch_optional(self.store.pool())
        .await?
        else {
            return Ok(None);
        };
        let ran_quote: String = run.get("quote_id");
        if ran_quote != quote_id {
            return Err(EngineError::typed(
                ErrorCode::IdempotencyConflict,
                "Esa llave de idempotencia ya se usó con otra cotización.",
                "Usa una llave nueva para cada revelado.",
            ));
        }
        let q = self.load_quote(caller, quote_id).await?;
        let newly: String = run.get("newly_revealed");
        let newly: HashSet<String> = serde_json::from_str(&newly)
            .map_err(|e| EngineError::Internal(format!("reveal run: {e}")))?;
        self.outcome(
            caller,
            quote_id,
            &q.handles,
            &newly,
            run.get("charged"),
            run.get("receipt_id"),
            true,
            now,
        )
        .await
        .map(Some)
    }

    #[allow(clippy::too_many_arguments)]
    async fn outcome(
        &self,
        caller: &Caller,
        quote_id: &str,
        handles: &[String],
        charged_now: &HashSet<String>,
        charged: i64,
        receipt_id: Option<String>,
        replayed: bool,
        now: i64,
    ) -> EngineResult<RevealOutcome> {
        let revealed = Self::revealed_in(self.store.pool(), &caller.workspace_id, handles).await?;
        let mut people = Vec::new();
        for card in self.cards(handles).await? {
            if let Some(r) = revealed.get(&card.handle) {
                people.push(RevealedPerson {
                    charged: charged_now.contains(&card.handle),
                    full_name: r.full_name.clone(),
                    email: r.email.clone(),
                    card,
                });
            }
        }
        Ok(RevealOutcome {
            quote_id: quote_id.to_owned(),
            executed: true,
            replayed,
            charged,
            receipt_id,
            already_revealed: handles.len() - charged_now.len(),
            balance: self
                .billing
                .balance_at(caller, Ledger::Contact, now)
                .await?
                .left(),
            people,
            preview: None,
        })
    }
}
