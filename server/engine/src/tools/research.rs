//! The Investigaciones family (CONTRACT §10): `research_start` (level 1, previews and
//! returns a `proposal_id` for the `investigar` card) and `research_status` (level 0,
//! reads progress and result). Luna-only: not in the MCP `tools/list`.

use luna_protocol::error::ErrorCode;
use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::base::error::{EngineError, EngineResult};
use crate::registry::{
    CostClass, Family, Feature, Level, Registry, SideEffect, Stage, Surface, ToolCtx, ToolDef,
    ToolOutput,
};

use super::port::RESEARCH_PHASES as PHASES;

/// `research_start{brief, refs?}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartArgs {
    /// Qué quiere saber la persona, en sus palabras: giro, estado, comprador y la pregunta (de 10 a 2,000 caracteres).
    #[schemars(length(max = crate::base::bounds::TEXT_MAX))]
    pub brief: String,
    /// Refs de los que parte la investigación (company:… o record:… de resultados de este turno), hasta 20.
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(max = crate::base::bounds::ID_MAX)))]
    pub refs: Vec<String>,
}

/// `research_status{run_id}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// El identificador de la investigación (run_… o run:run_…) que muestra su tarjeta.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub run_id: String,
}

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<StartArgs>("research_start", Family::Research)
            .label("Preparando una investigación")
            .description(
                "Úsala cuando la persona pida una investigación larga que no cabe en un turno: quién \
                 domina un giro en un estado, cómo se reparten las Adjudicaciones, qué riesgos hay entre \
                 los principales Proveedores. Desde el chat no lanza nada: muestra qué revisará (fases), \
                 el tope de pasos del modelo y un estimado, y devuelve proposal_id para la tarjeta \
                 investigar, que vence a los 30 minutos; al aceptarla corre en segundo plano (el modelo \
                 encuadra la búsqueda y escribe el resultado dentro del tope), sus búsquedas aparecen en \
                 el chat y cada fase en el tablero. NO la uses para \
                 una búsqueda o un conteo que cabe en este turno (usa market_search o market_count) ni \
                 para ver cómo va una investigación (usa research_status).",
            )
            .example(
                "Investiga quién domina las Adjudicaciones de insumos médicos en Nuevo León",
                json!({"brief": "Investiga quién domina las Adjudicaciones de insumos médicos en Nuevo León"}),
            )
            .level(Level::L1)
            .side_effect(SideEffect::Write)
            .cost(CostClass::Inference)
            .idempotent(false)
            .budget(3_000)
            .requires(Feature::Research)
            .surfaces(&[Surface::Luna])
            .citations(&["ref", "proposal_id", "inference_cap"])
            .stage(Stage::SinCriterio, 50)
            .stage(Stage::Buscando, 50)
            .stage(Stage::ConSeleccion, 90)
            .cues(&["investig", "estudio", "analisis", "deep"])
            .handler(start),
    );
    reg.add(
        ToolDef::new::<StatusArgs>("research_status", Family::Research)
            .label("Leyendo el avance de la investigación")
            .description(
                "Úsala cuando la persona pregunte cómo va una investigación larga o qué encontró: \
                 devuelve su estado, cada fase con lo que encontró, los pasos del modelo que usó (de su \
                 tope) y, al terminar, el resultado con sus refs. NO la uses para lanzar una investigación (usa research_start) ni para buscar \
                 Proveedores (usa market_search).",
            )
            .example(
                "¿Cómo va la investigación?",
                json!({"run_id": "run_0123456789abcdef"}),
            )
            .budget(4_000)
            .surfaces(&[Surface::Luna, Surface::Ui])
            .citations(&["ref", "status", "summary"])
            .stage(Stage::ConSeleccion, 200)
            .stage(Stage::ConListaGuardada, 220)
            .cues(&["investigacion", "avance", "progreso"])
            .handler(status),
    );
}

async fn start(ctx: ToolCtx, args: StartArgs) -> EngineResult<ToolOutput> {
    if !ctx.is_preview() {
        // Only Luna sees this tool, and Luna only previews (level 1).
        return Err(EngineError::typed(
            ErrorCode::Forbidden,
            "Una investigación se lanza desde su tarjeta, no directamente.",
            "Propón la decisión investigar con el proposal_id.",
        ));
    }
    let p = ctx
        .engine
        .agent
        .research_propose(
            &ctx.engine,
            &ctx.caller,
            ctx.session_id.as_deref(),
            &args.brief,
            &args.refs,
        )
        .await?;
    let phases: Vec<&str> = PHASES.iter().map(|(_, label)| *label).collect();
    let row = ResultRow::new(format!("record:{}", p.proposal_id), p.title.clone())
        .with("proposal_id", &p.proposal_id)
        .with("criterion", &p.criterion)
        .with("phases", phases)
        .with("inference_cap", p.inference_cap)
        .with("tool_calls_estimate", p.calls_estimate)
        .with("intelligence_credits_estimate", p.credits_estimate)
        .with(
            "expires_in_seconds",
            (p.expires_at - crate::base::clock::now_ms()).max(0) / 1000,
        );
    let mut env = Envelope::rows(vec![row]);
    env.next_action = Some(
        "Propón la decisión investigar con este proposal_id; nada corre hasta que la persona la acepte."
            .into(),
    );
    Ok(env.into())
}

async fn status(ctx: ToolCtx, args: StatusArgs) -> EngineResult<ToolOutput> {
    let row = ctx
        .engine
        .agent
        .research_status(&ctx.engine, &ctx.caller, &args.run_id)
        .await?;
    Ok(Envelope::rows(vec![row]).into())
}
