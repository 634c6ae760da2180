//! `collection_query`: a paged read of a collection's records with sealed cursors
//! (bound to collection + filter + sort) and an exact `aggregate` (counts per stage).
//! `status` is the only completeness signal: `continue` with a cursor while rows
//! remain. A page is trimmed to the output budget *before* the cursor is sealed, so
//! no row is ever skipped.

use luna_protocol::tool::{Envelope, ResultRow, ResultStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::base::catalog::text::fold;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Backend;
use crate::market::cursor;

use super::collections;
use super::errors::invalid_with;
use super::model::{Collection, Record, RECORD_COLS};
use super::Crm;

/// The `collection_query` aggregate row: how many records, and how many per stage
/// (every stage of the collection, in its order, then any other found). The board's
/// saved-list counts decode the same struct (`registry::typed::first`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectionTotals {
    pub total: i64,
    pub by_stage: Vec<StageTotal>,
}

/// One stage's record count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTotal {
    pub stage: String,
    pub count: i64,
}

/// Most rows in one page.
pub const MAX_LIMIT: u32 = 100;
pub const DEFAULT_LIMIT: u32 = 25;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryOp {
    /// Rows, paged.
    Query,
    /// Exact counts: total and per stage.
    Aggregate,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordSort {
    #[default]
    UpdatedDesc,
    UpdatedAsc,
    CreatedDesc,
    CreatedAsc,
    NameAsc,
    /// Pipeline order (first stage first).
    Stage,
}

/// Qué registros: deben cumplirse todas las condiciones.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFilter {
    /// Cualquiera de estas etapas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50), inner(length(max = crate::base::bounds::NAME_MAX)))]
    pub stage: Vec<String>,
    /// La clave de la empresa (RFC o id del directorio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub entity_id: Option<String>,
    /// Texto en el nombre del registro (acentos y mayúsculas no importan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub query: Option<String>,
    /// Exact field values, e.g. {"estado": "Jalisco"}.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(schema_with = "crate::base::bounds::field_values")]
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub struct QueryRequest {
    pub collection_id: String,
    pub op: QueryOp,
    pub filter: RecordFilter,
    pub sort: RecordSort,
    pub limit: u32,
    pub cursor: Option<String>,
    pub projection: Vec<String>,
    /// Characters the page may take (the call's output budget).
    pub budget: usize,
}

enum Bind {
    Text(String),
    Num(f64),
    Int(i64),
}

struct Where {
    sql: String,
    binds: Vec<Bind>,
}

fn build_where(c: &Collection, f: &RecordFilter, backend: Backend) -> EngineResult<Where> {
    let mut sql = String::from("workspace_id = ? and collection_id = ? and deleted_at is null");
    let mut binds = vec![Bind::Text(c.workspace_id.clone()), Bind::Text(c.id.clone())];
    if !f.stage.is_empty() {
        for s in &f.stage {
            c.check_stage(s)?;
        }
        sql.push_str(&format!(
            " and stage in ({})",
            crate::base::store::marks(f.stage.len())
        ));
        binds.extend(f.stage.iter().cloned().map(Bind::Text));
    }
    if let Some(e) = &f.entity_id {
        sql.push_str(" and entity_id = ?");
        binds.push(Bind::Text(e.trim().to_owned()));
    }
    if let Some(q) = f.query.as_deref().map(fold).filter(|q| !q.is_empty()) {
        sql.push_str(" and title_folded like ?");
        sql.push_str(crate::base::store::LIKE_ESCAPE);
        binds.push(Bind::Text(crate::base::store::like_contains(&q)));
    }
    for (k, v) in &f.fields {
        if c.field(k).is_none() {
            return Err(invalid_with(
                format!("La colección «{}» no tiene el campo «{k}».", c.name),
                "Filtra por uno de los campos de la colección.",
                c.field_keys(),
            ));
        }
        match backend {
            Backend::Sqlite => {
                sql.push_str(" and json_extract(fields, ?) = ?");
                binds.push(Bind::Text(format!("$.\"{k}\"")));
                binds.push(match v {
                    Value::Bool(b) => Bind::Int(i64::from(*b)),
                    Value::Number(n) => Bind::Num(n.as_f64().unwrap_or_default()),
                    Value::String(s) => Bind::Text(s.clone()),
                    other => Bind::Text(other.to_string()),
                });
            }
            // JSON equality: 5 equals 5.0, a string never equals a number.
            Backend::Postgres => {
                sql.push_str(" and cast(fields as jsonb) -> ? = cast(? as jsonb)");
                binds.push(Bind::Text(k.clone()));
                binds.push(Bind::Text(v.to_string()));
            }
        }
    }
    Ok(Where { sql, binds })
}

fn bind_all<'q>(
    mut q: sqlx::query::Query<'q, crate::base::store::Db, sqlx::any::AnyArguments<'q>>,
    binds: &'q [Bind],
) -> sqlx::query::Query<'q, crate::base::store::Db, sqlx::any::AnyArguments<'q>> {
    for b in binds {
        q = match b {
            Bind::Text(s) => q.bind(s.as_str()),
            Bind::Num(n) => q.bind(*n),
            Bind::Int(i) => q.bind(*i),
        };
    }
    q
}

fn order_by(c: &Collection, sort: RecordSort, backend: Backend) -> (String, Vec<Bind>) {
    // Records saved together (one millisecond) keep the order they were saved in.
    let made = backend.insertion_order();
    match sort {
        RecordSort::UpdatedDesc => ("updated_at desc, id".into(), vec![]),
        RecordSort::UpdatedAsc => ("updated_at asc, id".into(), vec![]),
        RecordSort::CreatedDesc => (format!("created_at desc, {made} desc"), vec![]),
        RecordSort::CreatedAsc => (format!("created_at asc, {made} asc"), vec![]),
        RecordSort::NameAsc => ("title_folded asc, id".into(), vec![]),
        RecordSort::Stage => {
            let whens: String = c.stages.iter().map(|_| " when ? then ?").collect();
            let mut binds = Vec::new();
            for (i, s) in c.stages.iter().enumerate() {
                binds.push(Bind::Text(s.clone()));
                binds.push(Bind::Int(i64::try_from(i).unwrap_or(i64::MAX)));
            }
            (
                format!("case stage{whens} else 999 end, updated_at desc, id"),
                binds,
            )
        }
    }
}

fn query_hash(req: &QueryRequest) -> String {
    let canonical = serde_json::json!({
        "c": req.collection_id,
        "f": req.filter,
        "s": req.sort,
    });
    cursor::query_hash(&canonical.to_string())
}

impl Crm {
    /// Runs `collection_query` for a workspace.
    pub async fn query(&self, workspace_id: &str, req: &QueryRequest) -> EngineResult<Envelope> {
        let collection =
            collections::get_in(self.store(), workspace_id, &req.collection_id).await?;
        let w = build_where(&collection, &req.filter, self.store().backend())?;
        match req.op {
            QueryOp::Aggregate => self.aggregate(&collection, &w).await,
            QueryOp::Query => self.page(&collection, &w, req).await,
        }
    }

    async fn aggregate(&self, c: &Collection, w: &Where) -> EngineResult<Envelope> {
        let sql = format!(
            "select stage, count(*) as n from crm_records where {} group by stage",
            w.sql
        );
        let sql = crate::base::store::numbered(&sql);
        let rows = bind_all(sqlx::query(&sql), &w.binds)
            .fetch_all(self.store().pool())
            .await?;
        let mut counts: Vec<(String, i64)> = c.stages.iter().map(|s| (s.clone(), 0)).collect();
        let mut total = 0;
        for r in rows {
            let (stage, n): (String, i64) = sqlx::FromRow::from_row(&r)?;
            total += n;
            match counts.iter_mut().find(|(s, _)| *s == stage) {
                Some(slot) => slot.1 += n,
                None => counts.push((stage, n)),
            }
        }
        let totals = CollectionTotals {
            total,
            by_stage: counts
                .into_iter()
                .map(|(stage, count)| StageTotal { stage, count })
                .collect(),
        };
        let mut row = ResultRow::new(format!("collection:{}", c.id), c.name.clone());
        match serde_json::to_value(&totals).map_err(EngineError::internal)? {
            Value::Object(fields) => row.fields = fields,
            _ => return Err(EngineError::internal("collection totals are not an object")),
        }
        Ok(Envelope::rows(vec![row]))
    }

    async fn page(&self, c: &Collection, w: &Where, req: &QueryRequest) -> EngineResult<Envelope> {
        for p in &req.projection {
            if c.field(p).is_none() {
                return Err(invalid_with(
                    format!("La colección «{}» no tiene el campo «{p}».", c.name),
                    "Proyecta solo campos de la colección.",
                    c.field_keys(),
                ));
            }
        }
        let secret = self.cursor_secret().await?;
        let hash = query_hash(req);
        let now_s = now_ms() / 1000;
        let offset = match &req.cursor {
            Some(token) => cursor::open(secret, token, "crm", &hash, now_s)?,
            None => 0,
        };
        let limit = req.limit.clamp(1, MAX_LIMIT);
        let (order, order_binds) = order_by(c, req.sort, self.store().backend());
        let sql = format!(
            "select {RECORD_COLS} from crm_records where {} order by {order} limit ? offset ?",
            w.sql
        );
        let sql = crate::base::store::numbered(&sql);
        let mut q = bind_all(sqlx::query(&sql), &w.binds);
        q = bind_all(q, &order_binds);
        let rows = q
            .bind(i64::from(limit) + 1)
            .bind(i64::try_from(offset).unwrap_or(i64::MAX))
            .fetch_all(self.store().pool())
            .await?;
        let mut has_more = rows.len() > limit as usize;
        // Fit whole rows into the budget before sealing the cursor.
        const OVERHEAD: usize = 700;
        let mut used = OVERHEAD;
        let mut out = Vec::new();
        for r in rows.iter().take(limit as usize) {
            let row = Record::from_row(r)?.to_row(&req.projection);
            let size = serde_json::to_string(&row)
                .map(|s| s.chars().count())
                .unwrap_or(usize::MAX);
            if !out.is_empty() && used + size > req.budget {
                has_more = true;
                break;
            }
            used += size + 1;
            out.push(row);
        }
        let next = offset + out.len() as u64;
        let mut env = Envelope::rows(out);
        env.has_more = has_more;
        if has_more {
            env.status = ResultStatus::Continue;
            env.cursor = Some(cursor::seal(secret, "crm", &hash, next, now_s)?);
        }
        Ok(env)
    }
}
