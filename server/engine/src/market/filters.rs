//! Structured filters. The wire struct is the union of every filter key; each kind
//! admits a closed subset (`allowed_keys`) and an unknown or foreign key is rejected
//! with `INVALID_ARGUMENT` + `allowed_values`, never dropped. Resolution turns loose
//! input (state names, giros, dates) into checked values and then into SQL.

use luna_protocol::error::{ErrorBody, ErrorCode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fulltext::{self, Target};
use super::types::{MarkKind, MarketKind, Procedure, SizeBand};
use crate::base::catalog::scian::{self, Giro};
use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{like_contains, like_prefix, Backend, LIKE_ESCAPE};

mod clauses;

pub use clauses::{buyer_clause, where_for, Val, Where};

/// Filters as they arrive. Which keys a kind accepts: see [`allowed_keys`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "Filtros cerrados por tipo de registro; una clave desconocida se rechaza con allowed_values."
)]
pub struct MarketFilters {
    /// One state (CDMX, Edomex… accepted; the bare country "México" is not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Un estado, por su nombre (se aceptan CDMX, Edomex…; «México» a secas no es un estado)."
    )]
    #[schemars(schema_with = "crate::base::catalog::states::schema")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Municipio dentro del estado.")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub municipality: Option<String>,
    /// Giro in words: empaque, insumos médicos, construcción, servicios de TI…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Giro en palabras: empaque, insumos médicos, construcción, servicios de TI…"
    )]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub giro: Option<String>,
    /// SCIAN code prefix, 2 to 6 digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Prefijo del código SCIAN, de 2 a 6 dígitos.")]
    #[schemars(length(max = 10))]
    pub scian: Option<String>,
    /// Government buyer: IMSS, ISSSTE, CFE, PEMEX… or part of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Comprador de gobierno: IMSS, ISSSTE, CFE, PEMEX… o parte de su nombre."
    )]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub buyer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Tipo de procedimiento: licitación pública, invitación a cuando menos tres o adjudicación directa."
    )]
    pub procedure: Option<Procedure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Monto mínimo en pesos (MXN).")]
    pub amount_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Monto máximo en pesos (MXN).")]
    pub amount_max: Option<f64>,
    /// `YYYY-MM-DD` (or `YYYY-MM`, `YYYY`: from its first day), inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Desde esta fecha, AAAA-MM-DD (o el mes AAAA-MM, o el año AAAA), inclusive."
    )]
    #[schemars(length(max = crate::base::bounds::DATE_MAX))]
    pub date_from: Option<String>,
    /// `YYYY-MM-DD` (or `YYYY-MM`, `YYYY`: to its last day), inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Hasta esta fecha, AAAA-MM-DD (o el mes AAAA-MM, o el año AAAA), inclusive."
    )]
    #[schemars(length(max = crate::base::bounds::DATE_MAX))]
    pub date_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "RFC exacto de la empresa.")]
    #[schemars(length(max = 20))]
    pub rfc: Option<String>,
    /// Proveedores: true = already sold to government (has Adjudicaciones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Proveedores: true = ya le vendió a gobierno (tiene Adjudicaciones)."
    )]
    pub has_awards: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Tamaño de la empresa: micro, pequeña, mediana o grande.")]
    pub size_band: Option<SizeBand>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Tipo de marca de riesgo (SAT 69-B o proveedor sancionado).")]
    pub mark_kind: Option<MarkKind>,
    /// Registros: e.g. "registro sanitario".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Registros: por ejemplo «registro sanitario».")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub permit_type: Option<String>,
    /// Licitaciones: active | complete | planning | cancelled; Registros: vigente | vencido…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Licitaciones: active | complete | planning | cancelled; Registros: vigente | vencido…"
    )]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub status: Option<String>,
}

/// Every key of [`MarketFilters`].
pub const ALL_KEYS: &[&str] = &[
    "state",
    "municipality",
    "giro",
    "scian",
    "buyer",
    "procedure",
    "amount_min",
    "amount_max",
    "date_from",
    "date_to",
    "rfc",
    "has_awards",
    "size_band",
    "mark_kind",
    "permit_type",
    "status",
];

/// The closed set of filter keys per kind.
pub fn allowed_keys(kind: MarketKind) -> &'static [&'static str] {
    match kind {
        MarketKind::Suppliers => &[
            "state",
            "municipality",
            "giro",
            "scian",
            "size_band",
            "rfc",
            "has_awards",
            "buyer",
            "date_from",
            "date_to",
        ],
        MarketKind::Opportunities => &[
            "state",
            "giro",
            "scian",
            "buyer",
            "procedure",
            "amount_min",
            "amount_max",
            "date_from",
            "date_to",
            "status",
        ],
        MarketKind::Awards => &[
            "state",
            "giro",
            "scian",
            "buyer",
            "procedure",
            "amount_min",
            "amount_max",
            "date_from",
            "date_to",
            "rfc",
        ],
        MarketKind::Permits => &[
            "state",
            "rfc",
            "permit_type",
            "status",
            "date_from",
            "date_to",
        ],
        MarketKind::Risks => &["rfc", "mark_kind", "date_from", "date_to"],
    }
}

fn unknown_key_error(key: &str, kind: MarketKind) -> EngineError {
    let allowed = allowed_keys(kind);
    let hint = if ALL_KEYS.contains(&key) {
        format!(
            "El filtro `{key}` no aplica a {}; usa solo los filtros permitidos para ese tipo.",
            kind.label()
        )
    } else {
        format!(
            "`{key}` no es un filtro; los filtros de {} son: {}.",
            kind.label(),
            allowed.join(", ")
        )
    };
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::InvalidArgument,
            format!("Filtro no admitido para {}: «{key}».", kind.label()),
            hint,
        )
        .with_allowed_values(allowed.iter().map(|s| s.to_string())),
    )
}

/// Checks raw filter keys (before deserialising) against the kind's closed set.
pub fn check_raw_keys(
    kind: MarketKind,
    filters: &serde_json::Map<String, serde_json::Value>,
) -> EngineResult<()> {
    let allowed = allowed_keys(kind);
    for key in filters.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(unknown_key_error(key, kind));
        }
    }
    Ok(())
}

pub(crate) fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

/// Filters after validation, ready for SQL.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Resolved {
    pub state: Option<State>,
    /// Several states (`states[]` of market_search/market_aggregate): any of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<State>,
    pub municipality: Option<String>,
    /// SCIAN prefixes (from `giro` and/or `scian`); any of them matches.
    pub scian: Vec<String>,
    pub buyer: Option<String>,
    pub procedure: Option<Procedure>,
    pub amount_min: Option<f64>,
    pub amount_max: Option<f64>,
    pub date_from: Option<String>,
    pub date_to: Option<String>,
    pub rfc: Option<String>,
    pub has_awards: Option<bool>,
    pub size_band: Option<SizeBand>,
    pub mark_kind: Option<MarkKind>,
    pub permit_type: Option<String>,
    pub status: Option<String>,
}

fn parse_date(value: &str, end: bool) -> EngineResult<String> {
    let v = value.trim();
    let bad = || {
        invalid(
            format!("«{v}» no es una fecha válida."),
            "Usa el formato AAAA-MM-DD (por ejemplo 2023-01-31), el mes (2023-01) o solo el año (2023).",
        )
    };
    if v.len() == 4 && v.chars().all(|c| c.is_ascii_digit()) {
        return Ok(if end {
            format!("{v}-12-31")
        } else {
            format!("{v}-01-01")
        });
    }
    // A month: its first day, or its last as the end of a period.
    if v.len() == 7 {
        let first =
            chrono::NaiveDate::parse_from_str(&format!("{v}-01"), "%Y-%m-%d").map_err(|_| bad())?;
        if !end {
            return Ok(first.format("%Y-%m-%d").to_string());
        }
        let last = first
            .checked_add_months(chrono::Months::new(1))
            .and_then(|next| next.pred_opt())
            .ok_or_else(bad)?;
        return Ok(last.format("%Y-%m-%d").to_string());
    }
    chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").map_err(|_| bad())?;
    Ok(v.to_string())
}

impl MarketFilters {
    /// Keys present in this value.
    pub fn present_keys(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        macro_rules! k {
            ($($f:ident),*) => { $( if self.$f.is_some() { keys.push(stringify!($f)); } )* };
        }
        k!(
            state,
            municipality,
            giro,
            scian,
            buyer,
            procedure,
            amount_min,
            amount_max,
            date_from,
            date_to,
            rfc,
            has_awards,
            size_band,
            mark_kind,
            permit_type,
            status
        );
        keys
    }

    /// Validates against `kind` and resolves every value. Typed errors only.
    pub fn resolve(&self, kind: MarketKind) -> EngineResult<Resolved> {
        let allowed = allowed_keys(kind);
        for key in self.present_keys() {
            if !allowed.contains(&key) {
                return Err(unknown_key_error(key, kind));
            }
        }
        let mut r = Resolved::default();
        if let Some(s) = &self.state {
            r.state = Some(State::normalize(s, StateContext::Filter)?);
        }
        r.municipality = self
            .municipality
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        if let Some(g) = &self.giro {
            let giro = Giro::parse(g)?;
            r.scian.extend(giro.codes().into_iter().map(str::to_string));
        }
        if let Some(s) = &self.scian {
            let prefix = scian::parse_prefix(s)?;
            if self.giro.is_some() {
                // Both: keep the giro codes that fall under the prefix.
                r.scian.retain(|c| c.starts_with(&prefix));
                if r.scian.is_empty() {
                    return Err(invalid(
                        "El giro y el código SCIAN no se cruzan.",
                        "Usa solo `giro` o solo `scian`.",
                    ));
                }
            } else {
                r.scian.push(prefix);
            }
        }
        r.buyer = self
            .buyer
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        r.procedure = self.procedure;
        for (v, name) in [
            (self.amount_min, "amount_min"),
            (self.amount_max, "amount_max"),
        ] {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 {
                    return Err(invalid(
                        format!("`{name}` debe ser un monto positivo."),
                        "Escribe el monto en pesos, sin signos ni comas.",
                    ));
                }
            }
        }
        r.amount_min = self.amount_min;
        r.amount_max = self.amount_max;
        if let (Some(a), Some(b)) = (r.amount_min, r.amount_max) {
            if a > b {
                return Err(invalid(
                    "`amount_min` es mayor que `amount_max`.",
                    "Invierte los montos del rango.",
                ));
            }
        }
        if let Some(d) = &self.date_from {
            r.date_from = Some(parse_date(d, false)?);
        }
        if let Some(d) = &self.date_to {
            r.date_to = Some(parse_date(d, true)?);
        }
        if let (Some(a), Some(b)) = (&r.date_from, &r.date_to) {
            if a > b {
                return Err(invalid(
                    "`date_from` es posterior a `date_to`.",
                    "Invierte las fechas del periodo.",
                ));
            }
        }
        if let Some(rfc) = &self.rfc {
            let check = crate::base::catalog::rfc::check(rfc);
            if !check.format_ok {
                return Err(invalid(
                    format!("«{}» no tiene formato de RFC.", rfc.trim()),
                    "Un RFC de persona moral tiene 12 caracteres (3 letras, fecha AAMMDD y homoclave); de persona física, 13.",
                ));
            }
            r.rfc = Some(check.normalized);
        }
        r.has_awards = self.has_awards;
        r.size_band = self.size_band;
        r.mark_kind = self.mark_kind;
        r.permit_type = self
            .permit_type
            .as_deref()
            .map(text::fold)
            .filter(|s| !s.is_empty());
        if let Some(s) = &self.status {
            let f = text::fold(s).replace(' ', "_");
            let allowed: &[&str] = match kind {
                MarketKind::Opportunities => &["planning", "active", "complete", "cancelled"],
                _ => &["vigente", "vencido", "en_tramite", "revocado"],
            };
            if !allowed.contains(&f.as_str()) {
                return Err(EngineError::Typed(
                    ErrorBody::new(
                        ErrorCode::InvalidArgument,
                        format!("Estado de trámite no reconocido: «{}».", s.trim()),
                        "Usa uno de los valores permitidos.",
                    )
                    .with_allowed_values(allowed.iter().map(|s| s.to_string())),
                ));
            }
            r.status = Some(f);
        }
        Ok(r)
    }
}

pub use super::fulltext::{fts_query, with_state};

/// Most states in `states[]` (market_search, market_aggregate).
pub const MAX_STATES: usize = 5;

/// Resolves `states[]`: at most five, each one of the 32 states, none repeated, and not
/// together with `filters.state`. Typed `INVALID_ARGUMENT` otherwise.
pub fn resolve_states(inputs: &[String], r: &mut Resolved) -> EngineResult<()> {
    if inputs.is_empty() {
        return Ok(());
    }
    if inputs.len() > MAX_STATES {
        return Err(invalid(
            format!(
                "`states` admite hasta {MAX_STATES} estados; recibimos {}.",
                inputs.len()
            ),
            "Divide la búsqueda en varias de hasta cinco estados.",
        ));
    }
    if r.state.is_some() {
        return Err(invalid(
            "Usa `filters.state` o `states`, no los dos.",
            "Para varios estados ponlos todos en `states` y quita `state` de los filtros.",
        ));
    }
    for input in inputs {
        let s = State::normalize(input, StateContext::Filter)?;
        if r.states.contains(&s) {
            return Err(invalid(
                format!("{} aparece más de una vez en `states`.", s.name()),
                "Escribe cada estado una sola vez.",
            ));
        }
        r.states.push(s);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_foreign_keys_are_rejected_with_allowed_values() {
        let f = MarketFilters {
            mark_kind: Some(MarkKind::Sat69bDefinitivo),
            ..Default::default()
        };
        let err = f.resolve(MarketKind::Suppliers).unwrap_err().body();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        let allowed = err.allowed_values.unwrap();
        assert!(allowed.contains(&"giro".to_string()));
        assert!(!allowed.contains(&"mark_kind".to_string()));
        assert!(f.resolve(MarketKind::Risks).is_ok());

        let raw = serde_json::json!({"color": "rojo"});
        let err = check_raw_keys(MarketKind::Awards, raw.as_object().unwrap())
            .unwrap_err()
            .body();
        assert!(err.hint.contains("no es un filtro"));
    }

    #[test]
    fn resolves_giro_state_and_dates() {
        let f = MarketFilters {
            state: Some("jal".into()),
            giro: Some("empaque".into()),
            date_from: Some("2020".into()),
            date_to: Some("2021-06-30".into()),
            ..Default::default()
        };
        let r = f.resolve(MarketKind::Suppliers).unwrap();
        assert_eq!(r.state, Some(State::Jalisco));
        assert!(r.scian.contains(&"322210".to_string()));
        assert_eq!(r.date_from.as_deref(), Some("2020-01-01"));
        let bad = MarketFilters {
            date_from: Some("ayer".into()),
            ..Default::default()
        };
        assert!(bad.resolve(MarketKind::Awards).is_err());
    }
}
