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
