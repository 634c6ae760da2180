//! Demo topics for the demo workspace, so Cerebro has something to retrieve on first
//! start, and a review queue (one note en revisión, one suggested edit) so the owner's
//! review page has something to resolve. Idempotent: a topic whose slug exists, or a
//! review item proposed once (even if since resolved), is left alone.

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::base::store::Scope;

use super::{Knowledge, NewTopic, TopicChanges, TopicStatus};

/// The demo note awaiting review: (title, area, body, summary).
pub const DEMO_NOTE: (&str, &str, &str, &str) = (
    "El IMSS pide carta de distribuidor",
    "gobierno",
    "En las licitaciones del IMSS de 2026 para material de empaque piden carta de \
     distribuidor autorizado del fabricante. Sin ella la propuesta se desecha en la \
     revisión documental.",
    "Nota de Luna tras revisar tres licitaciones del IMSS",
);

/// The demo suggested edit: (topic slug, summary, proposed body).
pub const DEMO_EDIT: (&str, &str, &str) = (
    "precios-de-referencia-2025",
    "Actualizar con la lista de precios 2026",
    "Tabla de precios de referencia 2026 para cotizaciones a gobierno: la lista 2025 \
     subió 6 % en cartón corrugado y 4 % en plástico flexible. Usar la lista 2026 en \
     toda cotización nueva.",
);

/// (title, area, body, patterns, age in days)
const TOPICS: &[(&str, &str, &str, &[&str], i64)] = &[
    (
        "Cómo vendemos a gobierno",
        "gobierno",
        "Vendemos a dependencias (IMSS, ISSSTE, CFE, PEMEX y secretarías estatales) sobre todo por \
         licitación pública y adjudicación directa. Antes de proponer: revisar en Adjudicaciones qué \
         compró la dependencia en los últimos 24 meses y a qué precio, y confirmar que el proveedor no \
         tenga marcas de riesgo (SAT 69-B). El contacto correcto es el Jefe de Licitaciones o el \
         Director de Compras; el primer correo menciona una adjudicación concreta como evidencia. Los \
         ciclos duran de 3 a 9 meses; no prometemos fechas de fallo.",
        &["gobierno/**", "licitaciones/*.pdf"],
        12,
    ),
    (
        "ICP: fabricantes de empaque",
        "icp",
        "Nuestro cliente ideal: fabricantes de empaque (cartón corrugado, plástico flexible, envase \
         rígido) medianos o grandes, en Jalisco, Guanajuato, Querétaro, Nuevo León y Estado de México, \
         que ya le vendieron a gobierno al menos una vez. Señales fuertes: adjudicaciones recientes con \
         el sector salud, registros sanitarios vigentes y sitio web propio. Excluir: distribuidores sin \
         planta y empresas con marcas de riesgo definitivas.",
        &["icp/**", "prospeccion/empaque-*.md"],
        40,
    ),
    (
        "Objeciones frecuentes y cómo responderlas",
        "ventas",
        "\"Ya tenemos proveedor\": preguntar por tiempos de entrega y penalizaciones en sus últimas \
         adjudicaciones. \"No tenemos presupuesto\": ubicar el ejercicio fiscal y la partida. \"Mándame \
         información\": enviar un caso con evidencia de una dependencia similar y proponer llamada de 15 \
         minutos.",
        &["ventas/objeciones.md"],
        95,
    ),
    (
        "Precios de referencia 2025",
        "ventas",
        "Tabla de precios de referencia usada en 2025 para cotizaciones a gobierno. Pendiente de \
         actualizar con la lista 2026.",
        &["precios/*.xlsx"],
        260,
    ),
];

/// Seeds the demo topics as Knowledge in `workspace_id`, authored by `user_id`.
/// Returns how many it created.
pub async fn seed(knowledge: &Knowledge, workspace_id: &str, user_id: &str) -> EngineResult<usize> {
    let now = now_ms();
    let mut created = 0;
    for (title, area, body, patterns, age_days) in TOPICS {
        let slug = super::slugify(title);
        let exists: Option<i64> =
            sqlx::query_scalar("select 1 from kn_topics where workspace_id = $1 and slug = $2")
                .bind(workspace_id)
                .bind(&slug)
                .fetch_optional(knowledge.store().pool())
                .await?;
        if exists.is_some() {
            continue;
        }
        let at = now - age_days * super::DAY_MS;
        let mut tx = knowledge
            .store()
            .begin_write_in(Scope::Workspace(workspace_id))
            .await?;
        let t = NewTopic {
            title: (*title).to_owned(),
            area: (*area).to_owned(),
            body: (*body).to_owned(),
            patterns: patterns.iter().map(|p| (*p).to_owned()).collect(),
        };
        knowledge
            .insert_topic(
                &mut tx,
                workspace_id,
                user_id,
                &t,
                TopicStatus::Knowledge,
                at,
            )
            .await?;
        tx.commit().await?;
        created += 1;
    }
    Ok(created)
}

/// Seeds the review queue of `author`'s workspace: [`DEMO_NOTE`] as a note en
/// revisión and [`DEMO_EDIT`] as a suggested edit (the topic must exist: run [`seed`]
/// first). Returns how many items it proposed.
pub async fn seed_review(knowledge: &Knowledge, author: &Caller) -> EngineResult<usize> {
    let mut created = 0;
    let (title, area, body, summary) = DEMO_NOTE;
    if !proposed(knowledge, author, title, summary).await? {
        let note = NewTopic {
            title: title.into(),
            area: area.into(),
            body: body.into(),
            patterns: Vec::new(),
        };
        knowledge
            .create_note(author, &note, summary, "luna")
            .await?;
        created += 1;
    }
    let (slug, summary, body) = DEMO_EDIT;
    let topic = knowledge.get(author, slug).await?;
    if !proposed(knowledge, author, &topic.title, summary).await? {
        let changes = TopicChanges {
            body: Some(body.into()),
            ..Default::default()
        };
        knowledge
            .suggest_edit(author, slug, summary, &changes, false, "luna")
            .await?;
        created += 1;
    }
    Ok(created)
}

/// Whether a proposal with this title and summary was ever made in the workspace.
async fn proposed(
    knowledge: &Knowledge,
    caller: &Caller,
    title: &str,
    summary: &str,
) -> EngineResult<bool> {
    let found: Option<i64> = sqlx::query_scalar(
        "select 1 from kn_proposals where workspace_id = $1 and title = $2 and summary = $3",
    )
    .bind(&caller.workspace_id)
    .bind(title)
    .bind(summary)
    .fetch_optional(knowledge.store().pool())
    .await?;
    Ok(found.is_some())
}
