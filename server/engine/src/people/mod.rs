//! Personas (CONTRACT §3, §5, §8): find people at a company (masked), quote their
//! contact data in créditos de contacto, reveal it once a person approves, and list
//! who was revealed (metadata only). The `people_*` tools in [`tools`] wrap this
//! service thinly; an accepted `revelar_contactos` card reveals through [`People::reveal`]
//! with the key the decision minted (`decisions::execute`);
//! [`file`] files a revealed person onto a CRM record (`people_file`).
//!
//! **Invariants.**
//! * Contact data (full name, email) leaves this module only for people revealed in
//!   the caller's workspace; everyone else is a masked [`PersonCard`].
//! * A reveal claims its people, charges its receipt and records itself in ONE write
//!   transaction (`BEGIN IMMEDIATE`): a person revealed once in a workspace is never
//!   charged again, and two overlapping reveals at once charge each person once.
//! * The same idempotency key executes once; a retry returns the original outcome.
//! * The provider's quote token stays in `people_quotes`; callers only see `quote_id`.

pub mod directory;
pub mod file;
pub mod mask;
pub mod provider;

#[cfg(test)]
mod file_tests;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use luna_protocol::error::ErrorCode;
use sqlx::Row;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Scope, Store};
use crate::billing::{Billing, ChargeContext, ChargeSpec, Ledger, CONTACT_REVEAL_COST};

pub use provider::{Contact, EmbeddedProvider, PeopleProvider, PersonCard, Seniority};

/// A quote (and its decision card) expires after 10 minutes (CONTRACT §8).
pub const QUOTE_TTL_MS: i64 = 10 * 60 * 1000;
/// Most people in one quote.
pub const MAX_QUOTE_PEOPLE: usize = 30;
/// Most people per company in `people_search`.
pub const MAX_PEOPLE_PER_COMPANY: usize = 3;

/// A person as a workspace sees them: the masked card, plus contact data when the
/// person is revealed in this workspace.
#[derive(Debug, Clone)]
pub struct PersonView {
    pub card: PersonCard,
    pub revealed: Option<Revealed>,
}

/// Contact data of a person revealed in the workspace, with when and by whom.
#[derive(Debug, Clone)]
pub struct Revealed {
    pub full_name: String,
    pub email: String,
    pub revealed_at: i64,
}

/// What `people_quote` returns.
#[derive(Debug, Clone)]
pub struct Quote {
    pub id: String,
    pub people: Vec<PersonCard>,
    /// Handles already revealed in this workspace (free).
    pub already_revealed: usize,
    /// Handles that would be charged.
    pub to_reveal: usize,
    /// créditos de contacto.
    pub price: i64,
    pub balance: i64,
    pub expires_at: i64,
}

/// The state of a quote, for `people_status`, previews and decision cards.
#[derive(Debug, Clone)]
pub struct QuoteState {
    pub id: String,
    pub people: Vec<PersonCard>,
    /// Price now (people revealed since the quote are no longer charged).
    pub price: i64,
    pub already_revealed: usize,
    pub balance: i64,
    pub expires_at: i64,
    pub expired: bool,
    /// True once a reveal ran over this quote.
    pub executed: bool,
}

/// `people_reveal`'s arguments (the decision card passes a server-minted key).
#[derive(Debug, Clone)]
pub struct RevealRequest {
    pub quote_id: String,
    pub confirm: bool,
    pub max_credits: i64,
    pub idempotency_key: String,
}

/// Who and how the reveal was asked for (goes on the receipt).
#[derive(Debug, Clone, Copy)]
pub struct RevealVia<'a> {
    pub surface: &'a str,
    pub auto_policy: Option<&'a str>,
    pub call_ref: Option<&'a str>,
}

/// A revealed person in a reveal's outcome.
#[derive(Debug, Clone)]
pub struct RevealedPerson {
    pub card: PersonCard,
    pub full_name: String,
    pub email: String,
    /// Charged by this reveal (false: it was already revealed in the workspace).
    pub charged: bool,
}

#[derive(Debug, Clone)]
pub struct RevealOutcome {
    pub quote_id: String,
    /// False for `confirm: false` (a dry run that charged and revealed nothing).
    pub executed: bool,
    /// True when this idempotency key had already run: nothing new was charged.
    pub replayed: bool,
    pub charged: i64,
    pub receipt_id: Option<String>,
    pub already_revealed: usize,
    pub balance: i64,
    /// Revealed people (empty for a dry run).
    pub people: Vec<RevealedPerson>,
    /// For a dry run: the quote as it stands.
    pub preview: Option<QuoteState>,
}

/// Metadata of a revealed person (no contact data).
#[derive(Debug, Clone)]
pub struct Acquired {
    pub handle: String,
    pub company_ref: String,
    pub company_name: String,
    pub role: String,
    pub revealed_at: i64,
    pub revealed_by: String,
}

#[derive(Clone, Debug)]
pub struct People {
    store: Store,
    billing: Billing,
    provider: Arc<dyn PeopleProvider>,
}

pub(crate) fn quote_expired() -> EngineError {
    EngineError::typed(
        ErrorCode::QuoteExpired,
        "La cotización venció: las cotizaciones de contactos duran 10 minutos.",
        "Vuelve a cotizar con people_quote sobre las mismas personas.",
    )
}

fn over_max(price: i64, max: i64) -> EngineError {
    EngineError::typed(
        ErrorCode::MaxCreditsExceeded,
        format!("Revelar cuesta {price} créditos de contacto y el tope autorizado es {max}."),
        "Sube max_credits al precio de la cotización o cotiza menos personas.",
    )
}

fn quote_not_found() -> EngineError {
    EngineError::not_found("esa cotización")
}

/// `company:<id>` → `<id>`, or a typed error naming the expected shape.
pub fn parse_company_ref(company_ref: &str) -> EngineResult<&str> {
    company_ref
        .trim()
        .strip_prefix("company:")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            EngineError::Typed(
                luna_protocol::error::ErrorBody::new(
                    ErrorCode::InvalidArgument,
                    "company_ref debe ser la referencia de una empresa.",
                    "Usa la `ref` de una fila de Proveedores o Empresas, con la forma company:<id>.",
                )
                .with_allowed_values(["company:<id>"]),
            )
        })
}

struct QuoteRow {
    token: String,
    handles: Vec<String>,
    expires_at: i64,
}

impl People {
    pub fn new(store: Store, billing: Billing, provider: Arc<dyn PeopleProvider>) -> Self {
        People {
            store,
            billing,
            provider,
        }
    }

    /// The embedded provider over the market's suppliers.
    pub fn embedded(store: Store, billing: Billing) -> Self {
        let provider = Arc::new(EmbeddedProvider::new(store.clone()));
        People::new(store, billing, provider)
    }

    /// Handles among `handles` already revealed in the workspace, with their data.
    async fn revealed_in<'e, E>(
        exec: E,
        workspace_id: &str,
        handles: &[String],
    ) -> EngineResult<HashMap<String, Revealed>>
    where
        E: sqlx::Executor<'e, Database = crate::base::store::Db>,
    {
        if handles.is_empty() {
            return Ok(HashMap::new());
        }
        let marks = vec!["?"; handles.len()].join(",");
        let sql = format!(
            "select person_id, full_name, email, revealed_at from people_reveals
              where workspace_id = ? and person_id in ({marks})"
        );
        let sql = crate::base::store::numbered(&sql);
        let mut q = sqlx::query(&sql).bind(workspace_id);
        for h in handles {
            q = q.bind(h);
        }
        let rows = q.fetch_all(exec).await?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get::<String, _>("person_id"),
                    Revealed {
                        full_name: r.get("full_name"),
                        email: r.get("email"),
                        revealed_at: r.get("revealed_at"),
                    },
                )
            })
            .collect())
    }

    /// `people_search`: up to 3 people at a market company, masked unless revealed here.
    pub async fn search(
        &self,
        caller: &Caller,
        company_ref: &str,
    ) -> EngineResult<Vec<PersonView>> {
        let id = parse_company_ref(company_ref)?;
        let cards = self
            .provider
            .search(id)
            .await?
            .ok_or_else(|| EngineError::not_found("esa empresa"))?;
        let cards: Vec<PersonCard> = cards.into_iter().take(MAX_PEOPLE_PER_COMPANY).collect();
        let handles: Vec<String> = cards.iter().map(|c| c.handle.clone()).collect();
        let mut revealed =
            Self::revealed_in(self.store.pool(), &caller.workspace_id, &handles).await?;
        Ok(cards
            .into_iter()
            .map(|card| PersonView {
                revealed: revealed.remove(&card.handle),
                card,
            })
            .collect())
    }

    async fn cards(&self, handles: &[String]) -> EngineResult<Vec<PersonCard>> {
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            match self.provider.card(h).await? {
                Some(c) => out.push(c),
                None => {
                    return Err(EngineError::Typed(luna_protocol::error::ErrorBody::new(
                        ErrorCode::NotFound,
                        format!("No encontramos a la persona {h}."),
                        "Usa las `ref` person:… que devolvió people_search.",
                    )))
                }
            }
        }
        Ok(out)
    }

    pub async fn quote(&self, caller: &Caller, handles: &[String]) -> EngineResult<Quote> {
        self.quote_at(caller, handles, now_ms()).await
    }

    /// `people_quote`: price (2 créditos de contacto per person not yet revealed here),
    /// balance and how many were already revealed. Stores the provider's token.
    pub async fn quote_at(
        &self,
        caller: &Caller,
        handles: &[String],
        now: i64,
    ) -> EngineResult<Quote> {
        let mut seen = HashSet::new();
        let handles: Vec<String> = handles
            .iter()
            .map(|h| h.trim().to_owned())
            .filter(|h| seen.insert(h.clone()))
            .collect();
        if handles.is_empty() || handles.len() > MAX_QUOTE_PEOPLE {
            return Err(EngineError::typed(
                ErrorCode::InvalidArgument,
                format!("Cotiza entre 1 y {MAX_QUOTE_PEOPLE} personas a la vez."),
                "Pasa en handles las `ref` person:… de people_search.",
            ));
        }
        let people = self.cards(&handles).await?;
        let already = Self::revealed_in(self.store.pool(), &caller.workspace_id, &handles)
            .await?
            .len();
        let to_reveal = handles.len() - already;
        let price = CONTACT_REVEAL_COST * to_reveal as i64;
        let balance = self
            .billing
            .balance_at(caller, Ledger::Contact, now)
            .await?
            .left();
        let token = self.provider.quote(&handles).await?;
        let id = new_id("quo");
        let expires_at = now + QUOTE_TTL_MS;
        sqlx::query(
            "insert into people_quotes (id, workspace_id, user_id, token, handles, price,
                                        already_revealed, created_at, expires_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&id)
        .bind(&caller.workspace_id)
        .bind(&caller.user_id)
        .bind(&token)
        .bind(serde_json::to_string(&handles).map_err(|e| EngineError::Internal(e.to_string()))?)
        .bind(price)
        .bind(already as i64)
        .bind(now)
        .bind(expires_at)
        .execute(self.store.pool())
        .await?;
        Ok(Quote {
            id,
            people,
            already_revealed: already,
            to_reveal,
            price,
            balance,
            expires_at,
        })
    }

    async fn load_quote(&self, caller: &Caller, quote_id: &str) -> EngineResult<QuoteRow> {
        let id = quote_id.trim().trim_start_matches("quote:");
        let row = sqlx::query(
            "select token, handles, expires_at from people_quotes where id = $1 and workspace_id = $2",
        )
        .bind(id)
        .bind(&caller.workspace_id)
        .fetch_optional(self.store.pool())
        .await?
        .ok_or_else(quote_not_found)?;
        let handles: String = row.get("handles");
        Ok(QuoteRow {
            token: row.get("token"),
            handles: serde_json::from_str(&handles)
                .map_err(|e| EngineError::Internal(format!("quote handles: {e}")))?,
            expires_at: row.get("expires_at"),
        })
    }

    pub async fn status(&self, caller: &Caller, quote_id: &str) -> EngineResult<QuoteState> {
        self.status_at(caller, quote_id, now_ms()).await
    }

    /// The quote as it stands now (`people_status`, previews, decision cards).
    pub async fn status_at(
        &self,
        caller: &Caller,
        quote_id: &str,
        now: i64,
    ) -> EngineResult<QuoteState> {
        let id = quote_id.trim().trim_start_matches("quote:").to_owned();
        let q = self.load_quote(caller, &id).await?;
        let people = self.cards(&q.handles).await?;
        let already = Self::revealed_in(self.store.pool(), &caller.workspace_id, &q.handles)
            .await?
            .len();
        let executed: i64 = sqlx::query_scalar(
            "select count(*) from people_reveal_runs where workspace_id = $1 and quote_id = $2",
        )
        .bind(&caller.workspace_id)
        .bind(&id)
        .fetch_one(self.store.pool())
        .await?;
        Ok(QuoteState {
            id,
            price: CONTACT_REVEAL_COST * (q.handles.len() - already) as i64,
            people,
            already_revealed: already,
            balance: self
                .billing
                .balance_at(caller, Ledger::Contact, now)
                .await?
                .left(),
            expires_at: q.expires_at,
            expired: now >= q.expires_at,
            executed: executed > 0,
        })
    }

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

    /// `people_acquired`: who was revealed in the workspace, when and by whom. No
    /// contact data.
    pub async fn acquired(
        &self,
        caller: &Caller,
        company_ref: Option<&str>,
        limit: i64,
    ) -> EngineResult<Vec<Acquired>> {
        let company = company_ref.map(parse_company_ref).transpose()?;
        let rows = sqlx::query(
            "select r.person_id, r.company_ref, r.company_name, r.role, r.revealed_at,
                    coalesce(u.display_name, 'Integración') as who
               from people_reveals r left join users u on u.id = r.revealed_by
              where r.workspace_id = $1 and ($2 is null or r.company_ref = $3)
              order by r.revealed_at desc, r.person_id limit $4",
        )
        .bind(&caller.workspace_id)
        .bind(company.map(|c| format!("company:{c}")))
        .bind(company.map(|c| format!("company:{c}")))
        .bind(limit.clamp(1, 100))
        .fetch_all(self.store.pool())
        .await?;
        Ok(rows
            .iter()
            .map(|r| Acquired {
                handle: r.get("person_id"),
                company_ref: r.get("company_ref"),
                company_name: r.get("company_name"),
                role: r.get("role"),
                revealed_at: r.get("revealed_at"),
                revealed_by: r.get("who"),
            })
            .collect())
    }
}
