//! The audience as it stands and what it would receive: [`recipients`] (one per
//! revealed contact of the audience's companies) and `sequence_preview`.

use super::*;
/// The audience as it stands: one recipient per revealed contact of each company in
/// the audience's records, with its personalisation variables.
pub async fn recipients(engine: &impl Deps, s: &Sequence) -> EngineResult<Vec<Recipient>> {
    let records = crate::crm::records::list(
        engine.crm().store(),
        &s.workspace_id,
        &s.audience.collection_id,
        s.audience.stage.as_deref(),
    )
    .await?;
    let records: Vec<_> = match &s.audience.record_ids {
        Some(ids) => records
            .into_iter()
            .filter(|r| ids.contains(&r.id))
            .collect(),
        None => records,
    };
    let contacts = {
        let mut conn = engine.store().pool().acquire().await?;
        rows::revealed_contacts(&mut conn, &s.workspace_id).await?
    };
    // Which entity (RFC or directory id) each revealed contact's company is.
    let mut by_entity: BTreeMap<String, Vec<&rows::RevealedContact>> = BTreeMap::new();
    let mut award_of: BTreeMap<String, String> = BTreeMap::new();
    let mut zone_of: BTreeMap<String, chrono_tz::Tz> = BTreeMap::new();
    for c in &contacts {
        if let Some(co) = crate::crm::directory::get(engine.crm().store(), &c.company_ref).await? {
            if let Some(tz) = zones::of_place(co.state.as_deref(), co.city.as_deref()) {
                zone_of.insert(c.company_ref.clone(), tz);
            }
            by_entity.entry(co.entity_id()).or_default().push(c);
        }
        if !award_of.contains_key(&c.company_ref) {
            award_of.insert(
                c.company_ref.clone(),
                last_award(engine, &c.company_ref).await,
            );
        }
    }
    let sender_name = s
        .sender
        .split('<')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned();
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &records {
        let Some(entity) = &r.entity_id else { continue };
        for c in by_entity.get(entity).into_iter().flatten() {
            let email = c.email.trim().to_lowercase();
            if !seen.insert(email.clone()) {
                continue;
            }
            let mut vars = BTreeMap::new();
            vars.insert(
                "nombre".into(),
                c.full_name
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            );
            vars.insert("empresa".into(), c.company_name.clone());
            vars.insert("puesto".into(), c.role.clone());
            if let Some(estado) = r.fields.get("estado").and_then(|v| v.as_str()) {
                vars.insert("estado".into(), estado.to_owned());
            }
            if let Some(a) = award_of.get(&c.company_ref).filter(|a| !a.is_empty()) {
                vars.insert("adjudicacion".into(), a.clone());
            }
            vars.insert("remitente".into(), sender_name.clone());
            // The company's state in the directory, else the record's «estado».
            let time_zone = zone_of
                .get(&c.company_ref)
                .copied()
                .or_else(|| zones::of_place(vars.get("estado").map(String::as_str), None))
                .map(|tz| tz.name().to_owned());
            out.push(Recipient {
                email,
                record_id: r.id.clone(),
                vars,
                time_zone,
            });
        }
    }
    Ok(out)
}

/// The award that justified the company, in words ("IMSS · Cajas de cartón · 2025-03-02").
async fn last_award(engine: &impl Deps, company_ref: &str) -> String {
    let args = crate::market::types::GetArgs {
        record_ref: company_ref.to_owned(),
        include_awards: false,
    };
    match engine.market().get(&args).await {
        Ok(crate::market::types::GetResult {
            record: crate::market::types::MarketRecord::Supplier(d),
            ..
        }) => d
            .supplier
            .evidence
            .iter()
            .find(|e| e.kind == "adjudicacion")
            .map(|e| e.ref_label.clone())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// What a preview shows per recipient.
#[derive(Debug, Clone)]
pub struct RecipientPreview {
    pub email: String,
    pub suppressed: bool,
    /// Why this recipient will be skipped (es-MX), when suppressed.
    pub skip_reason: Option<String>,
    pub steps: Vec<template::Rendered>,
}

/// `sequence_preview`: the rendered steps per recipient, warnings, and what the
/// product does not do.
#[derive(Debug, Clone)]
pub struct Preview {
    pub sequence: Sequence,
    pub recipients: Vec<RecipientPreview>,
    pub warnings: Vec<String>,
}

/// Capabilities that do not exist, stated on every preview and card.
pub const GAPS: [&str; 3] = [
    "No hay envío de prueba.",
    "No se detectan respuestas solas: si alguien contesta, hay que marcarlo como respondido para detener sus pasos siguientes.",
    "No se miden aperturas ni clics.",
];

pub async fn preview(
    engine: &impl Deps,
    caller: &Caller,
    id: &str,
    only: Option<&str>,
) -> EngineResult<Preview> {
    let s = get(engine, caller, id).await?;
    let all = recipients(engine, &s).await?;
    let mut warnings = Vec::new();
    if all.is_empty() {
        warnings.push("Nadie recibiría esta secuencia: revela primero el contacto de las empresas de la audiencia.".to_owned());
    }
    let mut out = Vec::new();
    let mut conn = engine.store().pool().acquire().await?;
    for r in all
        .iter()
        .filter(|r| only.is_none_or(|o| o.eq_ignore_ascii_case(&r.email)))
    {
        let skip_reason = suppressions::find(&mut conn, &caller.workspace_id, &r.email)
            .await?
            .map(|s| s.reason.label().to_owned());
        let suppressed = skip_reason.is_some();
        if let Some(why) = &skip_reason {
            warnings.push(format!("{} se omitirá: {why}.", r.email));
        }
        let steps: Vec<template::Rendered> =
            s.steps.iter().map(|st| template::render(st, r)).collect();
        for (i, st) in steps.iter().enumerate() {
            if !st.empty.is_empty() {
                warnings.push(format!(
                    "Paso {} para {}: sin valor para {}.",
                    i + 1,
                    r.email,
                    st.empty
                        .iter()
                        .map(|v| format!("{{{{{v}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if !st.unknown.is_empty() {
                warnings.push(format!(
                    "Paso {}: {} no es una variable; usa {}.",
                    i + 1,
                    st.unknown
                        .iter()
                        .map(|v| format!("{{{{{v}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    template::VARIABLES.join(", ")
                ));
            }
        }
        out.push(RecipientPreview {
            email: r.email.clone(),
            suppressed,
            skip_reason,
            steps,
        });
    }
    if only.is_some() && out.is_empty() {
        return Err(EngineError::not_found("a ese destinatario en la audiencia"));
    }
    warnings.dedup();
    Ok(Preview {
        sequence: s,
        recipients: out,
        warnings,
    })
}
