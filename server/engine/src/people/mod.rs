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
mod reveal;

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
        let marks = crate::base::store::marks(handles.len());
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
