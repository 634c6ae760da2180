//! The Cuenta family (seed 000 §3): `usage` (plan, créditos de inteligencia, créditos
//! de contacto, lecturas de esta hora) and `workspaces` (the credential's workspaces).

use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::billing::{limits, Ledger, READS_PER_HOUR};
use crate::registry::{Family, Registry, Stage, Surface, ToolCtx, ToolDef, ToolOutput};

/// `usage` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageArgs {}

/// `workspaces` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspacesArgs {}

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<UsageArgs>("usage", Family::Account)
            .label("Consultando tus créditos")
            .description(
                "Úsala cuando necesites saber, antes de prometer algo, cuántos créditos de inteligencia \
                 y créditos de contacto le quedan al espacio de trabajo, cuántas lecturas quedan en esta \
                 hora y qué incluye el plan. NO la uses para cotizar contactos concretos (usa people_quote) \
                 ni para contar Proveedores (usa market_count).",
            )
            .example("¿Cuántos créditos me quedan este mes?", json!({}))
            .budget(1_500)
            // "¿Cuántos créditos me quedan?" comes at any point of a conversation,
            // so usage stays inside the twelve of every stage.
            .citations(&[
                "ref",
                "intelligence_credits_left",
                "intelligence_credits_allowance",
                "intelligence_credits_used",
                "contact_credits_left",
                "contact_credits_used",
                "reads_left_this_hour",
                "searches_left_today",
            ])
            .stage(Stage::SinCriterio, 120)
            .stage(Stage::Buscando, 120)
            .stage(Stage::ConSeleccion, 140)
            .stage(Stage::ConListaGuardada, 140)
            .stage(Stage::ConBorrador, 160)
            .stage(Stage::DecisionPendiente, 110)
            .cues(&["credito", "credit", "saldo", "gast", "consum", "queda", "cuota", "plan"])
            .handler(usage),
    );
    reg.add(
        ToolDef::new::<WorkspacesArgs>("workspaces", Family::Account)
            .label("Revisando tus espacios de trabajo")
            .description(
                "Úsala cuando necesites saber en qué espacios de trabajo puede operar esta credencial, \
                 con su plan y tu rol en cada uno. NO la uses para consultar saldos ni límites (usa usage).",
            )
            .example("¿En qué espacio de trabajo estoy trabajando?", json!({}))
            .budget(2_000)
            .citations(&["ref", "plan", "role"])
            // A credential's question (MCP); Luna works inside one workspace.
            .surfaces(&[Surface::Mcp, Surface::Ui])
            .handler(workspaces),
    );
}

async fn usage(ctx: ToolCtx, _args: UsageArgs) -> EngineResult<ToolOutput> {
    let caller = &ctx.caller;
    let billing = &ctx.engine.billing;
    let now = now_ms();
    let intelligence = billing
        .balance_at(caller, Ledger::Intelligence, now)
        .await?;
    let contact = billing.balance_at(caller, Ledger::Contact, now).await?;
    let reads_left = billing.reads_left(&caller.workspace_id, now).await?;
    let searches_left = billing.searches_left_today(caller, now).await?;
    let plan = limits(caller.plan);
    let row = ResultRow::new(
        format!("workspace:{}", caller.workspace_id),
        caller.workspace_name.clone(),
    )
    .with("plan", caller.plan.as_str())
    .with("intelligence_credits_left", intelligence.left())
    .with("intelligence_credits_allowance", intelligence.allowance)
    .with("intelligence_credits_used", intelligence.used)
    .with(
        "intelligence_period",
        chrono::DateTime::from_timestamp_millis(now).map(|d| d.format("%Y-%m").to_string()),
    )
    .with("contact_credits_left", contact.left())
    .with("contact_credits_used", contact.used)
    .with("reads_left_this_hour", reads_left)
    .with("read_ceiling_per_hour", READS_PER_HOUR)
    .with("searches_left_today", searches_left)
    .with("contacts_included", plan.contacts)
    .with("sequences_included", plan.sequences)
    .with("auto_mode_included", plan.auto);
    Ok(Envelope::rows(vec![row]).into())
}

async fn workspaces(ctx: ToolCtx, _args: WorkspacesArgs) -> EngineResult<ToolOutput> {
    let caller = &ctx.caller;
    // An API key is scoped to one workspace: it sees only that one.
    let all = if caller.api_key.is_some() {
        vec![(
            caller.workspace_id.clone(),
            caller.workspace_name.clone(),
            caller.plan,
            caller.role,
        )]
    } else {
        ctx.engine.accounts.workspaces_of(&caller.user_id).await?
    };
    let rows = all
        .into_iter()
        .map(|(id, name, plan, role)| {
            ResultRow::new(format!("workspace:{id}"), name)
                .with("plan", plan.as_str())
                .with("role", role.as_str())
                .with("current", id == caller.workspace_id)
        })
        .collect();
    Ok(Envelope::rows(rows).into())
}
