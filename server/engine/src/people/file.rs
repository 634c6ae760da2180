//! `people_file`: file a person revealed in the workspace onto one of its CRM records.
//! The person must be revealed here (`NOT_REVEALED` otherwise, `NOT_FOUND` for an
//! unknown handle); the record must be a live record of the workspace (`NOT_FOUND`)
//! in an active collection (`PROTECTED_RESOURCE`). The write itself is the CRM's
//! [`crate::crm::records::file_person`]: history row (who, surface) and undo token.

use luna_protocol::error::ErrorCode;
use serde_json::{Map, Value};

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::base::surface::Surface;
use crate::crm::records::{self, WriteOutcome};
use crate::crm::Actor;

use super::{People, PersonCard, Revealed};

/// What filing did.
#[derive(Debug, Clone)]
pub struct Filed {
    pub person: PersonCard,
    pub outcome: WriteOutcome,
}

impl Filed {
    /// True when the person was already on the record (nothing written, no undo).
    pub fn already_filed(&self) -> bool {
        self.outcome.undo_token.is_none()
    }
}

fn not_revealed(card: &PersonCard) -> EngineError {
    EngineError::typed(
        ErrorCode::NotRevealed,
        format!(
            "El contacto de {} no está revelado en este espacio de trabajo.",
            card.label()
        ),
        "Cotiza con people_quote y revela con people_reveal antes de archivar a la persona.",
    )
}

/// The entry stored on the record (Spanish keys, like the record's fields).
fn entry(card: &PersonCard, revealed: &Revealed) -> Map<String, Value> {
    [
        ("ref", card.handle.clone()),
        ("nombre", revealed.full_name.clone()),
        ("correo", revealed.email.clone()),
        ("puesto", card.role.clone()),
        ("empresa", card.company_name.clone()),
        ("company_ref", card.company_ref()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), Value::String(v)))
    .collect()
}

impl People {
    /// `people_file`. See the module doc for the failures.
    pub async fn file(
        &self,
        caller: &Caller,
        surface: Surface,
        person_ref: &str,
        record_ref: &str,
    ) -> EngineResult<Filed> {
        let handle = person_ref.trim().to_owned();
        let card = self
            .cards(std::slice::from_ref(&handle))
            .await?
            .pop()
            .ok_or_else(|| EngineError::not_found("esa persona"))?;
        let revealed = Self::revealed_in(self.store.pool(), &caller.workspace_id, &[handle])
            .await?
            .remove(&card.handle)
            .ok_or_else(|| not_revealed(&card))?;
        let outcome = records::file_person(
            &self.store,
            &Actor::new(caller, surface),
            record_ref,
            entry(&card, &revealed),
        )
        .await?;
        Ok(Filed {
            person: card,
            outcome,
        })
    }
}
