//! The evidence drawer's company file (CONTRACT §13): what backs a company on the board —
//! its recent Adjudicaciones (with totals by year and by buyer for the chart), its
//! risk marks, its Registros and, when the workspace saved it, its CRM history.
//! Built by the engine (`luna_engine::screen::company_file`); rendered by the drawer.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct CompanyFile {
    /// `company:<id>`.
    #[serde(rename = "ref")]
    pub reference: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rfc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<String>,
    /// All awards on record (the list below holds the most recent ones).
    pub awards_count: u32,
    pub awards_total_mxn: f64,
    #[serde(default)]
    pub awards: Vec<AwardLine>,
    /// The award list was shortened (more exist than shown).
    #[serde(default)]
    pub awards_truncated: bool,
    /// Totals of the listed awards by year, oldest first.
    #[serde(default)]
    pub by_year: Vec<AmountBucket>,
    /// Totals of the listed awards by buyer, largest first (the tail as "Otros").
    #[serde(default)]
    pub by_buyer: Vec<AmountBucket>,
    #[serde(default)]
    pub marks: Vec<MarkLine>,
    #[serde(default)]
    pub permits: Vec<PermitLine>,
    /// The workspace's CRM records of this company (empty when not saved).
    #[serde(default)]
    pub crm: Vec<CrmTimeline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct AwardLine {
    #[serde(rename = "ref")]
    pub reference: String,
    pub title: String,
    pub buyer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_mxn: Option<f64>,
    /// `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Where an imported Adjudicación comes from (none for demo data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// The source of one imported market row: the publisher, the file that was imported
/// and the release (ocid, release id, release date), so a person can find the original
/// record. Built by `luna_engine::market::provenance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct Provenance {
    /// The OCDS publisher's name, as the package gives it.
    pub publisher: Option<String>,
    /// The imported file as the operator named it (`-` for standard input).
    pub file: String,
    pub ocid: Option<String>,
    pub release_id: Option<String>,
    pub release_date: Option<String>,
}

impl Provenance {
    /// «Fuente: <publisher> · <archivo> · ocid … · publicado <fecha>».
    pub fn line(&self) -> String {
        let mut parts = vec![format!(
            "Fuente: {}",
            self.publisher.as_deref().unwrap_or("publicador sin nombre")
        )];
        parts.push(
            self.file
                .rsplit('/')
                .next()
                .unwrap_or(&self.file)
                .to_owned(),
        );
        if let Some(o) = &self.ocid {
            parts.push(format!("ocid {o}"));
        }
        if let Some(r) = self
            .release_id
            .as_ref()
            .filter(|r| Some(*r) != self.ocid.as_ref())
        {
            parts.push(format!("release {r}"));
        }
        if let Some(d) = &self.release_date {
            parts.push(format!("publicado {}", date_es(d.get(..10).unwrap_or(d))));
        }
        parts.join(" · ")
    }
}

/// One bar of a chart: a year or a buyer with its summed amount.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct AmountBucket {
    pub label: String,
    pub amount_mxn: f64,
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct MarkLine {
    #[serde(rename = "ref")]
    pub reference: String,
    pub label: String,
    /// Whether it still weighs against the company (desvirtuado does not).
    pub adverse: bool,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct PermitLine {
    #[serde(rename = "ref")]
    pub reference: String,
    pub permit_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

/// A CRM record of the company and its timeline, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct CrmTimeline {
    pub record_ref: String,
    pub collection: String,
    pub stage: String,
    #[serde(default)]
    pub entries: Vec<CrmEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct CrmEntry {
    /// Unix ms.
    pub at: i64,
    /// Who, in Spanish ("Ana López", "Luna").
    pub who: String,
    /// What happened, in Spanish ("Cambió la etapa a Contactado").
    pub what: String,
}

/// The company a clickable ref points to, for the drawer: a company ref itself, or
/// the company row an `evidence:<call>.<row>.<field>` anchor was cited from (looked
/// up in the refs of that turn's tool line). Anything else opens nothing.
pub fn company_of(
    reference: &str,
    turn_id: Option<&str>,
    chat: &crate::chat::Chat,
) -> Option<String> {
    if reference.starts_with("company:") {
        return Some(reference.to_owned());
    }
    let rest = reference.strip_prefix("evidence:")?;
    let mut parts = rest.split('.');
    let call = parts.next()?;
    let row: usize = parts.next()?.parse().ok()?;
    chat.messages.iter().rev().find_map(|m| match m {
        crate::chat::ChatMessage::Tool(line)
            if line.call_ref == call && turn_id.is_none_or(|t| t == line.turn_id) =>
        {
            line.refs
                .get(row)
                .filter(|r| r.starts_with("company:"))
                .cloned()
        }
        _ => None,
    })
}

/// `$1,234,567.89` (es-MX, MXN) for amounts shown to the person.
pub fn mxn(amount: f64) -> String {
    let cents = (amount * 100.0).round() as i64;
    let (whole, frac) = (cents.abs() / 100, cents.abs() % 100);
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}${out}.{frac:02}")
}

/// A short amount for chart labels: `$1.2 M`, `$350 mil`, `$900`. Integer arithmetic
/// only: formatting an `f64` would link the float printer into the browser's wasm.
pub fn mxn_short(amount: f64) -> String {
    let a = amount.abs();
    let sign = if amount < 0.0 { "-" } else { "" };
    // `unit` in tenths: one decimal for millions, none below.
    let tenths = |unit: f64| (a / unit).round() as i64;
    if a >= 1_000_000_000.0 {
        let t = tenths(100_000_000.0);
        format!("{sign}${}.{} mil M", t / 10, t % 10)
    } else if a >= 1_000_000.0 {
        let t = tenths(100_000.0);
        format!("{sign}${}.{} M", t / 10, t % 10)
    } else if a >= 1_000.0 {
        format!("{sign}${} mil", tenths(1_000.0))
    } else {
        format!("{sign}${}", tenths(1.0))
    }
}

/// `29 nov 2026` from `YYYY-MM-DD` (anything else is returned as is).
pub fn date_es(iso: &str) -> String {
    const MONTHS: [&str; 12] = [
        "ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic",
    ];
    let mut it = iso.get(..10).unwrap_or(iso).split('-');
    match (it.next(), it.next(), it.next()) {
        (Some(y), Some(m), Some(d)) if y.len() == 4 => {
            match (m.parse::<usize>(), d.parse::<u32>()) {
                (Ok(m @ 1..=12), Ok(d)) => format!("{d} {} {y}", MONTHS[m - 1]),
                _ => iso.to_owned(),
            }
        }
        _ => iso.to_owned(),
    }
}

/// `29 nov 2026` from Unix ms (UTC), without a clock or time-zone library.
pub fn date_from_ms(ms: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let z = ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    date_es(&format!("{y:04}-{m:02}-{d:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Chat, ChatMessage, ToolLine, ToolStatus};

    fn line(turn: &str, call: &str, refs: &[&str]) -> ChatMessage {
        ChatMessage::Tool(ToolLine {
            turn_id: turn.into(),
            call_ref: call.into(),
            label: "Buscando".into(),
            status: ToolStatus::Done,
            summary: None,
            refs: refs.iter().map(|r| (*r).to_owned()).collect(),
            reads_counted: 0,
            undo_token: None,
            undone: None,
        })
    }

    #[test]
    fn a_company_ref_opens_itself() {
        let chat = Chat::default();
        assert_eq!(
            company_of("company:sup_1", None, &chat).as_deref(),
            Some("company:sup_1")
        );
    }

    #[test]
    fn an_evidence_anchor_opens_the_company_of_its_row_in_the_same_turn() {
        let chat = Chat {
            messages: vec![
                line("t1", "c1", &["company:old"]),
                line("t2", "c1", &["record:selection", "company:a", "company:b"]),
                line("t2", "c2", &["record:count"]),
            ],
        };
        assert_eq!(
            company_of("evidence:c1.2.why", Some("t2"), &chat).as_deref(),
            Some("company:b")
        );
        assert_eq!(
            company_of("evidence:c1.0.why", Some("t1"), &chat).as_deref(),
            Some("company:old")
        );
        assert_eq!(company_of("evidence:c1.0.total", Some("t2"), &chat), None);
        assert_eq!(company_of("evidence:c2.shown", Some("t2"), &chat), None);
        assert_eq!(company_of("record:award:3", Some("t2"), &chat), None);
    }

    #[test]
    fn amounts_and_dates_read_as_in_mexico() {
        assert_eq!(mxn(1_234_567.891), "$1,234,567.89");
        assert_eq!(mxn(0.5), "$0.50");
        assert_eq!(mxn(-1000.0), "-$1,000.00");
        assert_eq!(mxn_short(2_500_000.0), "$2.5 M");
        assert_eq!(mxn_short(350_000.0), "$350 mil");
        assert_eq!(mxn_short(1_250_000_000.0), "$1.3 mil M");
        assert_eq!(mxn_short(7_000_000.0), "$7.0 M");
        assert_eq!(mxn_short(999.6), "$1000");
        assert_eq!(mxn_short(-45_000.0), "-$45 mil");
        assert_eq!(date_es("2026-11-29"), "29 nov 2026");
        assert_eq!(date_es("2026-01-05T10:00:00Z"), "5 ene 2026");
        assert_eq!(date_es("sin fecha"), "sin fecha");
        assert_eq!(date_from_ms(1_795_964_400_000), "29 nov 2026");
        assert_eq!(date_from_ms(0), "1 ene 1970");
    }
}

#[cfg(test)]
mod provenance_tests {
    use super::Provenance;

    #[test]
    fn provenance_names_the_publisher_file_ocid_and_release_date() {
        let p = Provenance {
            publisher: Some("Administración Pública Federal".into()),
            file: "/datos/apf/contratos-2024.jsonl.gz".into(),
            ocid: Some("ocds-07smqs-1500001".into()),
            release_id: Some("ocds-07smqs-1500001-02".into()),
            release_date: Some("2024-03-25T12:00:00Z".into()),
        };
        let line = p.line();
        assert!(line.starts_with("Fuente: Administración Pública Federal · contratos-2024.jsonl.gz · ocid ocds-07smqs-1500001 · release ocds-07smqs-1500001-02 · publicado "), "{line}");
        assert!(line.contains("2024"), "{line}");
    }
}
