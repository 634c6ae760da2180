//! The CRM family in the registry: `collection_query` and `crm_record` (public over
//! MCP) and Luna's `crm_collections`, `crm_save_companies` and `crm_bulk_update`
//! (level 1: from Luna they preview and return a `proposal_id`; from the app they run).

use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::accounts::Caller;
use crate::base::error::EngineResult;
use crate::crm::{BulkExecution, SaveExecution, UndoOutcome};
use crate::registry::typed;
use crate::registry::{
    CostClass, Family, Level, Registry, SideEffect, Stage, Surface, ToolCtx, ToolDef, ToolOutput,
};

use crate::crm::collections;
use crate::crm::errors::invalid;
use crate::crm::model::{record_id, Actor};
use crate::crm::proposals::{self, BulkChange, ConflictPolicy};
use crate::crm::query::{QueryOp, QueryRequest, RecordFilter, RecordSort, DEFAULT_LIMIT};
use crate::crm::records::{self, NewRecord, Patch};

mod record;
pub mod rows;

use record::crm_record;
use rows::{BulkDoneRow, BulkProposalRow, SaveDoneRow, SaveProposalRow};

/// The invariants every CRM description states (CONTRACT §5, seed 004 §4.4).
const INVARIANTS: &str = "Reglas del CRM: entity_id va al nivel superior, nunca dentro de fields; \
las etapas se validan por pertenencia, no por transición (cualquier etapa de la colección vale); \
una colección archivada es de solo lectura (PROTECTED_RESOURCE); para contar usa op aggregate, \
nunca el tamaño de una página; una escritura a un campo locked se descarta y aparece en dropped_fields; \
toda escritura de nivel 0 devuelve undo_token; si el registro cambió desde que lo leíste, VERSION_CONFLICT.";

/// Most records one `crm_record` call may write (op bulk). It writes at level 0, with
/// no card; a change to more records is a bulk change a person confirms
/// (`crm_bulk_update`, the «cambios masivos» card).
pub const RECORD_BULK_MAX: usize = 5;

// ---------------------------------------------------------------- arguments

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionQueryArgs {
    /// `collection:…` de crm_collections.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub collection_id: String,
    pub op: QueryOp,
    #[serde(default)]
    pub filter: Option<RecordFilter>,
    #[serde(default)]
    pub sort: Option<RecordSort>,
    /// Rows per page, 1..=100 (default 25). Never a way to count: use aggregate.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// Cursor opaco de la página anterior de la misma consulta.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub cursor: Option<String>,
    /// Field keys to return; empty = all fields.
    #[serde(default)]
    #[schemars(length(max = 50), inner(length(max = crate::base::bounds::NAME_MAX)))]
    pub projection: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordOp {
    Add,
    Update,
    History,
    Bulk,
    ScheduleActivity,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrmRecordArgs {
    pub op: RecordOp,
    /// add, bulk: la colección.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub collection_id: Option<String>,
    /// update, history, schedule_activity: `record:…`.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub record_id: Option<String>,
    /// add: la clave de la empresa (RFC), en el nivel superior.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub entity_id: Option<String>,
    /// add, update: cualquier etapa de la colección.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub stage: Option<String>,
    /// add, update: typed field values; locked ones are dropped.
    #[serde(default)]
    #[schemars(schema_with = "crate::base::bounds::opt_field_values")]
    pub fields: Option<Map<String, Value>>,
    /// update: la versión que leíste.
    #[serde(default)]
    pub version: Option<i64>,
    /// bulk: hasta 5 cambios, todos o ninguno; para más registros usa crm_bulk_update.
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub changes: Option<Vec<BulkChange>>,
    /// schedule_activity: AAAA-MM-DD o ISO 8601.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::DATE_MAX))]
    pub due_at: Option<String>,
    /// schedule_activity: why to follow up.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::TEXT_MAX))]
    pub reason: Option<String>,
    /// history: entries, 1..=50 (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrmCollectionsArgs {
    /// Parte del nombre de la colección.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub query: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceName {
    /// Las empresas seleccionadas en el tablero.
    Selection,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SaveSource {
    Named(SourceName),
    /// `company:…` refs.
    Refs(
        #[schemars(length(max = 500), inner(length(max = crate::base::bounds::ID_MAX)))]
        Vec<String>,
    ),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrmSaveCompaniesArgs {
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub collection_id: String,
    /// "selection" o una lista de refs `company:…` (hasta 500).
    pub source: SaveSource,
    pub conflict_policy: ConflictPolicy,
    /// Etapa en la que se crean los registros nuevos (una de las etapas de la
    /// colección); por omisión, la primera.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub stage: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrmBulkUpdateArgs {
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub collection_id: String,
    /// Hasta 1000 cambios.
    #[schemars(length(min = 1, max = 1000))]
    pub changes: Vec<BulkChange>,
}

// ---------------------------------------------------------------- registration

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<CollectionQueryArgs>("collection_query", Family::Crm)
            .label("Consultando el CRM")
            .description(format!(
                "Úsala cuando necesites leer los registros de una colección del CRM (un pipeline de ventas): \
                 op query trae filas paginadas con cursor; op aggregate cuenta exacto, en total y por etapa. \
                 El campo status es la única señal de completitud: continue significa que hay más páginas \
                 (pide la siguiente con cursor), ok que ya está todo. NO la uses para contar con el tamaño de \
                 página (usa op aggregate), ni para escribir (usa crm_record), ni para buscar Proveedores \
                 (usa market_search). {INVARIANTS}"
            ))
            .example(
                "¿Cuántos registros hay en cada etapa de Prospección?",
                json!({"collection_id": "collection:col_demo", "op": "aggregate"}),
            )
            .cost(CostClass::Read)
            .budget(4_500)
            .citations(&["ref", "stage", "entity_id", "total", "by_stage"])
            .stage(Stage::ConListaGuardada, 10)
            .stage(Stage::ConBorrador, 60)
            .stage(Stage::DecisionPendiente, 50)
            .handler(collection_query),
    );
    reg.add(
        ToolDef::new::<CrmRecordArgs>("crm_record", Family::Crm)
            .label("Actualizando el CRM")
            .description(format!(
                "Úsala cuando necesites escribir en el CRM: op add da de alta un registro, update cambia \
                 campos o etapa (con la version que leíste), bulk aplica hasta 5 cambios juntos, \
                 schedule_activity agenda un seguimiento con fecha y motivo, history muestra la línea de \
                 tiempo (quién, desde dónde, qué cambió). NO la uses para leer ni contar registros \
                 (usa collection_query), ni para guardar empresas desde una búsqueda (usa company_save), \
                 ni para cambiar más de 5 registros a la vez (usa crm_bulk_update). {INVARIANTS}"
            ))
            .example(
                "Pasa a Contactado el registro que leí en la versión 3",
                json!({"op": "update", "record_id": "record:rec_demo", "version": 3, "stage": "Contactado"}),
            )
            .side_effect(SideEffect::Write)
            .idempotent(false)
            .budget(3_000)
            .citations(&["ref", "stage", "version", "undo_token", "dropped_fields"])
            .stage(Stage::ConListaGuardada, 20)
            .stage(Stage::ConBorrador, 130)
            .handler(crm_record),
    );
    reg.add(
        ToolDef::new::<CrmCollectionsArgs>("crm_collections", Family::Crm)
            .label("Revisando tus colecciones del CRM")
            .description(
                "Úsala cuando necesites saber qué colecciones activas del CRM tiene el equipo, con sus \
                 etapas en orden, su campo principal y sus campos (los locked los llena el sistema). \
                 NO la uses para leer registros (usa collection_query) ni para crear o archivar colecciones: \
                 configurar un pipeline lo hace una persona en la aplicación (usa la página del CRM).",
            )
            .example("¿En qué colección guardo estas empresas?", json!({}))
            .budget(3_000)
            .surfaces(&[Surface::Luna, Surface::Ui])
            // Visible while searching too: Luna looks up where it may save
            // in the same step as the first search.
            .citations(&["ref", "stages", "primary_field"])
            .stage(Stage::SinCriterio, 80)
            .stage(Stage::Buscando, 80)
            .stage(Stage::ConSeleccion, 40)
            .stage(Stage::ConListaGuardada, 30)
            .stage(Stage::ConBorrador, 140)
            // «guárdalas», «súbelas al pipeline» while a card is pending or a draft open.
            .cues(&["guard", "crm", "pipeline", "embudo", "save"])
            .handler(crm_collections),
    );
    reg.add(
        ToolDef::new::<CrmSaveCompaniesArgs>("crm_save_companies", Family::Crm)
            .label("Preparando el guardado en el CRM")
            .description(format!(
                "Úsala cuando la persona quiera guardar varias empresas (la selección del tablero o una \
                 lista de refs company:…) como registros de una colección del CRM. Desde el chat no escribe \
                 nada: muestra cuántas se crearían y cuáles ya están, y devuelve proposal_id para la tarjeta \
                 de un toque; al confirmar se crean sin duplicar (confirmar dos veces no crea nada nuevo). \
                 conflict_policy skip deja intactas las que ya están; refresh actualiza sus datos de empresa. \
                 stage pone los registros nuevos en esa etapa de la colección (por omisión, la primera). \
                 NO la uses para una sola empresa encontrada con company_search (usa company_save) ni para \
                 cambiar etapas de registros ya guardados (usa crm_record). {INVARIANTS}"
            ))
            .example(
                "Guarda la selección en Prospección",
                json!({"collection_id": "collection:col_demo", "source": "selection", "conflict_policy": "skip"}),
            )
            .level(Level::L1)
            .side_effect(SideEffect::Write)
            .idempotent(false)
            .budget(3_000)
            .surfaces(&[Surface::Luna, Surface::Ui])
            .citations(&["ref", "proposal_id", "to_create", "already_there"])
            .stage(Stage::ConSeleccion, 30)
            .stage(Stage::ConListaGuardada, 40)
            .stage(Stage::ConBorrador, 150)
            // «guárdalas», «súbelas al pipeline» while a card is pending or a draft open.
            .cues(&["guard", "crm", "pipeline", "embudo", "save"])
            .handler(crm_save_companies),
    );
    reg.add(
        ToolDef::new::<CrmBulkUpdateArgs>("crm_bulk_update", Family::Crm)
            .label("Preparando un cambio masivo en el CRM")
            .description(format!(
                "Úsala cuando haya que cambiar muchos registros de una colección a la vez (hasta 1000: \
                 etapas o campos). Desde el chat es una prueba en seco: dice cuántos cambiarían, cuáles se \
                 rechazan y por qué, y devuelve proposal_id para la tarjeta de un toque; al confirmar, los \
                 registros que cambiaron desde la vista previa se dejan intactos y se reportan. NO la uses \
                 para uno o pocos registros (usa crm_record) ni para dar de alta empresas \
                 (usa crm_save_companies). {INVARIANTS}"
            ))
            .example(
                "Pasa estos dos registros a Perdido",
                json!({"collection_id": "collection:col_demo", "changes": [
                    {"record_id": "record:rec_a", "stage": "Perdido"},
                    {"record_id": "record:rec_b", "stage": "Perdido"}
                ]}),
            )
            .level(Level::L1)
            .side_effect(SideEffect::Write)
            .idempotent(false)
            .budget(3_000)
            .surfaces(&[Surface::Luna, Surface::Ui])
            .citations(&["ref", "proposal_id", "will_change"])
            .stage(Stage::ConListaGuardada, 90)
            .stage(Stage::ConBorrador, 90)
            .handler(crm_bulk_update),
    );
}

// ---------------------------------------------------------------- handlers

async fn collection_query(ctx: ToolCtx, args: CollectionQueryArgs) -> EngineResult<ToolOutput> {
    let req = QueryRequest {
        collection_id: args.collection_id,
        op: args.op,
        filter: args.filter.unwrap_or_default(),
        sort: args.sort.unwrap_or_default(),
        limit: args.limit.unwrap_or(DEFAULT_LIMIT),
        cursor: args.cursor,
        projection: args.projection.unwrap_or_default(),
        budget: ctx.budget,
    };
    let mut env = ctx.engine.crm.query(&ctx.caller.workspace_id, &req).await?;
    if env.cursor.is_some() {
        env.next_action = Some(
            "Hay más registros: pide la siguiente página con el mismo filtro y este cursor; para contar usa op aggregate."
                .into(),
        );
    }
    Ok(env.into())
}

async fn crm_collections(ctx: ToolCtx, args: CrmCollectionsArgs) -> EngineResult<ToolOutput> {
    let store = ctx.engine.crm.store();
    let list = collections::list(store, &ctx.caller.workspace_id, args.query.as_deref()).await?;
    let mut rows = Vec::new();
    for c in list {
        let n: i64 = sqlx::query_scalar(
            "select count(*) from crm_records where collection_id = $1 and workspace_id = $2 and deleted_at is null",
        )
        .bind(&c.id)
        .bind(&ctx.caller.workspace_id)
        .fetch_one(store.pool())
        .await?;
        rows.push(
            ResultRow::new(format!("collection:{}", c.id), c.name.clone())
                .with("stages", &c.stages)
                .with("primary_field", &c.primary_field)
                .with("fields", &c.fields)
                .with("records", n),
        );
    }
    Ok(Envelope::rows(rows).into())
}

async fn crm_save_companies(ctx: ToolCtx, args: CrmSaveCompaniesArgs) -> EngineResult<ToolOutput> {
    let refs = match args.source {
        SaveSource::Refs(r) => r,
        SaveSource::Named(SourceName::Selection) => {
            // The board of the calling work session is the selection; outside a
            // session, an installed `SelectionSource` may answer instead.
            let from_session = match &ctx.session_id {
                Some(id) => Some(
                    ctx.engine
                        .sessions
                        .snapshot_at_latest(&ctx.caller, id)
                        .await?
                        .view
                        .board
                        .selection
                        .into_iter()
                        .map(|s| s.reference)
                        .collect::<Vec<_>>(),
                ),
                None => ctx.engine.crm.selection_refs(&ctx.caller).await?,
            };
            match from_session {
                Some(r) if !r.is_empty() => r,
                _ => {
                    return Err(invalid(
                        "No hay empresas seleccionadas en el tablero.",
                        "Selecciona empresas primero o pasa sus refs company:… en source.",
                    ))
                }
            }
        }
    };
    let actor = Actor::new(&ctx.caller, ctx.surface);
    let store = ctx.engine.crm.store();
    let preview = proposals::preview_save(
        store,
        &actor,
        &args.collection_id,
        &refs,
        args.conflict_policy,
        args.stage.as_deref(),
    )
    .await?;
    let label = format!(
        "Guardar {} empresas en «{}»",
        preview.to_create.len(),
        preview.collection_name
    );
    if ctx.is_preview() {
        let value = SaveProposalRow {
            proposal_id: preview.proposal_id.clone(),
            to_create: preview.to_create.len(),
            already_there: preview.already_there.len(),
            not_found: preview.not_found.clone(),
            conflict_policy: preview.policy,
            stage: preview.stage.clone(),
            sample_to_create: preview
                .to_create
                .iter()
                .take(rows::SAMPLE)
                .map(|i| i.name.clone())
                .collect(),
            sample_already_there: preview
                .already_there
                .iter()
                .take(rows::SAMPLE)
                .map(|(_, n, _)| n.clone())
                .collect(),
        };
        let row = typed::row(format!("proposal:{}", preview.proposal_id), label, &value)?;
        let mut env = Envelope::rows(vec![row]);
        env.next_action = Some("Nada se guardó todavía: la persona confirma en la tarjeta.".into());
        return Ok(env.into());
    }
    let done = proposals::execute_save(store, &ctx.caller, &preview.proposal_id).await?;
    let value = SaveDoneRow {
        proposal_id: done.proposal_id.clone(),
        created: done.created.len(),
        already_there: done.already_there.len(),
        refreshed: done.refreshed.len(),
        not_found: preview.not_found,
    };
    let row = typed::row(format!("proposal:{}", preview.proposal_id), label, &value)?;
    Ok(Envelope::rows(vec![row]).into())
}

async fn crm_bulk_update(ctx: ToolCtx, args: CrmBulkUpdateArgs) -> EngineResult<ToolOutput> {
    let actor = Actor::new(&ctx.caller, ctx.surface);
    let store = ctx.engine.crm.store();
    let preview =
        proposals::preview_bulk(store, &actor, &args.collection_id, &args.changes).await?;
    let label = format!(
        "Cambiar {} registros de «{}»",
        preview.will_change, preview.collection_name
    );
    if ctx.is_preview() {
        let value = BulkProposalRow {
            proposal_id: preview.proposal_id.clone(),
            will_change: preview.will_change,
            unchanged: preview.unchanged,
            rejected: preview.rejected.clone(),
            dropped_fields: preview.dropped_fields.clone(),
            sample: preview.sample.clone(),
        };
        let row = typed::row(format!("proposal:{}", preview.proposal_id), label, &value)?;
        let mut env = Envelope::rows(vec![row]);
        env.next_action = Some("Nada cambió todavía: la persona confirma en la tarjeta.".into());
        return Ok(env.into());
    }
    let done = proposals::execute_bulk(store, &ctx.caller, &preview.proposal_id).await?;
    let value = BulkDoneRow {
        proposal_id: done.proposal_id.clone(),
        updated: done.updated.len(),
        conflicts: done.conflicts.clone(),
        rejected: preview.rejected,
        undo_token: done.undo_token.clone(),
    };
    let row = typed::row(format!("proposal:{}", preview.proposal_id), label, &value)?;
    Ok(Envelope::rows(vec![row]).into())
}

// The UI's and the cards' CRM actions outside the pipeline, each with its telemetry row.

/// `tools::crm::undo(engine, caller, token)` for the UI's "deshacer" (surface `ui`).
pub async fn undo(
    engine: &crate::Engine,
    caller: &Caller,
    undo_token: &str,
) -> EngineResult<UndoOutcome> {
    let started = std::time::Instant::now();
    let res = engine.crm.undo(caller, Surface::Ui, undo_token).await;
    record_telemetry(engine, caller, "crm_undo", &res, started).await;
    res
}

/// Executes a save proposal from the decision card, with its telemetry row.
pub async fn execute_save_proposal(
    engine: &crate::Engine,
    caller: &Caller,
    proposal_id: &str,
) -> EngineResult<SaveExecution> {
    let started = std::time::Instant::now();
    let res = engine.crm.execute_save_proposal(caller, proposal_id).await;
    record_telemetry(engine, caller, "crm_save_companies", &res, started).await;
    res
}

/// Executes a bulk-update proposal from the decision card, with its telemetry row.
pub async fn execute_bulk_proposal(
    engine: &crate::Engine,
    caller: &Caller,
    proposal_id: &str,
) -> EngineResult<BulkExecution> {
    let started = std::time::Instant::now();
    let res = engine.crm.execute_bulk_proposal(caller, proposal_id).await;
    record_telemetry(engine, caller, "crm_bulk_update", &res, started).await;
    res
}

async fn record_telemetry<T>(
    engine: &crate::Engine,
    caller: &Caller,
    tool: &str,
    res: &EngineResult<T>,
    started: std::time::Instant,
) {
    let code = res.as_ref().err().map(|e| {
        serde_json::to_value(e.code())
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    });
    crate::registry::telemetry::record(
        &engine.store,
        &crate::registry::telemetry::ToolUsed {
            workspace_id: &caller.workspace_id,
            user_id: &caller.user_id,
            tool,
            ok: res.is_ok(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            surface: Surface::Ui.as_str(),
            error_code: code.as_deref(),
        },
    )
    .await;
}
