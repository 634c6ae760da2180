//! The people directory behind a trait. A provider answers three questions: who
//! works at a company (masked cards, free), a sealed quote token for some people, and
//! — only with that token — their contact data. The embedded provider
//! ([`EmbeddedProvider`]) draws on the deterministic directory in
//! [`super::directory`]; a real provider would be an HTTP adapter implementing the
//! same trait (no such adapter ships in this version).

use std::future::Future;
use std::pin::Pin;

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::base::error::EngineResult;
use crate::base::store::Store;

use super::directory;

pub type ProviderFuture<'a, T> = Pin<Box<dyn Future<Output = EngineResult<T>> + Send + 'a>>;

/// Seniority band of a person's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seniority {
    Direccion,
    Gerencia,
    Jefatura,
    Coordinacion,
}

impl Seniority {
    pub fn label(self) -> &'static str {
        match self {
            Seniority::Direccion => "Dirección",
            Seniority::Gerencia => "Gerencia",
            Seniority::Jefatura => "Jefatura",
            Seniority::Coordinacion => "Coordinación",
        }
    }
}

/// What discovery returns: a person without contact data (masked only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonCard {
    /// Opaque handle, also the row ref: `person:…`.
    pub handle: String,
    /// The market supplier id (`company:<id>` without the prefix).
    pub company_id: String,
    pub company_name: String,
    pub role: String,
    pub seniority: Seniority,
    /// "M***a R***s".
    pub name_masked: String,
    /// "m****@empresa.mx".
    pub email_masked: String,
}

impl PersonCard {
    pub fn company_ref(&self) -> String {
        format!("company:{}", self.company_id)
    }
    /// A label that names the person without exposing contact data.
    pub fn label(&self) -> String {
        format!("{} en {}", self.role, self.company_name)
    }
}

/// Contact data, only ever returned for a valid quote token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contact {
    pub handle: String,
    pub full_name: String,
    pub email: String,
}

pub trait PeopleProvider: Send + Sync + std::fmt::Debug {
    /// Up to 3 people at a company, masked. `None` when the company is unknown.
    fn search<'a>(&'a self, company_id: &'a str) -> ProviderFuture<'a, Option<Vec<PersonCard>>>;
    /// One person's card by handle, `None` when the handle is unknown.
    fn card<'a>(&'a self, handle: &'a str) -> ProviderFuture<'a, Option<PersonCard>>;
    /// A sealed token pricing these handles; it stays on the server.
    fn quote<'a>(&'a self, handles: &'a [String]) -> ProviderFuture<'a, String>;
    /// Contact data for `handles`, all of which must be covered by `token`.
    fn reveal<'a>(
        &'a self,
        token: &'a str,
        quoted: &'a [String],
        handles: &'a [String],
    ) -> ProviderFuture<'a, Vec<Contact>>;
}

/// The embedded provider: a generated directory over the market's suppliers.
#[derive(Debug, Clone)]
pub struct EmbeddedProvider {
    store: Store,
}

impl EmbeddedProvider {
    pub fn new(store: Store) -> Self {
        EmbeddedProvider { store }
    }

    async fn company(&self, company_id: &str) -> EngineResult<Option<directory::Company>> {
        let row = sqlx::query("select id, name, website from mk_suppliers where id = $1")
            .bind(company_id)
            .fetch_optional(self.store.pool())
            .await?;
        Ok(row.map(|r| directory::Company {
            id: r.get("id"),
            name: r.get("name"),
            website: r.get("website"),
        }))
    }

    async fn people(&self, company_id: &str) -> EngineResult<Option<Vec<directory::Person>>> {
        Ok(self
            .company(company_id)
            .await?
            .map(|c| directory::people_at(&c)))
    }
}

const EMBEDDED_SEAL: &str = "luna-embedded-people-directory";

fn seal(quoted: &[String]) -> String {
    let mut sorted = quoted.to_vec();
    sorted.sort();
    let mut h = Sha256::new();
    h.update(EMBEDDED_SEAL.as_bytes());
    for s in &sorted {
        h.update(s.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

impl PeopleProvider for EmbeddedProvider {
    fn search<'a>(&'a self, company_id: &'a str) -> ProviderFuture<'a, Option<Vec<PersonCard>>> {
        Box::pin(async move {
            Ok(self
                .people(company_id)
                .await?
                .map(|people| people.iter().map(directory::Person::card).collect()))
        })
    }

    fn card<'a>(&'a self, handle: &'a str) -> ProviderFuture<'a, Option<PersonCard>> {
        Box::pin(async move {
            let Some((company_id, _)) = directory::parse_handle(handle) else {
                return Ok(None);
            };
            Ok(self.people(&company_id).await?.and_then(|people| {
                people
                    .iter()
                    .find(|p| p.handle == handle)
                    .map(directory::Person::card)
            }))
        })
    }

    fn quote<'a>(&'a self, handles: &'a [String]) -> ProviderFuture<'a, String> {
        Box::pin(async move { Ok(seal(handles)) })
    }

    fn reveal<'a>(
        &'a self,
        token: &'a str,
        quoted: &'a [String],
        handles: &'a [String],
    ) -> ProviderFuture<'a, Vec<Contact>> {
        Box::pin(async move {
            if token != seal(quoted) || handles.iter().any(|h| !quoted.contains(h)) {
                return Err(crate::base::error::EngineError::Internal(
                    "quote token does not cover the handles".into(),
                ));
            }
            let mut out = Vec::new();
            for handle in handles {
                let Some((company_id, _)) = directory::parse_handle(handle) else {
                    continue;
                };
                if let Some(people) = self.people(&company_id).await? {
                    out.extend(people.into_iter().filter(|p| &p.handle == handle).map(|p| {
                        Contact {
                            handle: p.handle,
                            full_name: p.full_name,
                            email: p.email,
                        }
                    }));
                }
            }
            Ok(out)
        })
    }
}
