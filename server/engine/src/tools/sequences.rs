//! Luna's sequence tools (CONTRACT §5, §9): `sequence_draft`, `sequence_update_draft`,
//! `sequence_list`, `sequence_get`, `sequence_preview`. All level 0 and inert: they
//! write drafts only. Sending is the `revisar_secuencia` decision; there is no send tool.

use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::base::error::EngineResult;
use crate::registry::{Family, Feature, Registry, Stage, Surface, ToolCtx, ToolDef, ToolOutput};

use crate::sequences::model::{Audience, Sequence, Status, Step};
use crate::sequences::{Edit, GAPS};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftArgs {
    /// Nombre corto de la secuencia.
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub name: String,
    pub audience: Audience,
    /// De 1 a 6 pasos con días crecientes (0, 3, 7…).
    #[schemars(length(max = crate::sequences::model::MAX_STEPS))]
    pub steps: Vec<Step>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// sequence:… de la secuencia.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub id: String,
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub name: Option<String>,
    #[serde(default)]
    pub audience: Option<Audience>,
    #[serde(default)]
    #[schemars(length(max = crate::sequences::model::MAX_STEPS))]
    pub steps: Option<Vec<Step>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusArg {
    Borrador,
    Activa,
    Terminada,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    #[serde(default)]
    pub status: Option<StatusArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// sequence:… de la secuencia.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewArgs {
    /// sequence:… de la secuencia.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub id: String,
    /// Correo de un destinatario para ver solo su versión.
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub recipient: Option<String>,
}

fn row(s: &Sequence) -> ResultRow {
    ResultRow::new(s.ref_(), s.name.clone())
        .with("sequence_id", &s.id)
        .with("status", s.status.as_str())
        .with("steps", s.steps.len())
        .with("version", s.version)
        .with(
            "collection_ref",
            format!("collection:{}", s.audience.collection_id),
        )
}

const EXAMPLE_STEPS: &str =
    "Hola {{nombre}}, vi que {{empresa}} le vendió a gobierno ({{adjudicacion}}).";

pub fn register(reg: &mut Registry) {
    let luna = [Surface::Luna];
    reg.add(
        ToolDef::new::<DraftArgs>("sequence_draft", Family::Sequences)
            .label("Redactando la secuencia")
            .description(
                "Úsala cuando la persona pida una secuencia de correos para una colección guardada: crea un \
                 borrador inerte con sus pasos (días 0, 3, 7…) personalizados con variables {{nombre}}, \
                 {{empresa}}, {{puesto}}, {{estado}}, {{adjudicacion}} y {{remitente}}. No envía nada. Después \
                 usa sequence_preview y propón la decisión revisar_secuencia con el sequence_id. NO la uses \
                 para cambiar una secuencia que ya existe (usa sequence_update_draft).",
            )
            .example(
                "Arma una secuencia de tres correos para la colección Prospección",
                json!({"name": "Empaque Jalisco", "audience": {"collection_id": "collection:col_1"},
                       "steps": [{"delay_days": 0, "subject": "{{empresa}} y sus ventas a gobierno", "body": EXAMPLE_STEPS}]}),
            )
            .surfaces(&luna)
            .requires(Feature::Sequences)
            .budget(2_000)
            .citations(&["ref", "steps", "status"])
            .stage(Stage::ConListaGuardada, 70)
            .stage(Stage::ConBorrador, 50)
            .cues(&["secuencia", "cadencia", "sequence", "seguimiento"])
            .handler(draft),
    );
    reg.add(
        ToolDef::new::<UpdateArgs>("sequence_update_draft", Family::Sequences)
            .label("Editando la secuencia")
            .description(
                "Úsala cuando la persona pida cambiar el nombre, la audiencia o los pasos de una secuencia. \
                 Cualquier cambio crea una versión nueva en borrador: si ya estaba autorizada, sus \
                 autorizaciones dejan de valer y hay que volver a proponer revisar_secuencia. NO la uses para crear una secuencia nueva \
                 (usa sequence_draft).",
            )
            .example("Cambia el asunto del primer correo", json!({"id": "sequence:seq_1", "steps": [{"delay_days": 0, "subject": "Hola {{nombre}}", "body": EXAMPLE_STEPS}]}))
            .surfaces(&luna)
            .requires(Feature::Sequences)
            .budget(2_000)
            .citations(&["ref", "version", "invalidated_sends"])
            .stage(Stage::ConBorrador, 10)
            .cues(&["asunto", "borrador"])
            .handler(update),
    );
    reg.add(
        ToolDef::new::<ListArgs>("sequence_list", Family::Sequences)
            .label("Revisando las secuencias")
            .description("Úsala cuando necesites las secuencias del espacio de trabajo, opcionalmente por estado. NO la uses para ver el contenido (usa sequence_get).")
            .example("¿Qué secuencias están activas?", json!({"status": "activa"}))
            .surfaces(&luna)
            .budget(2_500)
            .citations(&["ref", "status", "steps"])
            .stage(Stage::ConListaGuardada, 210)
            .stage(Stage::ConBorrador, 40)
            .cues(&["secuencias"])
            .handler(list),
    );
    reg.add(
        ToolDef::new::<GetArgs>("sequence_get", Family::Sequences)
            .label("Leyendo la secuencia")
            .description("Úsala cuando necesites los pasos, la audiencia y el estado de una secuencia. NO la uses para ver cómo le llega a cada persona (usa sequence_preview).")
            .example("Muéstrame la secuencia", json!({"id": "sequence:seq_1"}))
            .surfaces(&luna)
            .budget(4_000)
            .citations(&["ref", "status", "steps"])
            .stage(Stage::ConBorrador, 20)
            .cues(&["borrador"])
            .handler(get),
    );
    reg.add(
        ToolDef::new::<PreviewArgs>("sequence_preview", Family::Sequences)
            .label("Previsualizando la secuencia")
            .description(
                "Úsala cuando vayas a proponer revisar_secuencia: muestra cada paso como le llegaría a cada \
                 destinatario, avisa de variables vacías y destinatarios dados de baja, y dice lo que no \
                 existe (envío de prueba, detección de respuestas, aperturas y clics). NO la uses para enviar: \
                 nada se envía desde el chat (usa la decisión revisar_secuencia).",
            )
            .example("¿Cómo le llega a cada quien?", json!({"id": "sequence:seq_1"}))
            .surfaces(&luna)
            .requires(Feature::Sequences)
            .budget(4_000)
            .citations(&["ref", "recipients", "warnings"])
            .stage(Stage::ConListaGuardada, 80)
            .stage(Stage::ConBorrador, 30)
            .cues(&["secuencia", "cadencia", "sequence", "seguimiento"])
            .handler(preview),
    );
}

async fn draft(ctx: ToolCtx, args: DraftArgs) -> EngineResult<ToolOutput> {
    let s = crate::sequences::draft(
        &ctx.engine,
        &ctx.caller,
        ctx.session_id.as_deref(),
        &args.name,
        &args.audience,
        &args.steps,
    )
    .await?;
    let mut env = Envelope::rows(vec![row(&s)]);
    env.next_action = Some(format!(
        "Borrador guardado; nada se envía. Revisa con sequence_preview y propón revisar_secuencia con sequence_id {}.",
        s.id
    ));
    Ok(env.into())
}

async fn update(ctx: ToolCtx, args: UpdateArgs) -> EngineResult<ToolOutput> {
    let edit = Edit {
        name: args.name,
        audience: args.audience,
        steps: args.steps,
    };
    let out = crate::sequences::update(&ctx.engine, &ctx.caller, &args.id, &edit).await?;
    let mut env = Envelope::rows(vec![
        row(&out.sequence).with("invalidated_sends", out.invalidated_sends)
    ]);
    if out.was_active {
        env.next_action = Some(
            "La secuencia estaba autorizada: el cambio invalidó sus autorizaciones y los envíos pendientes. Dile a la persona y propón revisar_secuencia otra vez.".into(),
        );
    }
    Ok(env.into())
}

async fn list(ctx: ToolCtx, args: ListArgs) -> EngineResult<ToolOutput> {
    let status = args.status.map(|s| match s {
        StatusArg::Borrador => Status::Borrador,
        StatusArg::Activa => Status::Activa,
        StatusArg::Terminada => Status::Terminada,
    });
    let all = crate::sequences::list(&ctx.engine, &ctx.caller, status).await?;
    Ok(Envelope::rows(all.iter().map(row).collect()).into())
}

async fn get(ctx: ToolCtx, args: GetArgs) -> EngineResult<ToolOutput> {
    let s = crate::sequences::get(&ctx.engine, &ctx.caller, &args.id).await?;
    let r = row(&s)
        .with("steps_detail", &s.steps)
        .with("audience", &s.audience);
    Ok(Envelope::rows(vec![r]).into())
}

async fn preview(ctx: ToolCtx, args: PreviewArgs) -> EngineResult<ToolOutput> {
    let p = crate::sequences::preview(
        &ctx.engine,
        &ctx.caller,
        &args.id,
        args.recipient.as_deref(),
    )
    .await?;
    let mut rows = vec![row(&p.sequence)
        .with("recipients", p.recipients.len())
        .with("warnings", &p.warnings)
        .with("not_available", GAPS)];
    rows.extend(p.recipients.iter().take(5).map(|r| {
        ResultRow::new(
            format!("{}:{}", p.sequence.ref_(), r.email),
            r.email.clone(),
        )
        .with("suppressed", r.suppressed)
        .with(
            "steps",
            r.steps
                .iter()
                .map(|s| json!({"subject": s.subject, "body": s.body}))
                .collect::<Vec<_>>(),
        )
    }));
    Ok(Envelope::rows(rows).into())
}
