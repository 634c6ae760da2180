//! Results of the market operations: the rows of each kind with their evidence, and
//! one result struct per operation.

use super::*;

/// A piece of evidence attached to a row: an award, a mark or a registration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    /// `adjudicacion` | `marca_de_riesgo` | `registro`.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buyer: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SupplierRow {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub id: String,
    pub rfc: Option<String>,
    pub rfc_valid: bool,
    pub name: String,
    pub state: Option<String>,
    pub municipality: Option<String>,
    pub scian: Option<String>,
    pub scian_name: Option<String>,
    pub size_band: Option<String>,
    pub website: Option<String>,
    pub logo_url: Option<String>,
    pub awards_count: i64,
    pub awards_total_mxn: f64,
    pub last_award: Option<String>,
    pub source: String,
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpportunityRow {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub id: i64,
    pub ocid: String,
    pub title: String,
    pub buyer: String,
    pub buyer_name: Option<String>,
    pub procedure: Option<String>,
    pub procedure_label: Option<String>,
    pub state: Option<String>,
    pub scian: Option<String>,
    pub amount: Option<f64>,
    pub currency: String,
    pub published: Option<String>,
    pub closes: Option<String>,
    pub status: Option<String>,
    pub source: String,
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AwardRow {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub id: i64,
    pub ocid: Option<String>,
    pub supplier_ref: String,
    pub supplier_id: String,
    pub supplier_name: String,
    pub buyer: String,
    pub buyer_name: Option<String>,
    pub title: String,
    pub amount: Option<f64>,
    pub currency: String,
    pub date: Option<String>,
    pub procedure: Option<String>,
    pub procedure_label: Option<String>,
    pub state: Option<String>,
    pub scian: Option<String>,
    pub source: String,
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PermitRow {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub id: i64,
    pub holder_ref: Option<String>,
    pub holder_rfc: Option<String>,
    pub holder_name: String,
    pub permit_type: String,
    pub number: Option<String>,
    pub status: String,
    pub date: Option<String>,
    pub state: Option<String>,
    pub source: String,
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RiskRow {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub id: i64,
    pub rfc: String,
    pub name: String,
    pub mark_kind: String,
    pub mark_label: String,
    pub source: String,
    pub date: Option<String>,
    pub notice: Option<String>,
    pub note: Option<String>,
    pub evidence: Vec<Evidence>,
}

/// One row of any kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MarketRow {
    Supplier(SupplierRow),
    Opportunity(OpportunityRow),
    Award(AwardRow),
    Permit(PermitRow),
    Risk(RiskRow),
}

impl MarketRow {
    pub fn ref_str(&self) -> &str {
        match self {
            MarketRow::Supplier(r) => &r.r#ref,
            MarketRow::Opportunity(r) => &r.r#ref,
            MarketRow::Award(r) => &r.r#ref,
            MarketRow::Permit(r) => &r.r#ref,
            MarketRow::Risk(r) => &r.r#ref,
        }
    }
    pub fn ref_label(&self) -> &str {
        match self {
            MarketRow::Supplier(r) => &r.ref_label,
            MarketRow::Opportunity(r) => &r.ref_label,
            MarketRow::Award(r) => &r.ref_label,
            MarketRow::Permit(r) => &r.ref_label,
            MarketRow::Risk(r) => &r.ref_label,
        }
    }
}

/// A page of `market_search`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchPage {
    pub kind: MarketKind,
    pub results: Vec<MarketRow>,
    pub shown: usize,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Which branch `market_get` ran (billing charges by branch, CONTRACT §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GetBranch {
    Supplier,
    Opportunity,
    Award,
    Permit,
    Risk,
}

#[derive(Debug, Clone, Serialize)]
pub struct SupplierDetail {
    #[serde(flatten)]
    pub supplier: SupplierRow,
    /// Present when `include_awards` (most recent first, up to 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awards: Option<Vec<AwardRow>>,
    pub marks: Vec<RiskRow>,
    pub permits: Vec<PermitRow>,
    /// Its other identities in the data — a hashed RFC, a state registry id, a name
    /// alone — linked to it by entity resolution (`market::entities`), most confident
    /// first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identities: Vec<SupplierIdentity>,
    /// For an identity without an RFC: the supplier it was linked to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belongs_to: Option<SupplierIdentity>,
}

/// One identity of a supplier linked by entity resolution (`market::entities`).
#[derive(Debug, Clone, Serialize)]
pub struct SupplierIdentity {
    /// `company:<id>`, for `market_get`.
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub id: String,
    pub name: String,
    /// How the id identifies it, in Spanish: «RFC», «RFC cifrado», «registro estatal»
    /// or «solo nombre».
    pub kind: String,
    /// `rfc` (it publishes the same RFC) or `nombre` (same legal name, suffixes folded).
    pub method: String,
    /// 1.0 by RFC; 0.9 same name, 0.8 same name once the company suffixes are folded.
    pub confidence: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "record_kind", rename_all = "snake_case")]
pub enum MarketRecord {
    Supplier(Box<SupplierDetail>),
    Opportunity(OpportunityRow),
    Award(AwardRow),
    Permit(PermitRow),
    Risk(RiskRow),
}

#[derive(Debug, Clone, Serialize)]
pub struct GetResult {
    pub branch: GetBranch,
    pub record: MarketRecord,
}

/// Per-state count; `count: null` with `error` when that state could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct StateCount {
    /// The state as written by the caller.
    pub input: String,
    pub state: Option<String>,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    pub ref_label: String,
    pub count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CountResult {
    pub kind: MarketKind,
    /// Empty when no `states` were given.
    pub states: Vec<StateCount>,
    /// Exact total; `null` if any state failed.
    pub total: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregateGroup {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub key: String,
    pub awards: u64,
    pub amount_mxn: f64,
    pub suppliers: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AggregateResult {
    pub group_by: GroupBy,
    pub groups: Vec<AggregateGroup>,
    pub shown: usize,
    pub has_more: bool,
    pub total_awards: u64,
    pub total_amount_mxn: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct YearStat {
    pub year: i64,
    pub awards: u64,
    pub amount_mxn: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryResult {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub rfc: String,
    pub check_digit_ok: bool,
    pub warnings: Vec<String>,
    pub supplier: Option<SupplierRow>,
    pub by_year: Vec<YearStat>,
    /// Most recent awards (up to 20).
    pub awards: Vec<AwardRow>,
    pub marks: Vec<RiskRow>,
    pub permits: Vec<PermitRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BuyerShare {
    pub buyer: String,
    pub awards: u64,
    pub amount_mxn: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SegmentStats {
    pub label: String,
    pub awards: u64,
    pub amount_mxn: f64,
    pub avg_amount_mxn: Option<f64>,
    pub suppliers: u64,
    pub top_buyers: Vec<BuyerShare>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompareResult {
    pub segments: Vec<SegmentStats>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScreenRow {
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub ref_label: String,
    pub input: String,
    pub rfc: String,
    pub format_ok: bool,
    pub check_digit_ok: bool,
    pub warnings: Vec<String>,
    pub known_supplier: bool,
    /// `sin_marcas` | `con_marcas_no_vigentes` | `con_marcas`.
    pub risk_level: String,
    pub marks: Vec<RiskRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScreenResult {
    pub results: Vec<ScreenRow>,
    pub with_marks: usize,
}
