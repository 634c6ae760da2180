//! The handles a tool's row passes on to the rest of the engine, typed once: the ids a
//! decision card may cite (`proposal_id`, `quote_id`, `sequence_id`) and the
//! `undo_token` of a level-0 write. Every tool that mints one names it with these
//! field names on its row; the runner decodes rows into these structs
//! (`registry::typed::read`) instead of reading the fields by name, so a handle of the
//! wrong type is a typed error rather than a card never offered or a missing
//! «deshacer».

use serde::{Deserialize, Serialize};

/// The ids on a row that a decision card may cite; most rows carry none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionIds {
    /// A CRM save or bulk proposal, a knowledge proposal or a research proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    /// A contact quote (`people_quote`, `people_quote_status`, `people_reveal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote_id: Option<String>,
    /// A sequence draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_id: Option<String>,
}

impl DecisionIds {
    /// The ids present, in field order.
    pub fn into_ids(self) -> impl Iterator<Item = String> {
        [self.proposal_id, self.quote_id, self.sequence_id]
            .into_iter()
            .flatten()
    }
}

/// A level-0 write's undo token on the first row of its result (`null` when the
/// write changed nothing); absent on every other tool's rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Undo {
    #[serde(default)]
    pub undo_token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::typed;
    use crate::tools::crm::rows::BulkDoneRow;
    use luna_protocol::tool::ResultRow;

    #[test]
    fn the_handles_read_the_rows_the_tools_make() {
        let done = BulkDoneRow {
            proposal_id: "prp_1".into(),
            updated: 2,
            conflicts: Vec::new(),
            rejected: Vec::new(),
            undo_token: Some("und_1".into()),
        };
        let row = typed::row("proposal:prp_1", "Cambiar", &done).unwrap();
        let ids: DecisionIds = typed::read(&row).unwrap();
        assert_eq!(ids.into_ids().collect::<Vec<_>>(), ["prp_1"]);
        let undo: Undo = typed::read(&row).unwrap();
        assert_eq!(undo.undo_token.as_deref(), Some("und_1"));
        // A row with no handle has none; a handle of the wrong type is an error.
        let plain = ResultRow::new("company:x", "X").with("rfc", "AAA010101AAA");
        assert_eq!(
            typed::read::<DecisionIds>(&plain).unwrap(),
            DecisionIds::default()
        );
        let wrong = ResultRow::new("company:x", "X").with("undo_token", 7);
        assert!(typed::read::<Undo>(&wrong).is_err());
    }
}
