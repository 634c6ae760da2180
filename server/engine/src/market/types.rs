//! Arguments and results of the market operations. Argument structs derive
//! `JsonSchema` and deny unknown fields so the tool registry can publish them as-is;
//! results are plain serde structs whose rows carry `ref`, `ref_label` and `evidence`.

use luna_protocol::error::ErrorBody;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::filters::MarketFilters;

mod results;

pub use results::*;

/// The five kinds of market record (CONTRACT §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    description = "Proveedores, Licitaciones, Adjudicaciones, Registros o marcas de riesgo."
)]
pub enum MarketKind {
    /// Proveedores.
    Suppliers,
    /// Licitaciones.
    Opportunities,
    /// Adjudicaciones.
    Awards,
    /// Registros.
    Permits,
    /// Marcas de riesgo.
    Risks,
}

impl MarketKind {
    pub const ALL: [MarketKind; 5] = [
        MarketKind::Suppliers,
        MarketKind::Opportunities,
        MarketKind::Awards,
        MarketKind::Permits,
        MarketKind::Risks,
    ];
    pub fn key(self) -> &'static str {
        match self {
            MarketKind::Suppliers => "suppliers",
            MarketKind::Opportunities => "opportunities",
            MarketKind::Awards => "awards",
            MarketKind::Permits => "permits",
            MarketKind::Risks => "risks",
        }
    }
    /// Product word (plural) for labels.
    pub fn label(self) -> &'static str {
        match self {
            MarketKind::Suppliers => "Proveedores",
            MarketKind::Opportunities => "Licitaciones",
            MarketKind::Awards => "Adjudicaciones",
            MarketKind::Permits => "Registros",
            MarketKind::Risks => "marcas de riesgo",
        }
    }
}

/// Procedure type under LAASSP, with its OCDS `procurementMethod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(description = "Tipo de procedimiento según la LAASSP.")]
pub enum Procedure {
    /// Licitación pública.
    Open,
    /// Invitación a cuando menos tres personas.
    Limited,
    /// Adjudicación directa.
    Direct,
}

impl Procedure {
    pub fn key(self) -> &'static str {
        match self {
            Procedure::Open => "open",
            Procedure::Limited => "limited",
            Procedure::Direct => "direct",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Procedure::Open => "licitación pública",
            Procedure::Limited => "invitación a cuando menos tres personas",
            Procedure::Direct => "adjudicación directa",
        }
    }
    pub fn from_key(s: &str) -> Option<Procedure> {
        match s {
            "open" => Some(Procedure::Open),
            "limited" | "selective" => Some(Procedure::Limited),
            "direct" => Some(Procedure::Direct),
            _ => None,
        }
    }
}

/// Kind of risk mark (closed enum, CONTRACT §5 rule 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(description = "Tipo de marca de riesgo.")]
pub enum MarkKind {
    /// SAT 69-B: presunto (presumed simulated invoicing).
    #[schemars(description = "SAT 69-B: presunto.")]
    #[serde(rename = "sat_69b_presunto")]
    Sat69bPresunto,
    /// SAT 69-B: definitivo.
    #[schemars(description = "SAT 69-B: definitivo.")]
    #[serde(rename = "sat_69b_definitivo")]
    Sat69bDefinitivo,
    /// SAT 69-B: desvirtuado (the taxpayer disproved it).
    #[schemars(description = "SAT 69-B: desvirtuado (el contribuyente lo desmintió).")]
    #[serde(rename = "sat_69b_desvirtuado")]
    Sat69bDesvirtuado,
    /// SAT 69-B: sentencia favorable.
    #[schemars(description = "SAT 69-B: sentencia favorable.")]
    #[serde(rename = "sat_69b_sentencia_favorable")]
    Sat69bSentenciaFavorable,
    /// Sanctioned supplier (SFP/Función Pública).
    #[schemars(description = "Proveedor sancionado por la Función Pública.")]
    ProveedorSancionado,
}

impl MarkKind {
    pub const ALL: [MarkKind; 5] = [
        MarkKind::Sat69bPresunto,
        MarkKind::Sat69bDefinitivo,
        MarkKind::Sat69bDesvirtuado,
        MarkKind::Sat69bSentenciaFavorable,
        MarkKind::ProveedorSancionado,
    ];
    pub fn key(self) -> &'static str {
        match self {
            MarkKind::Sat69bPresunto => "sat_69b_presunto",
            MarkKind::Sat69bDefinitivo => "sat_69b_definitivo",
            MarkKind::Sat69bDesvirtuado => "sat_69b_desvirtuado",
            MarkKind::Sat69bSentenciaFavorable => "sat_69b_sentencia_favorable",
            MarkKind::ProveedorSancionado => "proveedor_sancionado",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            MarkKind::Sat69bPresunto => "SAT 69-B presunto",
            MarkKind::Sat69bDefinitivo => "SAT 69-B definitivo",
            MarkKind::Sat69bDesvirtuado => "SAT 69-B desvirtuado",
            MarkKind::Sat69bSentenciaFavorable => "SAT 69-B sentencia favorable",
            MarkKind::ProveedorSancionado => "proveedor sancionado",
        }
    }
    pub fn from_key(s: &str) -> Option<MarkKind> {
        MarkKind::ALL.into_iter().find(|k| k.key() == s)
    }
    /// Whether the mark still weighs against the RFC (desvirtuado / sentencia favorable do not).
    pub fn is_adverse(self) -> bool {
        matches!(
            self,
            MarkKind::Sat69bPresunto | MarkKind::Sat69bDefinitivo | MarkKind::ProveedorSancionado
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeBand {
    Micro,
    Pequena,
    Mediana,
    Grande,
}

impl SizeBand {
    pub fn key(self) -> &'static str {
        match self {
            SizeBand::Micro => "micro",
            SizeBand::Pequena => "pequena",
            SizeBand::Mediana => "mediana",
            SizeBand::Grande => "grande",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    Supplier,
    Buyer,
    State,
    Year,
}

// ---------------------------------------------------------------- arguments

/// `market_search{kind, query?, filters, limit≤50, cursor?}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "Búsqueda en Proveedores, Licitaciones, Adjudicaciones, Registros o marcas de riesgo, con filtros y paginación sellada."
)]
pub struct SearchArgs {
    #[schemars(
        description = "Qué buscar: suppliers (Proveedores), opportunities (Licitaciones), awards (Adjudicaciones), permits (Registros) o risks (marcas de riesgo)."
    )]
    pub kind: MarketKind,
    /// Free text (folded: accents, ñ and case do not matter).
    #[serde(default)]
    #[schemars(description = "Texto libre; acentos, ñ y mayúsculas no importan.")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub query: Option<String>,
    /// Closed per kind; an unknown key is rejected with `allowed_values`.
    #[serde(default)]
    #[schemars(
        description = "Filtros cerrados por tipo; una clave desconocida se rechaza con allowed_values."
    )]
    pub filters: MarketFilters,
    /// Up to 5 states, any of them (instead of `filters.state`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        description = "Hasta 5 estados; basta con que el registro esté en uno (en lugar de filters.state)."
    )]
    #[schemars(schema_with = "crate::base::catalog::states::list_schema")]
    pub states: Vec<String>,
    /// 1..=50, default 20.
    #[serde(default)]
    #[schemars(description = "De 1 a 50; 20 si no se indica.")]
    pub limit: Option<u32>,
    /// Opaque cursor from a previous page of the same query.
    #[serde(default)]
    #[schemars(description = "Cursor opaco de la página anterior de la misma búsqueda.")]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub cursor: Option<String>,
}

/// `market_get{record_ref, include_awards?}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "Un registro completo con su evidencia.")]
pub struct GetArgs {
    /// `company:<id>` or `record:<kind>:<id>`.
    #[schemars(description = "company:<id> o record:<tipo>:<id>, tal como vino en una fila.")]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub record_ref: String,
    #[serde(default)]
    #[schemars(description = "true para incluir hasta 50 Adjudicaciones del proveedor.")]
    pub include_awards: bool,
}

/// `market_count{filters, states[]≤5}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "Conteo exacto del universo, con los mismos filtros que la búsqueda.")]
pub struct CountArgs {
    /// Which records to count; default `suppliers`.
    #[serde(default)]
    #[schemars(description = "Qué contar; suppliers si no se indica.")]
    pub kind: Option<MarketKind>,
    #[serde(default)]
    pub filters: MarketFilters,
    /// Up to 5 states, each counted on its own.
    #[serde(default)]
    #[schemars(
        description = "Hasta 5 estados, cada uno contado por separado (un nombre que no es estado recibe su propio error con los 32 nombres)."
    )]
    #[schemars(length(max = 5), inner(length(max = crate::base::bounds::NAME_MAX)))]
    pub states: Vec<String>,
}

/// `market_aggregate{filters, group_by}` over Adjudicaciones.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "Totales de Adjudicaciones agrupados.")]
pub struct AggregateArgs {
    #[serde(default)]
    pub filters: MarketFilters,
    /// Up to 5 states, any of them (instead of `filters.state`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        description = "Hasta 5 estados; basta con que la Adjudicación esté en uno (en lugar de filters.state)."
    )]
    #[schemars(schema_with = "crate::base::catalog::states::list_schema")]
    pub states: Vec<String>,
    #[schemars(
        description = "Agrupar por supplier (proveedor), buyer (comprador), state (estado) o year (año)."
    )]
    pub group_by: GroupBy,
    /// Groups returned, 1..=50, default 20.
    #[serde(default)]
    #[schemars(description = "Grupos a devolver, de 1 a 50; 20 si no se indica.")]
    pub limit: Option<u32>,
}

/// `market_history{rfc}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "La historia de compras de gobierno de una empresa.")]
pub struct HistoryArgs {
    #[schemars(description = "RFC de la empresa.")]
    #[schemars(length(max = 20))]
    pub rfc: String,
}

/// One segment of `market_compare`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "Un segmento de Adjudicaciones a comparar.")]
pub struct Segment {
    #[schemars(description = "Nombre corto del segmento, p. ej. «Jalisco 2024».")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub label: String,
    #[serde(default)]
    pub filters: MarketFilters,
}

/// `market_compare{segments}` (2..=5 segments of Adjudicaciones filters).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "Comparación de 2 a 5 segmentos de Adjudicaciones.")]
pub struct CompareArgs {
    #[schemars(description = "De 2 a 5 segmentos.")]
    #[schemars(length(max = 5))]
    pub segments: Vec<Segment>,
}

/// `market_screen{rfcs: 1..50}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "Revisión de riesgo de varias empresas.")]
pub struct ScreenArgs {
    #[schemars(description = "De 1 a 50 RFC a revisar contra las marcas de riesgo.")]
    #[schemars(length(max = 50), inner(length(max = 20)))]
    pub rfcs: Vec<String>,
}
