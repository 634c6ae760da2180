//! CRM types: collections (pipelines) and records, their JSON shapes and the
//! validation of typed field values against a collection.

use crate::base::store::DbRow;
use luna_protocol::tool::ResultRow;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sqlx::FromRow;

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::base::stored::{self, text_enum};
use crate::base::surface::Surface;

use super::errors::{invalid, invalid_with};

/// Who writes and from where (the history's "who" and "surface").
#[derive(Debug, Clone)]
pub struct Actor {
    pub user_id: String,
    pub workspace_id: String,
    pub surface: Surface,
}

impl Actor {
    pub fn new(caller: &Caller, surface: Surface) -> Actor {
        Actor {
            user_id: caller.user_id.clone(),
            workspace_id: caller.workspace_id.clone(),
            surface,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    Text,
    Number,
    /// ISO `YYYY-MM-DD`.
    Date,
    Bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldDef {
    pub key: String,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// Set by the system (company_save, imports); tool writes to it are dropped.
    #[serde(default)]
    pub locked: bool,
}

impl FieldDef {
    pub fn new(key: &str, label: &str, kind: FieldType, locked: bool) -> FieldDef {
        FieldDef {
            key: key.into(),
            label: label.into(),
            kind,
            locked,
        }
    }
}

text_enum! {
    /// `crm_collections.status`.
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CollectionStatus {
        Active = "active",
        Archived = "archived",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collection {
    pub id: String,
    pub workspace_id: String,
    pub name: String,
    pub stages: Vec<String>,
    pub primary_field: String,
    pub fields: Vec<FieldDef>,
    pub status: CollectionStatus,
}

/// `crm_collections` as stored; [`Collection`] is it decoded.
#[derive(FromRow)]
struct StoredCollection {
    id: String,
    workspace_id: String,
    name: String,
    stages: String,
    primary_field: String,
    fields: String,
    status: String,
}

impl Collection {
    pub fn from_row(row: &DbRow) -> EngineResult<Collection> {
        let r = StoredCollection::from_row(row)?;
        Ok(Collection {
            stages: stored::json("crm_collections.stages", &r.stages)?,
            fields: stored::json("crm_collections.fields", &r.fields)?,
            status: r.status.parse()?,
            id: r.id,
            workspace_id: r.workspace_id,
            name: r.name,
            primary_field: r.primary_field,
        })
    }

    pub fn is_archived(&self) -> bool {
        self.status == CollectionStatus::Archived
    }

    /// Fails with `PROTECTED_RESOURCE` when the collection is archived.
    pub fn ensure_writable(&self) -> EngineResult<()> {
        if self.is_archived() {
            return Err(super::errors::archived(&self.name));
        }
        Ok(())
    }

    pub fn field(&self, key: &str) -> Option<&FieldDef> {
        self.fields.iter().find(|f| f.key == key)
    }

    pub fn field_keys(&self) -> Vec<String> {
        self.fields.iter().map(|f| f.key.clone()).collect()
    }

    /// Stages are validated by membership, not by transition.
    pub fn check_stage(&self, stage: &str) -> EngineResult<String> {
        match self.stages.iter().find(|s| s.as_str() == stage) {
            Some(s) => Ok(s.clone()),
            None => Err(invalid_with(
                format!("«{stage}» no es una etapa de la colección «{}».", self.name),
                "Usa una de las etapas de la colección; cualquier etapa es válida desde cualquier otra.",
                self.stages.clone(),
            )),
        }
    }

    /// Validates typed values. Returns the accepted values and the keys of locked
    /// fields that were dropped (unless `allow_locked`, for system writes).
    pub fn check_fields(
        &self,
        fields: &Map<String, Value>,
        allow_locked: bool,
    ) -> EngineResult<(Map<String, Value>, Vec<String>)> {
        let mut accepted = Map::new();
        let mut dropped = Vec::new();
        for (key, value) in fields {
            if key == "entity_id" {
                return Err(invalid(
                    "entity_id va al nivel superior del registro, no dentro de fields.",
                    "Pasa entity_id como argumento propio (por ejemplo, el RFC de la empresa).",
                ));
            }
            let Some(def) = self.field(key) else {
                return Err(invalid_with(
                    format!("La colección «{}» no tiene el campo «{key}».", self.name),
                    "Usa uno de los campos de la colección.",
                    self.field_keys(),
                ));
            };
            if def.locked && !allow_locked {
                dropped.push(key.clone());
                continue;
            }
            accepted.insert(key.clone(), check_value(def, value)?);
        }
        Ok((accepted, dropped))
    }
}

fn check_value(def: &FieldDef, value: &Value) -> EngineResult<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let ok = match def.kind {
        FieldType::Text => value.as_str().map(|s| Value::String(s.trim().to_owned())),
        FieldType::Number => value.as_f64().map(|_| value.clone()),
        FieldType::Bool => value.as_bool().map(Value::Bool),
        FieldType::Date => value
            .as_str()
            .filter(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok())
            .map(|s| Value::String(s.to_owned())),
    };
    ok.ok_or_else(|| {
        let want = match def.kind {
            FieldType::Text => "un texto",
            FieldType::Number => "un número",
            FieldType::Bool => "verdadero o falso",
            FieldType::Date => "una fecha AAAA-MM-DD",
        };
        invalid(
            format!("El campo «{}» espera {want}.", def.key),
            "Corrige el valor y vuelve a intentar.",
        )
    })
}

pub(crate) fn internal(e: impl std::fmt::Display) -> EngineError {
    EngineError::Internal(format!("crm json: {e}"))
}

/// A live or deleted record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub workspace_id: String,
    pub collection_id: String,
    pub entity_id: Option<String>,
    pub title: String,
    pub stage: String,
    pub fields: Map<String, Value>,
    pub version: i64,
    pub deleted_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// The content an undo restores: everything but the version and timestamps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordState {
    pub entity_id: Option<String>,
    pub title: String,
    pub stage: String,
    pub fields: Map<String, Value>,
}

/// The record key that holds the people filed onto it (`people_file`): a list of
/// `{ref, nombre, correo, puesto, empresa}`. Written only by the system, so no
/// collection may define a field with this key.
pub const PEOPLE_FIELD: &str = "personas";

pub const RECORD_COLS: &str = "id, workspace_id, collection_id, entity_id, title, stage, fields, version, deleted_at, created_at, updated_at";

/// `crm_records` as stored (`RECORD_COLS`); [`Record`] is it decoded.
#[derive(FromRow)]
struct StoredRecord {
    id: String,
    workspace_id: String,
    collection_id: String,
    entity_id: Option<String>,
    title: String,
    stage: String,
    fields: String,
    version: i64,
    deleted_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

impl Record {
    pub fn from_row(row: &DbRow) -> EngineResult<Record> {
        let r = StoredRecord::from_row(row)?;
        Ok(Record {
            fields: stored::json("crm_records.fields", &r.fields)?,
            id: r.id,
            workspace_id: r.workspace_id,
            collection_id: r.collection_id,
            entity_id: r.entity_id,
            title: r.title,
            stage: r.stage,
            version: r.version,
            deleted_at: r.deleted_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }

    pub fn state(&self) -> RecordState {
        RecordState {
            entity_id: self.entity_id.clone(),
            title: self.title.clone(),
            stage: self.stage.clone(),
            fields: self.fields.clone(),
        }
    }

    pub fn ref_(&self) -> String {
        format!("record:{}", self.id)
    }

    /// The envelope row: `ref`, `ref_label`, the top-level facts and the projected
    /// fields (all when `projection` is empty).
    pub fn to_row(&self, projection: &[String]) -> ResultRow {
        let fields: Map<String, Value> = if projection.is_empty() {
            self.fields.clone()
        } else {
            self.fields
                .iter()
                .filter(|(k, _)| projection.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        ResultRow::new(self.ref_(), self.title.clone())
            .with("collection_id", &self.collection_id)
            .with("entity_id", &self.entity_id)
            .with("stage", &self.stage)
            .with("version", self.version)
            .with("fields", fields)
            .with("updated_at", ms_to_iso(self.updated_at))
    }
}

/// Unix milliseconds as an RFC 3339 string (UTC).
pub fn ms_to_iso(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.to_rfc3339())
}

/// Strips the `record:` prefix of a record ref; a bare id passes through.
pub fn record_id(reference: &str) -> &str {
    reference.strip_prefix("record:").unwrap_or(reference)
}

/// Strips the `collection:` prefix; a bare id passes through.
pub fn collection_id(reference: &str) -> &str {
    reference.strip_prefix("collection:").unwrap_or(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_status_round_trips_and_unknown_text_is_an_error() {
        stored::assert_round_trips::<CollectionStatus>();
    }
}
