//! Deterministic, seeded generator of realistic market data (ChaCha8 seeded from a
//! `u64`; no clock, no OS randomness): suppliers with valid RFCs, states weighted by
//! economic size with municipality shares, SCIAN giros, real federal buyers, the three
//! LAASSP procedure types, log-normal amounts, dates over several years, COFEPRIS
//! registrations and SAT 69-B style marks. The same seed and config always produce
//! the same rows. Bulk inserts run in transactions with multi-row prepared statements.

use std::collections::HashSet;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::types::{MarkKind, Procedure};
use crate::base::catalog::rfc;
use crate::base::catalog::scian::Giro;
use crate::base::catalog::states::{self, State};
use crate::base::error::EngineResult;
use crate::base::store::Store;

mod tables;

use tables::{buyers_for, giro_weights, name_parts, PLACES, STATE_WEIGHTS, SUFFIXES, SURNAMES};

/// Real federal buyers: (abbreviation, full name).
pub const BUYERS: &[(&str, &str)] = &[
    ("IMSS", "Instituto Mexicano del Seguro Social"),
    (
        "ISSSTE",
        "Instituto de Seguridad y Servicios Sociales de los Trabajadores del Estado",
    ),
    ("CFE", "Comisión Federal de Electricidad"),
    ("SEDENA", "Secretaría de la Defensa Nacional"),
    ("SEMAR", "Secretaría de Marina"),
    ("PEMEX", "Petróleos Mexicanos"),
    ("SSA", "Secretaría de Salud"),
    ("BIRMEX", "Laboratorios de Biológicos y Reactivos de México"),
    ("CONAGUA", "Comisión Nacional del Agua"),
    ("SCT", "Secretaría de Comunicaciones y Transportes"),
    ("SEP", "Secretaría de Educación Pública"),
    ("DICONSA", "Diconsa, S.A. de C.V."),
    ("LICONSA", "Liconsa, S.A. de C.V."),
    (
        "CAPUFE",
        "Caminos y Puentes Federales de Ingresos y Servicios Conexos",
    ),
    ("GACM", "Grupo Aeroportuario de la Ciudad de México"),
];

pub const GENERATOR_SOURCE: &str = "generador";

/// Sizes and seed of one generated build.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct GeneratorConfig {
    pub seed: u64,
    pub suppliers: usize,
    pub awards: usize,
    pub opportunities: usize,
    /// Fraction of suppliers with a SAT 69-B style mark.
    pub risk_share: f64,
    /// Creation timestamp written on rows (unix ms); fixed for determinism.
    pub created_at: i64,
}

impl GeneratorConfig {
    /// The embedded demo: builds in a few seconds.
    pub fn demo() -> Self {
        GeneratorConfig {
            seed: 2024,
            suppliers: 2_000,
            awards: 15_000,
            opportunities: 1_500,
            risk_share: 0.02,
            created_at: 1_704_067_200_000,
        }
    }
    /// Benchmark size (200k suppliers, 2M awards), scaled by `factor`.
    pub fn bench(factor: f64) -> Self {
        GeneratorConfig {
            seed: 7,
            suppliers: (200_000.0 * factor) as usize,
            awards: (2_000_000.0 * factor) as usize,
            opportunities: (100_000.0 * factor) as usize,
            risk_share: 0.015,
            created_at: 1_704_067_200_000,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct GenerateReport {
    pub suppliers: u64,
    pub awards: u64,
    pub opportunities: u64,
    pub permits: u64,
    pub risks: u64,
}

fn pick_weighted<R: Rng, T: Copy>(rng: &mut R, items: &[(T, u32)]) -> T {
    let total: u32 = items.iter().map(|(_, w)| *w).sum();
    let mut x = rng.gen_range(0..total.max(1));
    for (item, w) in items {
        if x < *w {
            return *item;
        }
        x -= w;
    }
    items[items.len() - 1].0
}

fn normal<R: Rng>(rng: &mut R) -> f64 {
    // Box-Muller.
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn letters_of(name: &str) -> String {
    let folded = crate::base::catalog::text::fold(name).to_uppercase();
    let mut out: String = folded
        .split(' ')
        .filter(|w| w.len() > 2 && !matches!(*w, "DEL" | "LAS" | "LOS" | "SAP"))
        .filter_map(|w| w.chars().next())
        .take(3)
        .collect();
    while out.len() < 3 {
        out.push('X');
    }
    out
}

fn date_from_day(day: i64) -> String {
    let base = chrono::NaiveDate::from_ymd_opt(2018, 1, 1).unwrap_or_default();
    (base + chrono::Duration::days(day))
        .format("%Y-%m-%d")
        .to_string()
}

#[derive(Debug, Clone)]
struct GenSupplier {
    id: String,
    name: String,
    state: State,
    municipality: &'static str,
    scian: &'static str,
    giro: Giro,
    size: &'static str,
    domain: String,
}

/// Generates into `store`. Deterministic for a given config.
pub async fn generate(store: &Store, cfg: &GeneratorConfig) -> EngineResult<GenerateReport> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut report = GenerateReport::default();
    let state_items: Vec<(State, u32)> = State::ALL
        .iter()
        .zip(STATE_WEIGHTS)
        .map(|(s, w)| (*s, w))
        .collect();

    // ---- suppliers
    let mut suppliers: Vec<GenSupplier> = Vec::with_capacity(cfg.suppliers);
    let mut seen = HashSet::with_capacity(cfg.suppliers);
    let mut names = HashSet::with_capacity(cfg.suppliers);
    for _ in 0..cfg.suppliers {
        let state = pick_weighted(&mut rng, &state_items);
        let giro = pick_weighted(&mut rng, &giro_weights(state));
        let classes = giro.codes();
        // Packaging manufacturers: mostly manufacturing classes, few wholesalers.
        let scian = classes[rng.gen_range(0..classes.len())];
        let (prefixes, _) = name_parts(giro);
        let mut name;
        let mut tries = 0;
        loop {
            let pre = prefixes[rng.gen_range(0..prefixes.len())];
            let who = if rng.gen_bool(0.5) {
                SURNAMES[rng.gen_range(0..SURNAMES.len())]
            } else {
                PLACES[rng.gen_range(0..PLACES.len())]
            };
            let suffix = SUFFIXES[rng.gen_range(0..SUFFIXES.len())];
            name = format!("{pre} {who} {suffix}");
            tries += 1;
            if names.insert(name.clone()) {
                break;
            }
            if tries > 3 {
                name = format!(
                    "{pre} {who} {} {suffix}",
                    SURNAMES[rng.gen_range(0..SURNAMES.len())]
                );
                if names.insert(name.clone()) {
                    break;
                }
            }
        }
        let letters = letters_of(&name);
        let id = loop {
            let yy = rng.gen_range(0..100u32);
            let mm = rng.gen_range(1..=12u32);
            let dd = rng.gen_range(1..=28u32);
            let alphabet = b"ABCDEFGHJKLMNPQRSTUVWXYZ123456789";
            let h: String = (0..2)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char)
                .collect();
            if let Some(r) = rfc::company_rfc(&letters, yy, mm, dd, &h) {
                if seen.insert(r.clone()) {
                    break r;
                }
            }
        };
        let munis = states::municipalities(state);
        let municipality = if munis.is_empty() {
            states::capital(state)
        } else {
            pick_weighted(&mut rng, munis)
        };
        let size = pick_weighted(
            &mut rng,
            &[
                ("micro", 30),
                ("pequena", 35),
                ("mediana", 25),
                ("grande", 10),
            ],
        );
        let slug: String = crate::base::catalog::text::fold(&name)
            .split(' ')
            .filter(|w| !matches!(*w, "s" | "a" | "de" | "c" | "v" | "r" | "l" | "p" | "i"))
            .take(3)
            .collect::<Vec<_>>()
            .join("");
        suppliers.push(GenSupplier {
            domain: format!("{slug}.com.mx"),
            id,
            name,
            state,
            municipality,
            scian,
            giro,
            size,
        });
    }

    let mut tx = store.pool().begin().await?;
    for chunk in suppliers.chunks(500) {
        let (sql, args) = crate::base::store::values(
            "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, municipality, scian, size_band, website, logo_url, source, created_at)",
            "on conflict do nothing",
            chunk, |b, s| {
            b.push_bind(&s.id)
                .push_bind(&s.id)
                .push_bind(1i64)
                .push_bind(&s.name)
                .push_bind(i64::from(s.state.code()))
                .push_bind(s.municipality)
                .push_bind(s.scian)
                .push_bind(s.size)
                .push_bind(format!("https://{}", s.domain))
                .push_bind(format!("https://{}/logo.png", s.domain))
                .push_bind(GENERATOR_SOURCE)
                .push_bind(cfg.created_at);
        });
        report.suppliers += sqlx::query_with(&sql, args)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    }
    tx.commit().await?;

    // ---- awards: a skewed share of suppliers sells to government.
    // Sellers: 60 % of suppliers (85 % of Jalisco packaging makers), Zipf-like weights.
    let mut cumulative: Vec<(f64, usize)> = Vec::new();
    let mut acc = 0.0;
    for (i, s) in suppliers.iter().enumerate() {
        let p = if s.state == State::Jalisco && s.giro == Giro::Empaque {
            0.85
        } else {
            0.6
        };
        if rng.gen_bool(p) {
            let rank = cumulative.len() as f64 + 1.0;
            let size_boost = match s.size {
                "grande" => 4.0,
                "mediana" => 2.0,
                _ => 1.0,
            };
            acc += size_boost / rank.powf(0.35);
            cumulative.push((acc, i));
        }
    }
    let span_days = 7 * 365;
    if !cumulative.is_empty() {
        let mut produced = 0usize;
        let mut seq = 0usize;
        while produced < cfg.awards {
            let n = (cfg.awards - produced).min(20_000);
            let mut rows = Vec::with_capacity(n);
            for _ in 0..n {
                let x = rng.gen_range(0.0..acc);
                let pos = cumulative.partition_point(|(c, _)| *c < x);
                let s = &suppliers[cumulative[pos.min(cumulative.len() - 1)].1];
                let buyers = buyers_for(s.giro);
                let buyer = buyers[rng.gen_range(0..buyers.len())];
                let procedure = pick_weighted(
                    &mut rng,
                    &[
                        (Procedure::Direct, 70),
                        (Procedure::Limited, 12),
                        (Procedure::Open, 18),
                    ],
                );
                let mu = match procedure {
                    Procedure::Direct => 11.8,
                    Procedure::Limited => 13.2,
                    Procedure::Open => 14.8,
                };
                let amount = ((mu + 1.25 * normal(&mut rng)).exp() * 100.0).round() / 100.0;
                let day = rng.gen_range(0..span_days);
                let date = date_from_day(day);
                let (_, items) = name_parts(s.giro);
                let title = format!("{} para {}", items[rng.gen_range(0..items.len())], buyer);
                seq += 1;
                rows.push((seq, s, buyer, procedure, amount, date, title));
            }
            let mut tx = store.pool().begin().await?;
            for chunk in rows.chunks(400) {
                let (sql, args) = crate::base::store::values(
                    "insert into mk_awards (award_key, ocid, supplier_id, supplier_name, buyer, buyer_name, title, amount, currency, date, year, procedure, state_code, scian, source)",
                    "on conflict do nothing",
                    chunk,
                    |b, (seq, s, buyer, proc_, amount, date, title)| {
                        let buyer_name = BUYERS
                            .iter()
                            .find(|(k, _)| k == buyer)
                            .map(|(_, n)| *n)
                            .unwrap_or(buyer);
                        let year: i64 = date.get(..4).and_then(|y| y.parse().ok()).unwrap_or(0);
                        b.push_bind(format!("{GENERATOR_SOURCE}:{seq}"))
                            .push_bind(format!("ocds-luna-{seq:08}"))
                            .push_bind(&s.id)
                            .push_bind(&s.name)
                            .push_bind(*buyer)
                            .push_bind(buyer_name)
                            .push_bind(title.as_str())
                            .push_bind(*amount)
                            .push_bind("MXN")
                            .push_bind(date.as_str())
                            .push_bind(year)
                            .push_bind(proc_.key())
                            .push_bind(i64::from(s.state.code()))
                            .push_bind(s.scian)
                            .push_bind(GENERATOR_SOURCE);
                    },
                );
                report.awards += sqlx::query_with(&sql, args)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            produced += n;
        }
    }

    // ---- opportunities (recent and open tenders)
    let mut tx = store.pool().begin().await?;
    let mut opp_rows = Vec::with_capacity(cfg.opportunities);
    for i in 0..cfg.opportunities {
        let state = pick_weighted(&mut rng, &state_items);
        let giro = pick_weighted(&mut rng, &giro_weights(state));
        let classes = giro.codes();
        let scian = classes[rng.gen_range(0..classes.len())];
        let buyers = buyers_for(giro);
        let buyer = buyers[rng.gen_range(0..buyers.len())];
        let procedure = pick_weighted(
            &mut rng,
            &[
                (Procedure::Open, 55),
                (Procedure::Limited, 30),
                (Procedure::Direct, 15),
            ],
        );
        let (_, items) = name_parts(giro);
        let title = format!("{} para {buyer}", items[rng.gen_range(0..items.len())]);
        let amount = ((14.0 + 1.1 * normal(&mut rng)).exp()).round();
        let day = rng.gen_range(5 * 365..span_days + 240);
        let status = if day > span_days - 60 {
            "active"
        } else {
            "complete"
        };
        opp_rows.push((
            i, state, scian, buyer, procedure, title, amount, day, status,
        ));
    }
    for chunk in opp_rows.chunks(400) {
        let (sql, args) = crate::base::store::values(
            "insert into mk_opportunities (ocid, title, buyer, buyer_name, procedure, state_code, scian, amount, currency, published, closes, status, source)",
            "on conflict do nothing",
            chunk,
            |b, (i, state, scian, buyer, p, title, amount, day, status)| {
                let buyer_name = BUYERS
                    .iter()
                    .find(|(k, _)| k == buyer)
                    .map(|(_, n)| *n)
                    .unwrap_or(buyer);
                b.push_bind(format!("ocds-luna-lic-{i:07}"))
                    .push_bind(title.as_str())
                    .push_bind(*buyer)
                    .push_bind(buyer_name)
                    .push_bind(p.key())
                    .push_bind(i64::from(state.code()))
                    .push_bind(*scian)
                    .push_bind(*amount)
                    .push_bind("MXN")
                    .push_bind(date_from_day(*day))
                    .push_bind(date_from_day(*day + 21))
                    .push_bind(*status)
                    .push_bind(GENERATOR_SOURCE);
            },
        );
        report.opportunities += sqlx::query_with(&sql, args)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    }

    // ---- permits (COFEPRIS) and risk marks
    let mut permits = Vec::new();
    let mut risks = Vec::new();
    for s in &suppliers {
        let permit_p = match s.giro {
            Giro::InsumosMedicos => 0.8,
            Giro::Alimentos | Giro::Limpieza => 0.5,
            Giro::Empaque => 0.25,
            _ => 0.0,
        };
        if permit_p > 0.0 && rng.gen_bool(permit_p) {
            let ptype = match s.giro {
                Giro::InsumosMedicos => "COFEPRIS registro sanitario",
                Giro::Empaque => "COFEPRIS aviso de funcionamiento",
                _ => "COFEPRIS licencia sanitaria",
            };
            let status = pick_weighted(
                &mut rng,
                &[
                    ("vigente", 75),
                    ("vencido", 15),
                    ("en_tramite", 8),
                    ("revocado", 2),
                ],
            );
            let number = format!(
                "{:04}M{}SSA",
                rng.gen_range(1..9999),
                rng.gen_range(2010..2025)
            );
            let day = rng.gen_range(0..span_days);
            permits.push((s, ptype, status, number, date_from_day(day)));
        }
        if rng.gen_bool(cfg.risk_share) {
            let kind = pick_weighted(
                &mut rng,
                &[
                    (MarkKind::Sat69bPresunto, 30),
                    (MarkKind::Sat69bDefinitivo, 45),
                    (MarkKind::Sat69bDesvirtuado, 12),
                    (MarkKind::Sat69bSentenciaFavorable, 5),
                    (MarkKind::ProveedorSancionado, 8),
                ],
            );
            let day = rng.gen_range(0..span_days);
            let notice = format!("500-05-{}-{}", 2018 + day / 365, rng.gen_range(1000..40000));
            risks.push((s, kind, notice, date_from_day(day)));
        }
    }
    for chunk in permits.chunks(400) {
        let (sql, args) = crate::base::store::values(
            "insert into mk_permits (permit_key, holder_id, holder_rfc, holder_name, permit_type, number, status, date, state_code, source)",
            "on conflict do nothing",
            chunk, |b, (s, ptype, status, number, date)| {
            b.push_bind(format!("{GENERATOR_SOURCE}:{}:{number}", s.id))
                .push_bind(&s.id)
                .push_bind(&s.id)
                .push_bind(&s.name)
                .push_bind(*ptype)
                .push_bind(number.as_str())
                .push_bind(*status)
                .push_bind(date.as_str())
                .push_bind(i64::from(s.state.code()))
                .push_bind(GENERATOR_SOURCE);
        });
        report.permits += sqlx::query_with(&sql, args)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    }
    for chunk in risks.chunks(400) {
        let (sql, args) = crate::base::store::values(
            "insert into mk_risks (risk_key, rfc, name, mark_kind, source, date, notice, note)",
            "on conflict do nothing",
            chunk,
            |b, (s, kind, notice, date)| {
                let source = if *kind == MarkKind::ProveedorSancionado {
                    "generador:sancionados"
                } else {
                    "generador:sat69b"
                };
                b.push_bind(format!("{source}:{}:{notice}", s.id))
                    .push_bind(&s.id)
                    .push_bind(s.name.to_uppercase())
                    .push_bind(kind.key())
                    .push_bind(source)
                    .push_bind(date.as_str())
                    .push_bind(notice.as_str())
                    .push_bind(Option::<String>::None);
            },
        );
        report.risks += sqlx::query_with(&sql, args)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    }
    tx.commit().await?;
    super::refresh_supplier_stats(store).await?;
    Ok(report)
}
