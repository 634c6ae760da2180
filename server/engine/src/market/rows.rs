//! Mapping market rows to result rows, with Spanish `ref_label`s and stable refs
//! (`company:<id>`, `record:<kind>:<id>`). Each table is read into its `Stored*` row
//! struct (`FromRow`) and decoded here.

use crate::base::store::DbRow;
use sqlx::FromRow;

use super::types::*;
use crate::base::catalog::scian;
use crate::base::catalog::states::State;
use crate::base::error::EngineResult;

pub const SUPPLIER_COLS: &str = "s.id, s.rfc, s.rfc_valid, s.name, s.state_code, s.municipality, s.scian, s.size_band, s.website, s.logo_url, s.awards_count, s.awards_total, s.last_award, s.source";
pub const AWARD_COLS: &str = "a.id, a.ocid, a.supplier_id, a.supplier_name, a.buyer, a.buyer_name, a.title, a.amount, a.currency, a.date, a.procedure, a.state_code, a.scian, a.source";
pub const OPP_COLS: &str = "o.id, o.ocid, o.title, o.buyer, o.buyer_name, o.procedure, o.state_code, o.scian, o.amount, o.currency, o.published, o.closes, o.status, o.source";
pub const PERMIT_COLS: &str = "p.id, p.holder_id, p.holder_rfc, p.holder_name, p.permit_type, p.number, p.status, p.date, p.state_code, p.source";
pub const RISK_COLS: &str = "r.id, r.rfc, r.name, r.mark_kind, r.source, r.date, r.notice, r.note";

/// `$1,234,567 MXN` style amount for labels.
pub fn money(amount: f64, currency: &str) -> String {
    let whole = amount.round() as i64;
    let digits = whole.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    let sign = if whole < 0 { "-" } else { "" };
    format!("{sign}${out} {currency}")
}

pub fn company_ref(id: &str) -> String {
    format!("company:{id}")
}

pub fn record_ref(kind: &str, id: i64) -> String {
    format!("record:{kind}:{id}")
}

fn state_name(code: Option<i64>) -> Option<String> {
    code.and_then(|c| u8::try_from(c).ok())
        .and_then(State::from_code)
        .map(|s| s.name().to_string())
}

/// `mk_suppliers` as stored.
#[derive(sqlx::FromRow)]
struct StoredSupplier {
    id: String,
    rfc: Option<String>,
    rfc_valid: i64,
    name: String,
    state_code: Option<i64>,
    municipality: Option<String>,
    scian: Option<String>,
    size_band: Option<String>,
    website: Option<String>,
    logo_url: Option<String>,
    awards_count: i64,
    awards_total: f64,
    last_award: Option<String>,
    source: String,
}

pub fn supplier(row: &DbRow) -> EngineResult<SupplierRow> {
    let r = StoredSupplier::from_row(row)?;
    let state = state_name(r.state_code);
    let ref_label = match &state {
        Some(s) => format!("{} ({s})", r.name),
        None => r.name.clone(),
    };
    Ok(SupplierRow {
        r#ref: company_ref(&r.id),
        ref_label,
        rfc: r.rfc,
        rfc_valid: r.rfc_valid == 1,
        name: r.name,
        state,
        municipality: r.municipality,
        scian_name: r
            .scian
            .as_deref()
            .and_then(scian::name_of)
            .map(str::to_string),
        scian: r.scian,
        size_band: r.size_band,
        website: r.website,
        logo_url: r.logo_url,
        awards_count: r.awards_count,
        awards_total_mxn: r.awards_total,
        last_award: r.last_award,
        source: r.source,
        evidence: Vec::new(),
        id: r.id,
    })
}

/// `mk_awards` as stored.
#[derive(sqlx::FromRow)]
struct StoredAward {
    id: i64,
    ocid: Option<String>,
    supplier_id: String,
    supplier_name: String,
    buyer: String,
    buyer_name: Option<String>,
    title: String,
    amount: Option<f64>,
    currency: String,
    date: Option<String>,
    procedure: Option<String>,
    state_code: Option<i64>,
    scian: Option<String>,
    source: String,
}

pub fn award(row: &DbRow) -> EngineResult<AwardRow> {
    let r = StoredAward::from_row(row)?;
    let mut label = format!("Adjudicación de {} a {}", r.buyer, r.supplier_name);
    if let Some(a) = r.amount {
        label.push_str(&format!(" por {}", money(a, &r.currency)));
    }
    if let Some(d) = &r.date {
        label.push_str(&format!(" ({d})"));
    }
    Ok(AwardRow {
        r#ref: record_ref("award", r.id),
        ref_label: label,
        id: r.id,
        ocid: r.ocid,
        supplier_ref: company_ref(&r.supplier_id),
        supplier_id: r.supplier_id,
        supplier_name: r.supplier_name,
        buyer: r.buyer,
        buyer_name: r.buyer_name,
        title: r.title,
        amount: r.amount,
        currency: r.currency,
        date: r.date,
        procedure_label: procedure_label(r.procedure.as_deref()),
        procedure: r.procedure,
        state: state_name(r.state_code),
        scian: r.scian,
        source: r.source,
        evidence: Vec::new(),
    })
}

fn procedure_label(key: Option<&str>) -> Option<String> {
    key.and_then(Procedure::from_key)
        .map(|p| p.label().to_string())
}

pub fn award_evidence(a: &AwardRow) -> Evidence {
    Evidence {
        r#ref: a.r#ref.clone(),
        ref_label: a.ref_label.clone(),
        kind: "adjudicacion".into(),
        date: a.date.clone(),
        amount: a.amount,
        buyer: Some(a.buyer.clone()),
    }
}

/// `mk_opportunities` as stored.
#[derive(sqlx::FromRow)]
struct StoredOpportunity {
    id: i64,
    ocid: String,
    title: String,
    buyer: String,
    buyer_name: Option<String>,
    procedure: Option<String>,
    state_code: Option<i64>,
    scian: Option<String>,
    amount: Option<f64>,
    currency: String,
    published: Option<String>,
    closes: Option<String>,
    status: Option<String>,
    source: String,
}

pub fn opportunity(row: &DbRow) -> EngineResult<OpportunityRow> {
    let r = StoredOpportunity::from_row(row)?;
    Ok(OpportunityRow {
        r#ref: record_ref("opportunity", r.id),
        ref_label: format!("Licitación «{}» de {}", r.title, r.buyer),
        id: r.id,
        ocid: r.ocid,
        title: r.title,
        buyer: r.buyer,
        buyer_name: r.buyer_name,
        procedure_label: procedure_label(r.procedure.as_deref()),
        procedure: r.procedure,
        state: state_name(r.state_code),
        scian: r.scian,
        amount: r.amount,
        currency: r.currency,
        published: r.published,
        closes: r.closes,
        status: r.status,
        source: r.source,
        evidence: Vec::new(),
    })
}

/// `mk_permits` as stored.
#[derive(sqlx::FromRow)]
struct StoredPermit {
    id: i64,
    holder_id: Option<String>,
    holder_rfc: Option<String>,
    holder_name: String,
    permit_type: String,
    number: Option<String>,
    status: String,
    date: Option<String>,
    state_code: Option<i64>,
    source: String,
}

pub fn permit(row: &DbRow) -> EngineResult<PermitRow> {
    let r = StoredPermit::from_row(row)?;
    Ok(PermitRow {
        r#ref: record_ref("permit", r.id),
        ref_label: format!("{} de {}", r.permit_type, r.holder_name),
        id: r.id,
        holder_ref: r.holder_id.as_deref().map(company_ref),
        holder_rfc: r.holder_rfc,
        holder_name: r.holder_name,
        permit_type: r.permit_type,
        number: r.number,
        status: r.status,
        date: r.date,
        state: state_name(r.state_code),
        source: r.source,
        evidence: Vec::new(),
    })
}

/// `mk_risks` as stored. `mark_kind` is the source's text: a kind the catalogue does
/// not know is shown as it came, not refused.
#[derive(sqlx::FromRow)]
struct StoredRisk {
    id: i64,
    rfc: String,
    name: String,
    mark_kind: String,
    source: String,
    date: Option<String>,
    notice: Option<String>,
    note: Option<String>,
}

pub fn risk(row: &DbRow) -> EngineResult<RiskRow> {
    let r = StoredRisk::from_row(row)?;
    let mark_label = MarkKind::from_key(&r.mark_kind)
        .map(|k| k.label().to_string())
        .unwrap_or_else(|| r.mark_kind.clone());
    Ok(RiskRow {
        r#ref: record_ref("risk", r.id),
        ref_label: format!("Marca de riesgo {mark_label}: {}", r.name),
        id: r.id,
        rfc: r.rfc,
        name: r.name,
        mark_kind: r.mark_kind,
        mark_label,
        source: r.source,
        date: r.date,
        notice: r.notice,
        note: r.note,
        evidence: Vec::new(),
    })
}

pub fn risk_evidence(r: &RiskRow) -> Evidence {
    Evidence {
        r#ref: r.r#ref.clone(),
        ref_label: r.ref_label.clone(),
        kind: "marca_de_riesgo".into(),
        date: r.date.clone(),
        amount: None,
        buyer: None,
    }
}

pub fn permit_evidence(p: &PermitRow) -> Evidence {
    Evidence {
        r#ref: p.r#ref.clone(),
        ref_label: p.ref_label.clone(),
        kind: "registro".into(),
        date: p.date.clone(),
        amount: None,
        buyer: None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn money_groups_thousands() {
        assert_eq!(super::money(1234567.4, "MXN"), "$1,234,567 MXN");
        assert_eq!(super::money(999.0, "USD"), "$999 USD");
    }
}
