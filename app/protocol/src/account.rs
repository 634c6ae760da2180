//! Who is calling: the signed-in person, their workspace, role and plan.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Owner,
    Admin,
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "owner" => Some(Role::Owner),
            "admin" => Some(Role::Admin),
            "member" => Some(Role::Member),
            _ => None,
        }
    }

    /// Owners and admins manage settings, keys and knowledge merges.
    pub fn can_administer(self) -> bool {
        matches!(self, Role::Owner | Role::Admin)
    }

    /// Spanish label shown in the interface.
    pub fn label(self) -> &'static str {
        match self {
            Role::Owner => "Dueño",
            Role::Admin => "Administrador",
            Role::Member => "Miembro",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum Plan {
    Explorer,
    Founder,
    Commercial,
}

impl Plan {
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Explorer => "explorer",
            Plan::Founder => "founder",
            Plan::Commercial => "commercial",
        }
    }

    pub fn parse(s: &str) -> Option<Plan> {
        match s {
            "explorer" => Some(Plan::Explorer),
            "founder" => Some(Plan::Founder),
            "commercial" => Some(Plan::Commercial),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Plan::Explorer => "Explorer",
            Plan::Founder => "Founder",
            Plan::Commercial => "Commercial",
        }
    }
}

/// What the browser knows about the signed-in person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Me {
    pub user_id: String,
    pub email: String,
    pub display_name: String,
    pub workspace_id: String,
    pub workspace_name: String,
    pub role: Role,
    pub plan: Plan,
}

/// What an API key may do beyond reading. Every key reads (searches, gets, counts);
/// each scope below is opt-in when the key is created. Merging Knowledge is never a
/// key's: it stays a person's act in the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiScope {
    /// Reveal contacts (spends créditos de contacto).
    ContactsReveal,
    /// Write the CRM: save companies, edit records, file revealed people.
    CrmWrite,
    /// Create and edit Cerebro topics.
    KnowledgeWrite,
    /// Delete Cerebro topics (destructive; never implied by `KnowledgeWrite`).
    KnowledgeDelete,
}

impl ApiScope {
    pub const ALL: [ApiScope; 4] = [
        ApiScope::ContactsReveal,
        ApiScope::CrmWrite,
        ApiScope::KnowledgeWrite,
        ApiScope::KnowledgeDelete,
    ];

    /// The stable name stored with the key and shown to integrations.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiScope::ContactsReveal => "contacts:reveal",
            ApiScope::CrmWrite => "crm:write",
            ApiScope::KnowledgeWrite => "knowledge:write",
            ApiScope::KnowledgeDelete => "knowledge:delete",
        }
    }

    pub fn parse(s: &str) -> Option<ApiScope> {
        ApiScope::ALL.into_iter().find(|a| a.as_str() == s.trim())
    }

    /// Spanish label shown in Ajustes and in refusals.
    pub fn label(self) -> &'static str {
        match self {
            ApiScope::ContactsReveal => "revelar contactos",
            ApiScope::CrmWrite => "escribir en el CRM",
            ApiScope::KnowledgeWrite => "crear y editar temas de Cerebro",
            ApiScope::KnowledgeDelete => "borrar temas de Cerebro",
        }
    }
}

#[cfg(test)]
mod scope_tests {
    use super::ApiScope;

    #[test]
    fn scopes_round_trip_their_stored_names() {
        for s in ApiScope::ALL {
            assert_eq!(ApiScope::parse(s.as_str()), Some(s));
        }
        assert_eq!(ApiScope::parse("knowledge:merge"), None);
    }
}
