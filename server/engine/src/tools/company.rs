//! The Empresas family's directory tools: `company_search` (the Empresas directory,
//! not Proveedores) and `company_save` (one company into a CRM collection, keyed by a
//! `claim_token` so two saves never duplicate).

use luna_protocol::tool::{Envelope, ResultRow, ResultStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::base::catalog::states::{State, StateContext};
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Scope, Store};
use crate::market::cursor;
use crate::registry::{
    CostClass, Family, Registry, SideEffect, Stage, ToolCtx, ToolDef, ToolOutput,
};

use crate::crm::collections;
use crate::crm::directory::{self, claim_token, DirectoryQuery};
use crate::crm::errors::invalid;
use crate::crm::model::{Actor, Record};
use crate::crm::proposals::company_fields;
use crate::crm::records;
use crate::crm::undo;

pub const MAX_SEARCH_LIMIT: u32 = 25;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanySearchArgs {
    /// Parte del nombre de la empresa (acentos y mayúsculas no importan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub query: Option<String>,
    /// Exact RFC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20))]
    pub rfc: Option<String>,
    /// One Mexican state (CDMX, Edomex… accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub state: Option<String>,
    /// De 1 a 25; 10 si no se indica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 25))]
    pub limit: Option<u32>,
    /// Cursor opaco de la página anterior de la misma búsqueda.
    #[serde(default, skip_serializing)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanySaveArgs {
    /// `collection:…` de crm_collections.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub collection_id: String,
    /// `company:…` de company_search (o la ref de un Proveedor).
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub company_ref: String,
    /// El de la fila de company_search; si falta, lo calcula el servidor.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub claim_token: Option<String>,
    /// Etapa inicial; la primera si no se indica.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub stage: Option<String>,
}

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<CompanySearchArgs>("company_search", Family::People)
            .label("Buscando en el directorio de Empresas")
            .description(
                "Úsala cuando busques empresas para prospectar en el directorio de Empresas (razón social, \
                 RFC, estado, ciudad, giro, tamaño, dominio), vendan o no a gobierno. Empresas ≠ Proveedores: \
                 este directorio no es el padrón de Proveedores con adjudicaciones; cuando una empresa también \
                 es Proveedor, la fila trae supplier_ref (enlazada por RFC o por nombre). Cada fila trae \
                 claim_token para company_save. NO la uses para buscar Proveedores, Licitaciones o \
                 Adjudicaciones (usa market_search) ni para buscar personas (usa people_search).",
            )
            .example("Empresas de logística en Jalisco", json!({"query": "logística", "state": "Jalisco"}))
            .example("¿Está esta empresa en el directorio?", json!({"rfc": "GAL190301AB1"}))
            .search()
            .cost(CostClass::Read)
            .budget(4_500)
            .citations(&["ref", "rfc", "supplier_ref", "state", "sector"])
            .stage(Stage::SinCriterio, 140)
            .stage(Stage::Buscando, 140)
            .stage(Stage::ConSeleccion, 160)
            .cues(&["directorio"])
            .handler(company_search),
    );
    reg.add(
        ToolDef::new::<CompanySaveArgs>("company_save", Family::People)
            .label("Guardando la empresa en el CRM")
            .description(
                "Úsala cuando quieras guardar una empresa del directorio de Empresas (o un Proveedor por su \
                 ref company:…) como registro de una colección del CRM. Empresas ≠ Proveedores: ambas refs \
                 sirven y el RFC queda como entity_id al nivel superior. Pasa el claim_token de la fila de \
                 company_search: dos guardados de la misma empresa nunca duplican; el segundo devuelve el \
                 registro existente con already_saved. Devuelve undo_token. Una colección archivada es de solo \
                 lectura (PROTECTED_RESOURCE). NO la uses para guardar muchas empresas de una vez \
                 (usa crm_save_companies) ni para cambiar un registro ya guardado (usa crm_record).",
            )
            .example(
                "Guarda esta empresa en Prospección",
                json!({"collection_id": "collection:col_demo", "company_ref": "company:emp-0001", "claim_token": "clm_0123456789abcdef01234567"}),
            )
            .side_effect(SideEffect::Write)
            .idempotent(true)
            .budget(2_000)
            .citations(&["ref", "entity_id", "undo_token", "already_saved"])
            .stage(Stage::ConSeleccion, 150)
            .stage(Stage::ConListaGuardada, 160)
            .cues(&["directorio"])
            .handler(company_save),
    );
}

async fn company_search(ctx: ToolCtx, args: CompanySearchArgs) -> EngineResult<ToolOutput> {
    let state = match args.state.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(s) => Some(State::normalize(s, StateContext::Filter)?.name().to_owned()),
        None => None,
    };
    let limit = args.limit.unwrap_or(10).clamp(1, MAX_SEARCH_LIMIT);
    let secret = ctx.engine.crm.cursor_secret().await?;
    let canonical = json!({"q": args.query, "rfc": args.rfc, "state": state}).to_string();
    let hash = cursor::query_hash(&canonical);
    let now_s = now_ms() / 1000;
    let offset = match &args.cursor {
        Some(c) => cursor::open(secret, c, "companies", &hash, now_s)?,
        None => 0,
    };
    let q = DirectoryQuery {
        query: args.query.clone(),
        rfc: args.rfc.clone(),
        state,
        limit: limit.min(
            u32::try_from(ctx.page_size_hint(420, MAX_SEARCH_LIMIT as usize)).unwrap_or(limit),
        ),
        offset,
    };
    let (companies, has_more) = directory::search(ctx.engine.crm.store(), &q).await?;
    let rows: Vec<ResultRow> = companies
        .iter()
        .map(|c| c.to_row(&ctx.caller.workspace_id))
        .collect();
    let next = offset + rows.len() as u64;
    let mut env = Envelope::rows(rows);
    if has_more {
        env.has_more = true;
        env.status = ResultStatus::Continue;
        env.cursor = Some(cursor::seal(secret, "companies", &hash, next, now_s)?);
    }
    Ok(env.into())
}

/// What `company_save` did.
#[derive(Debug, Clone, Serialize)]
pub struct SaveCompanyOutcome {
    pub record: Record,
    pub already_saved: bool,
    pub claim_token: String,
    pub undo_token: Option<String>,
}

/// Saves one company into a collection. Two saves of the same company (same claim
/// token, or same RFC/entity) return the same record and create nothing new.
pub async fn save_company(
    store: &Store,
    actor: &Actor,
    collection_id: &str,
    company_ref: &str,
    given_token: Option<&str>,
    stage: Option<&str>,
) -> EngineResult<SaveCompanyOutcome> {
    let Some(company) = directory::get(store, company_ref).await? else {
        return Err(EngineError::not_found(
            "esa empresa en el directorio de Empresas",
        ));
    };
    let token = claim_token(&actor.workspace_id, &company.id);
    if given_token.is_some_and(|t| t.trim() != token) {
        return Err(invalid(
            "El claim_token no corresponde a esa empresa.",
            "Usa el claim_token de la misma fila de company_search, u omítelo.",
        ));
    }
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, collection_id).await?;
    collection.ensure_writable()?;
    let stage = match stage {
        Some(s) => collection.check_stage(s)?,
        None => collection.stages[0].clone(),
    };
    let claimed: Option<String> = sqlx::query_scalar(
        "select record_id from crm_claims where workspace_id = $1 and collection_id = $2 and claim_token = $3",
    )
    .bind(&actor.workspace_id)
    .bind(&collection.id)
    .bind(&token)
    .fetch_optional(&mut *tx)
    .await?;
    let existing = match claimed {
        Some(id) => records::load(&mut tx, &actor.workspace_id, &id).await.ok(),
        None => None,
    };
    let existing = match existing {
        Some(r) => Some(r),
        None => records::find_by_entity(&mut tx, &collection.id, &company.entity_id()).await?,
    };
    let (record, already, undo_token) = match existing {
        Some(r) => (r, true, None),
        None => {
            let fields = company_fields(&collection, &company);
            let r = records::insert(
                &mut tx,
                actor,
                &collection,
                Some(company.entity_id()),
                stage,
                fields,
                "save",
            )
            .await?;
            let t = undo::new_token();
            undo::record_step(
                &mut tx,
                &t,
                0,
                &actor.workspace_id,
                "record",
                &r.id,
                Some(r.version),
                None,
            )
            .await?;
            (r, false, Some(t))
        }
    };
    sqlx::query(
        "insert into crm_claims (workspace_id, collection_id, claim_token, record_id, created_at) values ($1, $2, $3, $4, $5)
         on conflict (workspace_id, collection_id, claim_token)
         do update set record_id = excluded.record_id, created_at = excluded.created_at",
    )
    .bind(&actor.workspace_id)
    .bind(&collection.id)
    .bind(&token)
    .bind(&record.id)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(SaveCompanyOutcome {
        record,
        already_saved: already,
        claim_token: token,
        undo_token,
    })
}

async fn company_save(ctx: ToolCtx, args: CompanySaveArgs) -> EngineResult<ToolOutput> {
    let actor = Actor::new(&ctx.caller, ctx.surface);
    let out = save_company(
        ctx.engine.crm.store(),
        &actor,
        &args.collection_id,
        &args.company_ref,
        args.claim_token.as_deref(),
        args.stage.as_deref(),
    )
    .await?;
    let row = out
        .record
        .to_row(&[])
        .with("already_saved", out.already_saved)
        .with("claim_token", &out.claim_token)
        .with("undo_token", &out.undo_token)
        .with("dropped_fields", Vec::<String>::new());
    Ok(Envelope::rows(vec![row]).into())
}
