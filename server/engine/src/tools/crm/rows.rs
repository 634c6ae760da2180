//! The typed rows of `crm_save_companies` and `crm_bulk_update`: the handlers build
//! them and `registry::typed::row` turns them into the wire row; the decision cards
//! decode the same structs back (`registry::typed::first`). The field names are the
//! wire's (docs/TOOLS.md, MCP clients): renaming one is a wire change.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::crm::proposals::{BulkRejected, ConflictPolicy};

/// Most names a save preview lists of each group.
pub const SAMPLE: usize = 10;

/// `crm_save_companies` from Luna: the stored proposal a «guardar en CRM» card cites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaveProposalRow {
    pub proposal_id: String,
    pub to_create: usize,
    pub already_there: usize,
    /// Refs that matched no company.
    pub not_found: Vec<String>,
    pub conflict_policy: ConflictPolicy,
    /// The stage the new records start in.
    #[serde(default)]
    pub stage: String,
    /// Up to [`SAMPLE`] names of the companies that will be created.
    pub sample_to_create: Vec<String>,
    /// Up to [`SAMPLE`] names of the companies already in the collection.
    pub sample_already_there: Vec<String>,
}

/// `crm_save_companies` from the app or MCP: the proposal executed at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaveDoneRow {
    pub proposal_id: String,
    pub created: usize,
    pub already_there: usize,
    pub refreshed: usize,
    pub not_found: Vec<String>,
}

/// `crm_bulk_update` from Luna: the stored proposal a «cambios masivos» card cites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BulkProposalRow {
    pub proposal_id: String,
    pub will_change: usize,
    pub unchanged: usize,
    pub rejected: Vec<BulkRejected>,
    /// (record id, the locked fields dropped from its change).
    pub dropped_fields: Vec<(String, Vec<String>)>,
    /// Up to 10 changes: (record title, stage from→to or field changes).
    pub sample: Vec<(String, Value)>,
}

impl BulkProposalRow {
    /// The locked field names dropped from any record's change, each once.
    pub fn dropped_names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for name in self.dropped_fields.iter().flat_map(|(_, f)| f) {
            if !out.contains(&name.as_str()) {
                out.push(name);
            }
        }
        out
    }
}

/// `crm_bulk_update` from the app or MCP: the proposal executed at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BulkDoneRow {
    pub proposal_id: String,
    pub updated: usize,
    pub conflicts: Vec<String>,
    pub rejected: Vec<BulkRejected>,
    pub undo_token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::typed;
    use serde_json::json;

    fn save() -> SaveProposalRow {
        SaveProposalRow {
            proposal_id: "prp_1".into(),
            to_create: 2,
            already_there: 1,
            not_found: vec!["company:x".into()],
            conflict_policy: ConflictPolicy::default(),
            stage: "Propuesta".into(),
            sample_to_create: vec!["Empaques del Norte".into(), "Cartón Sur".into()],
            sample_already_there: vec!["Bolsas MX".into()],
        }
    }

    #[test]
    fn the_save_proposal_row_keeps_the_wire_field_names_and_reads_back() {
        let row = typed::row("proposal:prp_1", "Guardar", &save()).unwrap();
        let wire = serde_json::to_value(&row).unwrap();
        let mut keys: Vec<&str> = wire
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "already_there",
                "conflict_policy",
                "not_found",
                "proposal_id",
                "ref",
                "ref_label",
                "sample_already_there",
                "sample_to_create",
                "stage",
                "to_create",
            ]
        );
        assert_eq!(wire["to_create"], json!(2));
        assert_eq!(typed::read::<SaveProposalRow>(&row).unwrap(), save());
    }

    #[test]
    fn the_bulk_proposal_row_keeps_the_wire_field_names_and_reads_back() {
        let value = BulkProposalRow {
            proposal_id: "prp_2".into(),
            will_change: 3,
            unchanged: 1,
            rejected: vec![BulkRejected {
                record_id: "record:r9".into(),
                reason: "no existe".into(),
            }],
            dropped_fields: vec![
                ("record:r1".into(), vec!["rfc".into()]),
                ("record:r2".into(), vec!["rfc".into(), "monto".into()]),
            ],
            sample: vec![(
                "Cartón Sur".into(),
                json!({"stage": {"from": "a", "to": "b"}}),
            )],
        };
        let row = typed::row("proposal:prp_2", "Cambiar", &value).unwrap();
        let wire = serde_json::to_value(&row).unwrap();
        assert_eq!(
            wire["dropped_fields"][1],
            json!(["record:r2", ["rfc", "monto"]])
        );
        assert_eq!(wire["rejected"][0]["record_id"], json!("record:r9"));
        assert_eq!(wire["will_change"], json!(3));
        let back = typed::read::<BulkProposalRow>(&row).unwrap();
        assert_eq!(back, value);
        assert_eq!(back.dropped_names(), ["rfc", "monto"]);
    }
}
