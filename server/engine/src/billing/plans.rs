//! What each plan includes (CONTRACT §3, 004 §10). The numbers are this project's choice:
//!
//! | plan | créditos de inteligencia / mes | créditos de contacto (prepago inicial) | búsquedas por día | contactos | secuencias | automático |
//! |---|---|---|---|---|---|---|
//! | Explorer | 30 | 0 | 5 | no | no | no |
//! | Founder | 2,000 | 100 | sin tope | sí | sí | sí (tope por sesión) |
//! | Commercial | 10,000 | 500 | sin tope | sí | sí | sí, configurable |
//!
//! Long research runs (CONTRACT §10) consume capped inference, not credits:
//!
//! | plan | investigaciones a la vez | tope de inferencia por investigación (pasos del modelo) |
//! |---|---|---|
//! | Explorer | 0 (no incluidas) | 0 |
//! | Founder | 1 | 4 |
//! | Commercial | 3 | 8 |
//!
//! Every plan shares the hourly read ceiling of `READS_PER_HOUR`.

use luna_protocol::account::Plan;

/// Reads per workspace per clock hour (CONTRACT §3).
pub const READS_PER_HOUR: i64 = 600;

/// Revealing one person costs this many créditos de contacto (CONTRACT §3).
pub const CONTACT_REVEAL_COST: i64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    pub monthly_intelligence: i64,
    pub initial_contact_credits: i64,
    /// `None`: no daily search quota.
    pub daily_searches: Option<i64>,
    pub contacts: bool,
    pub sequences: bool,
    pub auto: bool,
    /// Research runs running at once in a workspace (0: the plan has none).
    pub research_runs: u32,
    /// Model steps one research run may spend (framing, steering, write-up).
    pub research_inference: u32,
}

pub fn limits(plan: Plan) -> PlanLimits {
    match plan {
        Plan::Explorer => PlanLimits {
            monthly_intelligence: 30,
            initial_contact_credits: 0,
            daily_searches: Some(5),
            contacts: false,
            sequences: false,
            auto: false,
            research_runs: 0,
            research_inference: 0,
        },
        Plan::Founder => PlanLimits {
            monthly_intelligence: 2_000,
            initial_contact_credits: 100,
            daily_searches: None,
            contacts: true,
            sequences: true,
            auto: true,
            research_runs: 1,
            research_inference: 4,
        },
        Plan::Commercial => PlanLimits {
            monthly_intelligence: 10_000,
            initial_contact_credits: 500,
            daily_searches: None,
            contacts: true,
            sequences: true,
            auto: true,
            research_runs: 3,
            research_inference: 8,
        },
    }
}
