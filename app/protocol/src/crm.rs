//! The saved collection as the board shows it (CONTRACT §13: Tablero by stage or Tabla),
//! the result of moving a card between stages, and the receipt of "deshacer".

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

/// A CRM collection with its stages in order and its live records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct CollectionBoard {
    pub collection_id: String,
    pub name: String,
    pub stages: Vec<String>,
    /// The table's extra columns (the collection's fields, in order).
    #[serde(default)]
    pub columns: Vec<Column>,
    #[serde(default)]
    pub records: Vec<BoardRecord>,
    /// More records exist than were read.
    #[serde(default)]
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Column {
    pub key: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct BoardRecord {
    /// `record:<id>`.
    pub record_ref: String,
    pub title: String,
    pub stage: String,
    /// The version read (moves send it back: optimistic concurrency).
    pub version: i64,
    /// The company behind the record (`company:<id>`), when known, for the drawer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_ref: Option<String>,
    /// Field values as display text, in the order of `columns` (empty when unset).
    #[serde(default)]
    pub values: Vec<String>,
    /// Unix ms of the last change.
    pub updated_at: i64,
}

impl CollectionBoard {
    /// The records of one stage, in the board's order.
    pub fn in_stage<'a>(&'a self, stage: &'a str) -> impl Iterator<Item = &'a BoardRecord> + 'a {
        self.records.iter().filter(move |r| r.stage == stage)
    }
}

/// A card moved to another stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Moved {
    pub record_ref: String,
    pub stage: String,
    pub version: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_token: Option<String>,
}

/// What "deshacer" put back, in one Spanish sentence plus the counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct UndoReceipt {
    pub restored: u32,
    pub removed: u32,
    pub cancelled: u32,
    pub summary: String,
}

/// How the board sorts the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub enum SortKey {
    Title,
    Stage,
    Updated,
    /// A column of `columns`, by index.
    Column(usize),
}

/// Sorts records for the table; stages sort in the collection's order, text folds
/// case, ties keep the title order. `descending` reverses.
pub fn sort_records(board: &CollectionBoard, key: SortKey, descending: bool) -> Vec<BoardRecord> {
    let stage_pos = |s: &str| {
        board
            .stages
            .iter()
            .position(|x| x == s)
            .unwrap_or(usize::MAX)
    };
    let mut out = board.records.clone();
    out.sort_by(|a, b| {
        let primary = match key {
            SortKey::Title => a.title.to_lowercase().cmp(&b.title.to_lowercase()),
            SortKey::Stage => stage_pos(&a.stage).cmp(&stage_pos(&b.stage)),
            SortKey::Updated => a.updated_at.cmp(&b.updated_at),
            SortKey::Column(i) => compare_values(a.values.get(i), b.values.get(i)),
        };
        let primary = if descending {
            primary.reverse()
        } else {
            primary
        };
        primary.then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
    });
    out
}

/// Numbers compare as numbers, text as folded text; empty values go last.
fn compare_values(a: Option<&String>, b: Option<&String>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let a = a.map(String::as_str).unwrap_or("");
    let b = b.map(String::as_str).unwrap_or("");
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let num = |s: &str| s.replace([',', '$'], "").trim().parse::<f64>().ok();
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => a.to_lowercase().cmp(&b.to_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(title: &str, stage: &str, value: &str, at: i64) -> BoardRecord {
        BoardRecord {
            record_ref: format!("record:{title}"),
            title: title.into(),
            stage: stage.into(),
            version: 1,
            company_ref: None,
            values: vec![value.into()],
            updated_at: at,
        }
    }

    fn board() -> CollectionBoard {
        CollectionBoard {
            collection_id: "c".into(),
            name: "Prospección".into(),
            stages: vec!["Nuevo".into(), "Contactado".into(), "Ganado".into()],
            columns: vec![Column {
                key: "monto".into(),
                label: "Monto".into(),
            }],
            records: vec![
                rec("beta", "Ganado", "1,200", 3),
                rec("Alfa", "Contactado", "900", 1),
                rec("gama", "Nuevo", "", 2),
            ],
            truncated: false,
        }
    }

    fn titles(v: &[BoardRecord]) -> Vec<&str> {
        v.iter().map(|r| r.title.as_str()).collect()
    }

    #[test]
    fn the_table_sorts_by_stage_order_title_date_and_numeric_columns() {
        let b = board();
        assert_eq!(
            titles(&sort_records(&b, SortKey::Stage, false)),
            ["gama", "Alfa", "beta"]
        );
        assert_eq!(
            titles(&sort_records(&b, SortKey::Title, false)),
            ["Alfa", "beta", "gama"]
        );
        assert_eq!(
            titles(&sort_records(&b, SortKey::Updated, true)),
            ["beta", "gama", "Alfa"]
        );
        // 900 < 1,200 as numbers; the empty value goes last.
        assert_eq!(
            titles(&sort_records(&b, SortKey::Column(0), false)),
            ["Alfa", "beta", "gama"]
        );
    }

    #[test]
    fn the_kanban_groups_records_by_stage() {
        let b = board();
        assert_eq!(b.in_stage("Contactado").count(), 1);
        assert_eq!(b.in_stage("Perdido").count(), 0);
    }
}
