//! The `people_*` tools (Empresas y personas, CONTRACT §5): `people_search`,
//! `people_quote`, `people_reveal` (level 2: only a resolved card or an outside caller; not Luna), `people_acquired`,
//! `people_file` (level 0, with undo) and `people_status`. Thin wrappers over
//! [`crate::people::People`].

use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::base::error::EngineResult;
use crate::registry::{
    CostClass, Family, Feature, Level, Registry, SideEffect, Stage, Surface, ToolCtx, ToolDef,
    ToolOutput,
};

use crate::people::{PersonCard, PersonView, QuoteState, RevealRequest, RevealVia};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Referencia de la empresa: company:<id> (de Proveedores o Empresas).
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub company_ref: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteArgs {
    /// Referencias person:… devueltas por people_search (1 a 30).
    #[schemars(length(max = 30), inner(length(max = crate::base::bounds::ID_MAX)))]
    pub handles: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevealArgs {
    /// El quote_id de people_quote.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub quote_id: String,
    /// true para cobrar y revelar; false solo muestra el precio vigente.
    pub confirm: bool,
    /// Tope de créditos de contacto que se autoriza gastar.
    #[schemars(range(min = 0))]
    pub max_credits: i64,
    /// Llave única por revelado; repetirla nunca cobra dos veces.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub idempotency_key: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcquiredArgs {
    /// Solo las personas de esta empresa (company:<id>).
    #[serde(default)]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub company_ref: Option<String>,
    /// Máximo de filas (1 a 100, 20 por omisión).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileArgs {
    /// La ref person:… de una persona ya revelada en este espacio de trabajo.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub person_ref: String,
    /// El registro del CRM: record:… (de collection_query o company_save).
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub record_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// El quote_id de people_quote.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub quote_id: String,
}

/// Words of asking for someone's contact: whatever the board holds (a card waiting
/// too), a person who asks for an email or a phone gets the tools that find and quote
/// it.
const CONTACT_CUES: &[&str] = &[
    "correo",
    "contacto",
    "mail",
    "email",
    "telefono",
    "celular",
    "whatsapp",
    "desbloque",
    "revel",
];

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<SearchArgs>("people_search", Family::People)
            .label("Buscando personas en la empresa")
            .description(
                "Úsala cuando necesites saber a quién contactar en una empresa: devuelve hasta 3 personas \
                 con su puesto y nivel, con nombre y correo enmascarados (\"M***a R***s\", \"m****@empresa.mx\") \
                 salvo las ya reveladas en este espacio de trabajo. Es gratis. Empresas no son Proveedores: \
                 recibe la ref company:<id> de una empresa. NO la uses para obtener el correo completo \
                 (usa people_quote y luego la decisión de revelar).",
            )
            .example(
                "¿Quién compra en esta empresa?",
                json!({"company_ref": "company:EBA010101AB1"}),
            )
            .example(
                "Personas de la segunda empresa de la lista",
                json!({"company_ref": "company:CJA050505XY2"}),
            )
            .search()
            .budget(3_000)
            .citations(&["ref", "role", "seniority", "company_ref"])
            .stage(Stage::ConSeleccion, 70)
            .stage(Stage::ConListaGuardada, 50)
            .stage(Stage::ConBorrador, 70)
            .cues(CONTACT_CUES)
            .handler(search),
    );
    reg.add(
        ToolDef::new::<QuoteArgs>("people_quote", Family::People)
            .label("Cotizando contactos")
            .description(
                "Úsala cuando quieras saber cuánto cuesta revelar el contacto de unas personas: devuelve el \
                 precio (2 créditos de contacto por persona aún no revelada en este espacio de trabajo), el \
                 saldo de créditos de contacto, cuántas ya estaban reveladas y un quote_id que vence en 10 \
                 minutos. No cobra nada. NO la uses para revelar (usa people_reveal con el quote_id, o \
                 propón la decisión revelar_contactos).",
            )
            .example(
                "¿Cuánto cuesta el correo de estas dos personas?",
                json!({"handles": ["person:RUJBMDEwMTAxQUIx.0", "person:RUJBMDEwMTAxQUIx.1"]}),
            )
            .requires(Feature::Contacts)
            .idempotent(false)
            .side_effect(SideEffect::None)
            .budget(2_500)
            .citations(&["ref", "price", "people", "contact_credits_balance", "already_revealed"])
            .stage(Stage::ConSeleccion, 80)
            .stage(Stage::ConListaGuardada, 60)
            .stage(Stage::ConBorrador, 80)
            .cues(CONTACT_CUES)
            .handler(quote),
    );
    reg.add(
        ToolDef::new::<RevealArgs>("people_reveal", Family::People)
            .label("Revelando contactos")
            .description(
                "Úsala cuando una persona ya aprobó gastar créditos de contacto en una cotización vigente: \
                 cobra una sola vez por idempotency_key y devuelve nombre y correo completos. Falla con \
                 QUOTE_EXPIRED si la cotización venció, INSUFFICIENT_CREDITS si no alcanza el saldo y \
                 MAX_CREDITS_EXCEEDED si el precio supera max_credits. Una persona ya revelada en este espacio \
                 de trabajo nunca se cobra otra vez. NO la uses para cotizar (usa people_quote).",
            )
            .example(
                "Revelar lo cotizado con tope de 4 créditos",
                json!({"quote_id": "quo_3f9c", "confirm": true, "max_credits": 4, "idempotency_key": "revelado-7d1e"}),
            )
            .level(Level::L2)
            .side_effect(SideEffect::External)
            .cost(CostClass::Contact)
            .requires(Feature::Contacts)
            .idempotent(true)
            .budget(4_000)
            .surfaces(&[Surface::Mcp, Surface::Ui])
            .citations(&["ref", "charged", "contact_credits_balance"])
            .handler(reveal),
    );
    reg.add(
        ToolDef::new::<AcquiredArgs>("people_acquired", Family::People)
            .label("Revisando contactos revelados")
            .description(
                "Úsala cuando necesites saber qué personas ya tienen contacto revelado en este espacio de \
                 trabajo: quién, de qué empresa, cuándo y quién lo reveló. Solo metadatos, nunca nombre ni \
                 correo. NO la uses para ver los datos de contacto (usa people_search sobre la empresa).",
            )
            .example(
                "¿A quién ya revelamos en esta empresa?",
                json!({"company_ref": "company:EBA010101AB1"}),
            )
            .budget(3_000)
            .citations(&["ref", "revealed_at", "revealed_by"])
            .stage(Stage::ConListaGuardada, 180)
            .cues(&["revelad"])
            .handler(acquired),
    );
    reg.add(
        ToolDef::new::<FileArgs>("people_file", Family::People)
            .label("Archivando el contacto en el CRM")
            .description(
                "Úsala cuando una persona ya revelada en este espacio de trabajo deba quedar archivada en un \
                 registro del CRM (por ejemplo, la Jefa de Compras en el registro de su empresa): agrega \
                 nombre, correo y puesto a la lista personas del registro, deja constancia en su historial y \
                 devuelve undo_token. Archivar dos veces a la misma persona no cambia nada. Falla con \
                 NOT_REVEALED si la persona no está revelada aquí, NOT_FOUND si el registro no es de este \
                 espacio de trabajo y PROTECTED_RESOURCE si la colección está archivada. NO la uses para \
                 revelar contactos (usa people_quote y people_reveal) ni para cambiar otros campos del \
                 registro (usa crm_record).",
            )
            .example(
                "Archiva a la persona revelada en el registro de su empresa",
                json!({"person_ref": "person:RUJBMDEwMTAxQUIx.0", "record_id": "record:rec_demo"}),
            )
            .side_effect(SideEffect::Write)
            .idempotent(true)
            .budget(4_000)
            .citations(&["ref", "person_ref", "undo_token", "already_filed"])
            .stage(Stage::ConListaGuardada, 190)
            .cues(&["archiv"])
            .handler(file),
    );
    reg.add(
        ToolDef::new::<StatusArgs>("people_status", Family::People)
            .label("Revisando la cotización de contactos")
            .description(
                "Úsala cuando necesites saber si una cotización de contactos sigue vigente, cuánto cuesta hoy \
                 (baja si alguien ya fue revelado) y si ya se reveló. NO la uses para cotizar personas nuevas \
                 (usa people_quote).",
            )
            .example("¿Sigue vigente la cotización?", json!({"quote_id": "quo_3f9c"}))
            .budget(2_000)
            .citations(&["ref", "status", "price", "expires_in_seconds"])
            .stage(Stage::DecisionPendiente, 60)
            .handler(status),
    );
}

fn card_row(card: &PersonCard) -> ResultRow {
    ResultRow::new(card.handle.clone(), card.label())
        .with("company_ref", card.company_ref())
        .with("company_name", &card.company_name)
        .with("role", &card.role)
        .with("seniority", card.seniority)
        .with("seniority_label", card.seniority.label())
}

fn view_row(v: &PersonView) -> ResultRow {
    let row = card_row(&v.card);
    match &v.revealed {
        Some(r) => row
            .with("revealed", true)
            .with("full_name", &r.full_name)
            .with("email", &r.email),
        None => row
            .with("revealed", false)
            .with("name_masked", &v.card.name_masked)
            .with("email_masked", &v.card.email_masked),
    }
}

async fn search(ctx: ToolCtx, args: SearchArgs) -> EngineResult<ToolOutput> {
    let people = ctx
        .engine
        .people
        .search(&ctx.caller, &args.company_ref)
        .await?;
    Ok(Envelope::rows(people.iter().map(view_row).collect()).into())
}

fn expires_in(expires_at: i64) -> i64 {
    ((expires_at - crate::base::clock::now_ms()) / 1000).max(0)
}

async fn quote(ctx: ToolCtx, args: QuoteArgs) -> EngineResult<ToolOutput> {
    let q = ctx.engine.people.quote(&ctx.caller, &args.handles).await?;
    let row = ResultRow::new(
        format!("quote:{}", q.id),
        format!("Cotización de {} contactos", q.people.len()),
    )
    .with("quote_id", &q.id)
    .with("price", q.price)
    .with("people", q.people.len())
    .with("to_reveal", q.to_reveal)
    .with("already_revealed", q.already_revealed)
    .with("contact_credits_balance", q.balance)
    .with("enough_credits", q.balance >= q.price)
    .with("expires_in_seconds", expires_in(q.expires_at))
    .with(
        "handles",
        q.people
            .iter()
            .map(|p| p.handle.clone())
            .collect::<Vec<_>>(),
    );
    let mut env = Envelope::rows(vec![row]);
    env.results.extend(q.people.iter().map(card_row));
    env.next_action = Some(match ctx.surface {
        Surface::Luna => format!(
            "Para revelar, propón la decisión revelar_contactos con quote_id {}.",
            q.id
        ),
        _ => format!(
            "Para revelar, llama people_reveal con quote_id {}, confirm true y max_credits {}.",
            q.id, q.price
        ),
    });
    Ok(env.into())
}

fn state_row(s: &QuoteState) -> ResultRow {
    let status = if s.executed {
        "revelada"
    } else if s.expired {
        "vencida"
    } else {
        "vigente"
    };
    ResultRow::new(
        format!("quote:{}", s.id),
        format!("Cotización de {} contactos", s.people.len()),
    )
    .with("quote_id", &s.id)
    .with("status", status)
    .with("price", s.price)
    .with("people", s.people.len())
    .with("already_revealed", s.already_revealed)
    .with("contact_credits_balance", s.balance)
    .with("enough_credits", s.balance >= s.price)
    .with("expires_in_seconds", expires_in(s.expires_at))
}

async fn reveal(ctx: ToolCtx, args: RevealArgs) -> EngineResult<ToolOutput> {
    let people = &ctx.engine.people;
    if ctx.is_preview() {
        // Luna never reveals: it gets the card's content and proposes the decision.
        let state = people.status(&ctx.caller, &args.quote_id).await?;
        if state.expired && !state.executed {
            return Err(crate::people::quote_expired());
        }
        let mut env = Envelope::rows(vec![state_row(&state).with("preview", true)]);
        env.next_action = Some(format!(
            "Revelar cuesta créditos: propón la decisión revelar_contactos con quote_id {}; la persona la resuelve.",
            state.id
        ));
        return Ok(env.into());
    }
    let out = people
        .reveal(
            &ctx.caller,
            &RevealRequest {
                quote_id: args.quote_id,
                confirm: args.confirm,
                max_credits: args.max_credits,
                idempotency_key: args.idempotency_key,
            },
            RevealVia {
                surface: ctx.surface.as_str(),
                auto_policy: ctx.auto_policy.as_deref(),
                call_ref: Some(&ctx.call_ref),
            },
        )
        .await?;
    if let Some(preview) = &out.preview {
        let mut env = Envelope::rows(vec![state_row(preview).with("preview", true)]);
        env.next_action = Some("Nada se cobró: repite con confirm true para revelar.".to_owned());
        return Ok(env.into());
    }
    let summary = ResultRow::new(
        format!("quote:{}", out.quote_id),
        format!("Revelado de {} contactos", out.people.len()),
    )
    .with("quote_id", &out.quote_id)
    .with("charged", out.charged)
    .with("receipt_id", &out.receipt_id)
    .with("already_revealed", out.already_revealed)
    .with("replayed", out.replayed)
    .with("contact_credits_balance", out.balance);
    let mut rows = vec![summary];
    rows.extend(out.people.iter().map(|p| {
        card_row(&p.card)
            .with("revealed", true)
            .with("full_name", &p.full_name)
            .with("email", &p.email)
            .with("charged", p.charged)
    }));
    Ok(Envelope::rows(rows).into())
}

async fn acquired(ctx: ToolCtx, args: AcquiredArgs) -> EngineResult<ToolOutput> {
    let rows = ctx
        .engine
        .people
        .acquired(
            &ctx.caller,
            args.company_ref.as_deref(),
            args.limit.unwrap_or(20),
        )
        .await?;
    Ok(Envelope::rows(
        rows.into_iter()
            .map(|a| {
                ResultRow::new(a.handle, format!("{} en {}", a.role, a.company_name))
                    .with("company_ref", a.company_ref)
                    .with("company_name", a.company_name)
                    .with("role", a.role)
                    .with("revealed_at", iso(a.revealed_at))
                    .with("revealed_by", a.revealed_by)
            })
            .collect(),
    )
    .into())
}

async fn file(ctx: ToolCtx, args: FileArgs) -> EngineResult<ToolOutput> {
    let filed = ctx
        .engine
        .people
        .file(&ctx.caller, ctx.surface, &args.person_ref, &args.record_id)
        .await?;
    let out = &filed.outcome;
    let row = out
        .record
        .to_row(&[])
        .with("person_ref", &filed.person.handle)
        .with("person_label", filed.person.label())
        .with("already_filed", filed.already_filed())
        .with("changed", out.undo_token.is_some())
        .with("undo_token", &out.undo_token)
        .with("dropped_fields", &out.dropped_fields);
    Ok(Envelope::rows(vec![row]).into())
}

async fn status(ctx: ToolCtx, args: StatusArgs) -> EngineResult<ToolOutput> {
    let state = ctx
        .engine
        .people
        .status(&ctx.caller, &args.quote_id)
        .await?;
    Ok(Envelope::rows(vec![state_row(&state)]).into())
}

pub(crate) fn iso(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}
