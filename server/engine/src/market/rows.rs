//! Mapping SQLite rows to result rows, with Spanish `ref_label`s and stable refs
//! (`company:<id>`, `record:<kind>:<id>`).

use crate::base::store::DbRow;
use sqlx::Row;

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

pub fn supplier(row: &DbRow) -> EngineResult<SupplierRow> {
    let id: String = row.try_get("id")?;
    let name: String = row.try_get("name")?;
    let state = state_name(row.try_get("state_code")?);
    let scian: Option<String> = row.try_get("scian")?;
    let ref_label = match &state {
        Some(s) => format!("{name} ({s})"),
        None => name.clone(),
    };
    Ok(SupplierRow {
        r#ref: company_ref(&id),
        ref_label,
        rfc: row.try_get("rfc")?,
        rfc_valid: row.try_get::<i64, _>("rfc_valid")? == 1,
        name,
        state,
        municipality: row.try_get("municipality")?,
        scian_name: scian
            .as_deref()
            .and_then(scian::name_of)
            .map(str::to_string),
        scian,
        size_band: row.try_get("size_band")?,
        website: row.try_get("website")?,
        logo_url: row.try_get("logo_url")?,
        awards_count: row.try_get("awards_count")?,
        awards_total_mxn: row.try_get("awards_total")?,
        last_award: row.try_get("last_award")?,
        source: row.try_get("source")?,
        evidence: Vec::new(),
        id,
    })
}

pub fn award(row: &DbRow) -> EngineResult<AwardRow> {
    let id: i64 = row.try_get("id")?;
    let supplier_id: String = row.try_get("supplier_id")?;
    let supplier_name: String = row.try_get("supplier_name")?;
    let buyer: String = row.try_get("buyer")?;
    let amount: Option<f64> = row.try_get("amount")?;
    let currency: String = row.try_get("currency")?;
    let date: Option<String> = row.try_get("date")?;
    let procedure: Option<String> = row.try_get("procedure")?;
    let mut label = format!("Adjudicación de {buyer} a {supplier_name}");
    if let Some(a) = amount {
        label.push_str(&format!(" por {}", money(a, &currency)));
    }
    if let Some(d) = &date {
        label.push_str(&format!(" ({d})"));
    }
    Ok(AwardRow {
        r#ref: record_ref("award", id),
        ref_label: label,
        id,
        ocid: row.try_get("ocid")?,
        supplier_ref: company_ref(&supplier_id),
        supplier_id,
        supplier_name,
        buyer,
        buyer_name: row.try_get("buyer_name")?,
        title: row.try_get("title")?,
        amount,
        currency,
        date,
        procedure_label: procedure
            .as_deref()
            .and_then(Procedure::from_key)
            .map(|p| p.label().to_string()),
        procedure,
        state: state_name(row.try_get("state_code")?),
        scian: row.try_get("scian")?,
        source: row.try_get("source")?,
        evidence: Vec::new(),
    })
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

pub fn opportunity(row: &DbRow) -> EngineResult<OpportunityRow> {
    let id: i64 = row.try_get("id")?;
    let title: String = row.try_get("title")?;
    let buyer: String = row.try_get("buyer")?;
    let procedure: Option<String> = row.try_get("procedure")?;
    Ok(OpportunityRow {
        r#ref: record_ref("opportunity", id),
        ref_label: format!("Licitación «{title}» de {buyer}"),
        id,
        ocid: row.try_get("ocid")?,
        title,
        buyer,
        buyer_name: row.try_get("buyer_name")?,
        procedure_label: procedure
            .as_deref()
            .and_then(Procedure::from_key)
            .map(|p| p.label().to_string()),
        procedure,
        state: state_name(row.try_get("state_code")?),
        scian: row.try_get("scian")?,
        amount: row.try_get("amount")?,
        currency: row.try_get("currency")?,
        published: row.try_get("published")?,
        closes: row.try_get("closes")?,
        status: row.try_get("status")?,
        source: row.try_get("source")?,
        evidence: Vec::new(),
    })
}

pub fn permit(row: &DbRow) -> EngineResult<PermitRow> {
    let id: i64 = row.try_get("id")?;
    let holder_name: String = row.try_get("holder_name")?;
    let permit_type: String = row.try_get("permit_type")?;
    let holder_id: Option<String> = row.try_get("holder_id")?;
    Ok(PermitRow {
        r#ref: record_ref("permit", id),
        ref_label: format!("{permit_type} de {holder_name}"),
        id,
        holder_ref: holder_id.as_deref().map(company_ref),
        holder_rfc: row.try_get("holder_rfc")?,
        holder_name,
        permit_type,
        number: row.try_get("number")?,
        status: row.try_get("status")?,
        date: row.try_get("date")?,
        state: state_name(row.try_get("state_code")?),
        source: row.try_get("source")?,
        evidence: Vec::new(),
    })
}

pub fn risk(row: &DbRow) -> EngineResult<RiskRow> {
    let id: i64 = row.try_get("id")?;
    let name: String = row.try_get("name")?;
    let mark_kind: String = row.try_get("mark_kind")?;
    let mark_label = MarkKind::from_key(&mark_kind)
        .map(|k| k.label().to_string())
        .unwrap_or_else(|| mark_kind.clone());
    Ok(RiskRow {
        r#ref: record_ref("risk", id),
        ref_label: format!("Marca de riesgo {mark_label}: {name}"),
        id,
        rfc: row.try_get("rfc")?,
        name,
        mark_kind,
        mark_label,
        source: row.try_get("source")?,
        date: row.try_get("date")?,
        notice: row.try_get("notice")?,
        note: row.try_get("note")?,
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
