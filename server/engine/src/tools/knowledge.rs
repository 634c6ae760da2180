//! The Cerebro tools: `context_retrieve`, `context_get`, `context_create`,
//! `context_update`, `context_delete` (public over MCP) and Luna's level-1
//! `context_note` and `context_suggest_edit`. Merging into Knowledge is not a tool:
//! see [`crate::knowledge::Knowledge::merge`].

use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::registry::{
    Family, Level, Registry, SideEffect, Stage, Surface, ToolCtx, ToolDef, ToolOutput,
};
use crate::tools::people::iso;

use crate::knowledge::limits::{
    MAX_AREA, MAX_BODY, MAX_FILES, MAX_PATH_CHARS, MAX_PATTERNS, MAX_PATTERN_CHARS, MAX_QUERY,
    MAX_REF, MAX_SUMMARY, MAX_TITLE,
};
use crate::knowledge::{NewTopic, Proposal, RetrieveQuery, Topic, TopicChanges, UpdateOutcome};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveArgs {
    /// La tarea en palabras de la persona ("escribir a compras del IMSS").
    #[serde(default)]
    #[schemars(length(max = MAX_QUERY))]
    pub task: Option<String>,
    /// Palabras clave.
    #[serde(default)]
    #[schemars(length(max = MAX_QUERY))]
    pub query: Option<String>,
    /// Área del equipo (ventas, gobierno, icp…).
    #[serde(default)]
    #[schemars(length(max = MAX_AREA))]
    pub area: Option<String>,
    /// Rutas de archivos que se están trabajando; empatan con los patrones del tema.
    #[serde(default)]
    #[schemars(length(max = MAX_FILES), inner(length(max = MAX_PATH_CHARS)))]
    pub files: Option<Vec<String>>,
    /// true: solo temas desactualizados; false: solo vigentes.
    #[serde(default)]
    pub stale: Option<bool>,
    /// Máximo de temas (1 a 20, 5 por omisión).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// Referencia del tema: topic:<slug>.
    #[schemars(length(max = MAX_REF))]
    pub topic: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    #[schemars(length(max = MAX_TITLE))]
    pub title: String,
    /// Área del equipo (ventas, gobierno, icp…).
    #[schemars(length(max = MAX_AREA))]
    pub area: String,
    #[schemars(length(max = MAX_BODY))]
    pub body: String,
    /// Patrones de archivo a los que aplica (gobierno/**, *.pdf).
    #[serde(default)]
    #[schemars(length(max = MAX_PATTERNS), inner(length(max = MAX_PATTERN_CHARS)))]
    pub patterns: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// Referencia del tema: topic:<slug>.
    #[schemars(length(max = MAX_REF))]
    pub topic: String,
    #[serde(default)]
    #[schemars(length(max = MAX_TITLE))]
    pub title: Option<String>,
    #[serde(default)]
    #[schemars(length(max = MAX_AREA))]
    pub area: Option<String>,
    #[serde(default)]
    #[schemars(length(max = MAX_BODY))]
    pub body: Option<String>,
    #[serde(default)]
    #[schemars(length(max = MAX_PATTERNS), inner(length(max = MAX_PATTERN_CHARS)))]
    pub patterns: Option<Vec<String>>,
    /// Marca (true) o desmarca (false) el tema como desactualizado.
    #[serde(default)]
    pub stale: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// Referencia del tema: topic:<slug>.
    #[schemars(length(max = MAX_REF))]
    pub topic: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    #[schemars(length(max = MAX_TITLE))]
    pub title: String,
    /// Lo que el equipo debe saber.
    #[schemars(length(max = MAX_BODY))]
    pub content: String,
    /// Área del equipo (ventas, gobierno, icp…).
    #[schemars(length(max = MAX_AREA))]
    pub area: String,
    #[serde(default)]
    #[schemars(length(max = MAX_PATTERNS), inner(length(max = MAX_PATTERN_CHARS)))]
    pub patterns: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestEditArgs {
    /// Referencia del tema: topic:<slug>.
    #[schemars(length(max = MAX_REF))]
    pub topic: String,
    /// Qué cambia y por qué, en una frase.
    #[schemars(length(max = MAX_SUMMARY))]
    pub summary: String,
    /// El cuerpo completo propuesto; sin él, la sugerencia es una pregunta al revisor.
    #[serde(default)]
    #[schemars(length(max = MAX_BODY))]
    pub patch: Option<String>,
}

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<RetrieveArgs>("context_retrieve", Family::Context)
            .label("Consultando lo que sabe el equipo")
            .description(
                "Úsala cuando necesites saber qué sabe ya el equipo para una tarea (cómo vende, a quién, \
                 objeciones, precios): ordena los temas de Cerebro por texto, área, archivos y frescura, con \
                 cuerpos breves y una insignia de frescura. Sin argumentos lista los temas más recientes. \
                 NO la uses para leer un tema completo (usa context_get) ni para buscar Proveedores \
                 (usa market_search).",
            )
            .example(
                "¿Cómo le vendemos a gobierno?",
                json!({"task": "preparar el primer correo a compras del IMSS", "area": "gobierno"}),
            )
            .example(
                "Temas desactualizados de ventas",
                json!({"area": "ventas", "stale": true, "limit": 10}),
            )
            .search()
            .budget(3_500)
            .citations(&["ref", "freshness", "updated_at"])
            .stage(Stage::SinCriterio, 90)
            .stage(Stage::Buscando, 90)
            .stage(Stage::ConSeleccion, 170)
            .stage(Stage::ConListaGuardada, 200)
            .stage(Stage::DecisionPendiente, 70)
            .cues(&[
                "tema", "desactualiz", "corrig", "corrij", "fusion", "merge", "icp", "objecion",
                "playbook", "pitch", "guion", "integra", "conocimiento", "documentad", "escrit",
                "sabemos", "cerebro",
            ])
            .handler(retrieve),
    );
    reg.add(
        ToolDef::new::<GetArgs>("context_get", Family::Context)
            .label("Leyendo un tema de Cerebro")
            .description(
                "Úsala cuando necesites el cuerpo completo de un tema de Cerebro que ya encontraste, con su \
                 área, estado (Knowledge o en revisión) y frescura. NO la uses para buscar temas \
                 (usa context_retrieve).",
            )
            .example("Abrir el tema de gobierno", json!({"topic": "topic:como-vendemos-a-gobierno"}))
            .budget(4_500)
            .citations(&["ref", "updated_at"])
            .stage(Stage::SinCriterio, 150)
            .stage(Stage::Buscando, 150)
            .stage(Stage::DecisionPendiente, 90)
            .handler(get),
    );
    reg.add(
        ToolDef::new::<CreateArgs>("context_create", Family::Context)
            .label("Creando un tema en Cerebro")
            .description(
                "Úsala cuando quieras dejar por escrito algo que el equipo debe saber: crea un tema que nace \
                 \"en revisión\" y llega a Knowledge solo cuando el dueño o un administrador lo fusiona. NO la \
                 uses para corregir un tema existente (usa context_update).",
            )
            .example(
                "Guardar cómo cotiza el IMSS",
                json!({"title": "Cómo cotiza el IMSS", "area": "gobierno", "body": "El IMSS pide tres cotizaciones…", "patterns": ["gobierno/imss/**"]}),
            )
            .side_effect(SideEffect::Write)
            .idempotent(false)
            .surfaces(&[Surface::Mcp, Surface::Ui])
            .budget(2_000)
            .handler(create),
    );
    reg.add(
        ToolDef::new::<UpdateArgs>("context_update", Family::Context)
            .label("Actualizando un tema de Cerebro")
            .description(
                "Úsala cuando un tema de Cerebro deba corregirse o marcarse como desactualizado. Un tema en \
                 revisión se actualiza al momento; en un tema de Knowledge el cambio queda como edición \
                 sugerida hasta que el dueño o un administrador lo fusione (solo la marca de desactualizado \
                 se aplica directo). NO la uses para crear un tema (usa context_create).",
            )
            .example(
                "Marcar los precios 2025 como desactualizados",
                json!({"topic": "topic:precios-de-referencia-2025", "stale": true}),
            )
            .side_effect(SideEffect::Write)
            .idempotent(true)
            .surfaces(&[Surface::Mcp, Surface::Ui])
            .budget(2_500)
            .handler(update),
    );
    reg.add(
        ToolDef::new::<DeleteArgs>("context_delete", Family::Context)
            .label("Borrando un tema de Cerebro")
            .description(
                "Úsala cuando un tema de Cerebro sobre o esté duplicado. Una nota en revisión la puede borrar \
                 cualquier miembro; un tema de Knowledge solo el dueño o un administrador. NO la uses para \
                 marcar un tema viejo (usa context_update con stale).",
            )
            .example("Borrar una nota duplicada", json!({"topic": "topic:nota-duplicada"}))
            .side_effect(SideEffect::Destructive)
            .idempotent(false)
            .surfaces(&[Surface::Mcp, Surface::Ui])
            .budget(1_000)
            .handler(delete),
    );
    reg.add(
        ToolDef::new::<NoteArgs>("context_note", Family::Context)
            .label("Proponiendo una nota para Cerebro")
            .description(
                "Úsala cuando aprendas algo en la conversación que el equipo deba recordar: prepara una nota \
                 que nace \"en revisión\"; la persona la confirma con un toque y el dueño o un administrador \
                 decide si pasa a Knowledge. NO la uses para corregir un tema existente (usa \
                 context_suggest_edit).",
            )
            .example(
                "Dejar nota de lo aprendido",
                json!({"title": "El ISSSTE paga a 60 días", "content": "En 2026 el ISSSTE está pagando a 60 días…", "area": "gobierno"}),
            )
            .level(Level::L1)
            .side_effect(SideEffect::Write)
            .idempotent(false)
            .surfaces(&[Surface::Luna, Surface::Ui])
            .budget(2_000)
            .citations(&["ref"])
            .cues(&[
                "nota", "anot", "apunt", "recuerd", "record", "acuerd", "olvid", "asentad",
                "fyi", "tenlo", "tenganlo", "sepa", "cerebro", "equipo", "team",
            ])
            .handler(note),
    );
    reg.add(
        ToolDef::new::<SuggestEditArgs>("context_suggest_edit", Family::Context)
            .label("Sugiriendo una edición en Cerebro")
            .description(
                "Úsala cuando un tema de Knowledge esté mal o incompleto: prepara una edición sugerida con su \
                 diferencia; sin patch es una pregunta al revisor. Nada cambia hasta que el dueño o un \
                 administrador la fusione. NO la uses para dejar algo nuevo (usa context_note).",
            )
            .example(
                "Corregir el ICP",
                json!({"topic": "topic:icp-fabricantes-de-empaque", "summary": "Agregar Puebla a los estados", "patch": "Nuestro cliente ideal: …"}),
            )
            .level(Level::L1)
            .side_effect(SideEffect::Write)
            .idempotent(false)
            .surfaces(&[Surface::Luna, Surface::Ui])
            .budget(3_000)
            .citations(&["ref"])
            .cues(&[
                "edicion", "edita", "corrig", "corrij", "sugier", "suger", "desactualiz", "mal",
                "icp", "objecion", "playbook", "pitch", "guion", "cambi", "propon", "ideal",
                "actualiz",
            ])
            .handler(suggest_edit),
    );
}

fn topic_row(t: &Topic, now: i64) -> ResultRow {
    ResultRow::new(t.ref_(), t.title.clone())
        .with("area", &t.area)
        .with("status", t.status)
        .with("status_label", t.status.label())
        .with("freshness", t.badge(now))
        .with("stale", t.is_stale(now))
        .with("updated_at", iso(t.updated_at))
}

fn proposal_row(p: &Proposal) -> ResultRow {
    ResultRow::new(format!("proposal:{}", p.id), p.title.clone())
        .with("proposal_id", &p.id)
        .with("kind", p.kind)
        .with("status", p.status.as_str())
        .with("topic", p.topic_slug.as_ref().map(|s| format!("topic:{s}")))
        .with("area", &p.area)
        .with("summary", &p.summary)
        .with("diff", &p.diff)
}

async fn retrieve(ctx: ToolCtx, args: RetrieveArgs) -> EngineResult<ToolOutput> {
    let now = now_ms();
    let hits = ctx
        .engine
        .knowledge
        .retrieve_at(
            &ctx.caller,
            &RetrieveQuery {
                task: args.task,
                query: args.query,
                area: args.area,
                files: args.files.unwrap_or_default(),
                stale: args.stale,
                limit: args.limit,
            },
            now,
        )
        .await?;
    let rows = hits
        .iter()
        .map(|h| {
            topic_row(&h.topic, now)
                .with("excerpt", &h.excerpt)
                .with("matched", &h.matched)
        })
        .collect();
    let mut env = Envelope::rows(rows);
    if hits.is_empty() {
        env.next_action = Some(
            "Cerebro no tiene temas para esto; si aprendes algo útil, propón una nota con context_note."
                .to_owned(),
        );
    }
    Ok(env.into())
}

async fn get(ctx: ToolCtx, args: GetArgs) -> EngineResult<ToolOutput> {
    let t = ctx.engine.knowledge.get(&ctx.caller, &args.topic).await?;
    let row = topic_row(&t, now_ms())
        .with("body", &t.body)
        .with("patterns", &t.patterns);
    Ok(Envelope::rows(vec![row]).into())
}

async fn create(ctx: ToolCtx, args: CreateArgs) -> EngineResult<ToolOutput> {
    let (t, p) = ctx
        .engine
        .knowledge
        .create_note(
            &ctx.caller,
            &NewTopic {
                title: args.title,
                area: args.area,
                body: args.body,
                patterns: args.patterns.unwrap_or_default(),
            },
            "Tema nuevo",
            ctx.surface.as_str(),
        )
        .await?;
    let row = topic_row(&t, now_ms()).with("proposal_id", &p.id);
    Ok(Envelope::rows(vec![row]).into())
}

async fn update(ctx: ToolCtx, args: UpdateArgs) -> EngineResult<ToolOutput> {
    let changes = TopicChanges {
        title: args.title,
        area: args.area,
        body: args.body,
        patterns: args.patterns,
        stale: args.stale,
    };
    let out = ctx
        .engine
        .knowledge
        .update(&ctx.caller, &args.topic, &changes, ctx.surface.as_str())
        .await?;
    Ok(match out {
        UpdateOutcome::Applied(t) => {
            Envelope::rows(vec![topic_row(&t, now_ms()).with("applied", true)]).into()
        }
        UpdateOutcome::Proposed(p) => {
            let mut env = Envelope::rows(vec![proposal_row(&p).with("applied", false)]);
            env.next_action = Some(
                "El tema es Knowledge: el cambio quedó como edición sugerida para el dueño o un administrador."
                    .to_owned(),
            );
            env.into()
        }
    })
}

async fn delete(ctx: ToolCtx, args: DeleteArgs) -> EngineResult<ToolOutput> {
    let t = ctx
        .engine
        .knowledge
        .delete(&ctx.caller, &args.topic)
        .await?;
    Ok(Envelope::rows(vec![ResultRow::new(t.ref_(), t.title).with("deleted", true)]).into())
}

async fn note(ctx: ToolCtx, args: NoteArgs) -> EngineResult<ToolOutput> {
    let topic = NewTopic {
        title: args.title,
        area: args.area,
        body: args.content,
        patterns: args.patterns.unwrap_or_default(),
    };
    let kn = &ctx.engine.knowledge;
    if ctx.is_preview() {
        let p = kn
            .draft_note(&ctx.caller, &topic, ctx.surface.as_str())
            .await?;
        let row = proposal_row(&p).with("preview", true).with(
            "content",
            crate::knowledge::retrieve::excerpt(p.body.as_deref().unwrap_or(""), 600),
        );
        let mut env = Envelope::rows(vec![row]);
        env.next_action = Some(format!(
            "Propón la decisión dejar_nota con proposal_id {}; nada se guarda antes del toque.",
            p.id
        ));
        return Ok(env.into());
    }
    let summary = format!("Nota nueva: {}", topic.title.trim());
    let (t, p) = kn
        .create_note(&ctx.caller, &topic, &summary, ctx.surface.as_str())
        .await?;
    Ok(Envelope::rows(vec![topic_row(&t, now_ms()).with("proposal_id", &p.id)]).into())
}

async fn suggest_edit(ctx: ToolCtx, args: SuggestEditArgs) -> EngineResult<ToolOutput> {
    let changes = TopicChanges {
        body: args.patch,
        ..TopicChanges::default()
    };
    let p = ctx
        .engine
        .knowledge
        .suggest_edit(
            &ctx.caller,
            &args.topic,
            &args.summary,
            &changes,
            ctx.is_preview(),
            ctx.surface.as_str(),
        )
        .await?;
    let mut env = Envelope::rows(vec![proposal_row(&p).with("preview", ctx.is_preview())]);
    if ctx.is_preview() {
        env.next_action = Some(format!(
            "Propón la decisión sugerir_edicion con proposal_id {}; nada cambia antes del toque.",
            p.id
        ));
    }
    Ok(env.into())
}
