//! Reading OCDS values: tolerant text, numbers, amounts and dates, Spanish role names,
//! and a supplier's identity from a party (RFC, hashed RFC, registry id or name).

use serde_json::Value;

use crate::base::catalog::rfc;
use crate::base::catalog::states::State;
use crate::base::catalog::text::fold;
use crate::market::types::Procedure;

pub(super) fn s(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(x) => {
            let t = x.trim();
            (!t.is_empty()).then(|| t.to_string())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

pub(super) fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(x) => x.trim().replace(',', "").parse().ok(),
        _ => None,
    }
}

pub(super) fn value_of(v: Option<&Value>) -> Option<(f64, String)> {
    let v = v?;
    let amount = num(v.get("amount"))?;
    let currency = s(v.get("currency")).unwrap_or_else(|| "MXN".into());
    Some((amount, currency))
}

pub(super) fn date_of(v: Option<&Value>) -> Option<String> {
    let d = s(v)?;
    let day = d.get(..10)?;
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    Some(day.to_string())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Role {
    Buyer,
    Supplier,
    Procuring,
    Tenderer,
    Other,
}

pub(super) fn role(r: &str) -> Role {
    match fold(r).replace(' ', "").as_str() {
        "buyer" | "comprador" => Role::Buyer,
        "supplier" | "proveedorocontratista" | "proveedor" | "contratista" => Role::Supplier,
        "procuringentity" | "entidadquerealizalacontratacion" => Role::Procuring,
        "tenderer" | "participante" | "licitante" => Role::Tenderer,
        _ => Role::Other,
    }
}

/// A supplier identity resolved from a party.
#[derive(Debug, Clone)]
pub(super) struct Party {
    pub(super) key: String,
    pub(super) rfc: Option<String>,
    pub(super) rfc_valid: bool,
    pub(super) name: String,
    /// An RFC a party without one in its main identifier publishes among its
    /// `additionalIdentifiers` (entity resolution links it by that RFC).
    pub(super) rfc_claimed: Option<String>,
    pub(super) state: Option<State>,
    pub(super) locality: Option<String>,
    pub(super) roles: Vec<Role>,
}

fn is_hash(id: &str) -> bool {
    id.len() >= 32 && id.chars().all(|c| c.is_ascii_hexdigit())
}

pub(super) fn party_identity(p: &Value, warnings: &mut Vec<String>) -> Option<Party> {
    let party_id = s(p.get("id"));
    let ident = p.get("identifier");
    let scheme = ident.and_then(|i| s(i.get("scheme"))).unwrap_or_default();
    let ident_id = ident.and_then(|i| s(i.get("id")));
    let raw = ident_id.clone().or_else(|| {
        party_id
            .clone()
            .map(|id| id.trim_start_matches("RFC-").to_string())
    })?;
    let check = rfc::check(&raw);
    let (key, rfc, rfc_valid) = if check.format_ok
        && (scheme.eq_ignore_ascii_case("RFC") || scheme.is_empty() || scheme.contains("RFC"))
    {
        (
            check.normalized.clone(),
            Some(check.normalized.clone()),
            check.check_digit_ok,
        )
    } else if is_hash(&raw) {
        warnings.push(format!(
            "Un proveedor publica su RFC cifrado ({}…); se guardó sin RFC.",
            &raw[..8]
        ));
        (format!("rfc-hash:{}", raw.to_lowercase()), None, false)
    } else if check.format_ok {
        (
            check.normalized.clone(),
            Some(check.normalized),
            check.check_digit_ok,
        )
    } else {
        let scheme = if scheme.is_empty() {
            "ID".to_string()
        } else {
            scheme
        };
        (format!("{scheme}:{raw}"), None, false)
    };
    let name = ident
        .and_then(|i| s(i.get("legalName")))
        .or_else(|| s(p.get("name")))
        .unwrap_or_else(|| key.clone());
    let rfc_claimed = if rfc.is_some() { None } else { claimed_rfc(p) };
    let address = p.get("address");
    let state = address
        .and_then(|a| s(a.get("region")))
        .and_then(|r| State::from_registry(&r));
    let locality = address.and_then(|a| s(a.get("locality")));
    let roles = p
        .get("roles")
        .and_then(Value::as_array)
        .map(|rs| rs.iter().filter_map(|r| r.as_str()).map(role).collect())
        .unwrap_or_default();
    Some(Party {
        key,
        rfc,
        rfc_valid,
        name,
        rfc_claimed,
        state,
        locality,
        roles,
    })
}

/// The first well-formed RFC among a party's `additionalIdentifiers` (scheme naming
/// RFC, e.g. `MX-RFC`).
fn claimed_rfc(p: &Value) -> Option<String> {
    p.get("additionalIdentifiers")?
        .as_array()?
        .iter()
        .filter(|i| s(i.get("scheme")).is_some_and(|sc| sc.to_ascii_uppercase().contains("RFC")))
        .filter_map(|i| s(i.get("id")))
        .map(|id| rfc::check(&id))
        .find(|c| c.format_ok)
        .map(|c| c.normalized)
}

pub(super) fn procedure_of(tender: Option<&Value>) -> Option<Procedure> {
    let t = tender?;
    if let Some(d) = s(t.get("procurementMethodDetails")) {
        let f = fold(&d);
        if f.contains("adjudicacion directa") {
            return Some(Procedure::Direct);
        }
        if f.contains("invitacion") {
            return Some(Procedure::Limited);
        }
        if f.contains("licitacion") {
            return Some(Procedure::Open);
        }
    }
    s(t.get("procurementMethod")).and_then(|m| Procedure::from_key(&m))
}

pub(super) fn budget_amount(release: &Value) -> Option<(f64, String)> {
    let budget = release.get("planning")?.get("budget")?;
    if let Some(v) = value_of(budget.get("amount")) {
        return Some(v);
    }
    let parts = budget.get("budgetBreakdown")?.as_array()?;
    let mut total = 0.0;
    let mut currency = "MXN".to_string();
    let mut any = false;
    for p in parts {
        if let Some((a, c)) = value_of(p.get("amount")) {
            total += a;
            currency = c;
            any = true;
        }
    }
    any.then_some((total, currency))
}

/// A release's `date` as a UTC timestamp with fixed width
/// (`YYYY-MM-DDTHH:MM:SS.mmmZ`), so text order is time order; a bare day counts as its
/// midnight.
pub(super) fn stamp_of(v: Option<&Value>) -> Option<String> {
    const FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";
    let d = s(v)?;
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&d) {
        return Some(t.with_timezone(&chrono::Utc).format(FORMAT).to_string());
    }
    if let Ok(t) = chrono::NaiveDateTime::parse_from_str(&d, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some(t.format(FORMAT).to_string());
    }
    date_of(v).map(|day| format!("{day}T00:00:00.000Z"))
}
