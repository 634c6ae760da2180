//! SAT Article 69-B list importer (companies presumed to issue simulated invoices).
//!
//! Real-file quirks handled: Windows-1252 encoding (UTF-8 accepted too), CRLF, two
//! preamble lines with the header on line 3, RFC `XXXXXXXXXXXX` suppressed by court
//! order (skipped with reason), the same RFC on several rows (key = RFC + notice of
//! presumption), two dates in one cell ("25/05/2022 - 26/04/2021", latest wins),
//! court notes after " // " in names (kept as `note`), and RFCs whose check digit
//! fails (imported with a warning).

use sqlx::Row;

use super::{log_import, ImportReport};
use crate::base::catalog::rfc;
use crate::base::error::EngineResult;
use crate::base::store::Store;
use crate::market::types::MarkKind;

pub const SOURCE: &str = "sat69b";

/// Decodes the file: UTF-8 (with or without BOM) if valid, else Windows-1252.
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned(),
    }
}

/// `dd/mm/yyyy` → `yyyy-mm-dd`; with several dates in a cell, the latest.
pub fn parse_dates(cell: &str) -> Option<String> {
    cell.split([' ', '-', ','])
        .filter_map(|piece| {
            let parts: Vec<&str> = piece.trim().split('/').collect();
            if parts.len() != 3 {
                return None;
            }
            let d = chrono::NaiveDate::from_ymd_opt(
                parts[2].parse().ok()?,
                parts[1].parse().ok()?,
                parts[0].parse().ok()?,
            )?;
            Some(d.format("%Y-%m-%d").to_string())
        })
        .max()
}

/// First notice number in an "oficio" cell: "500-05-2020-23758 de fecha …" → "500-05-2020-23758".
pub fn first_notice(cell: &str) -> Option<String> {
    let first = cell.split("//").next()?.trim();
    let number = first.split(" de ").next()?.trim();
    (!number.is_empty()).then(|| number.to_string())
}

fn situation(s: &str) -> Option<(MarkKind, usize, usize)> {
    // (kind, notice column, SAT publication date column)
    match crate::base::catalog::text::fold(s).as_str() {
        "presunto" => Some((MarkKind::Sat69bPresunto, 4, 5)),
        "desvirtuado" => Some((MarkKind::Sat69bDesvirtuado, 8, 9)),
        "definitivo" => Some((MarkKind::Sat69bDefinitivo, 12, 13)),
        "sentencia favorable" => Some((MarkKind::Sat69bSentenciaFavorable, 16, 17)),
        _ => None,
    }
}

/// Imports the list. Idempotent.
pub async fn import_sat69b(store: &Store, bytes: &[u8]) -> EngineResult<ImportReport> {
    let text = decode(bytes);
    let records = crate::base::catalog::csv::parse(&text);
    let mut report = ImportReport {
        source: SOURCE.into(),
        ..Default::default()
    };
    let header_ok = records
        .get(2)
        .is_some_and(|h| h.get(1).is_some_and(|c| c.trim() == "RFC"));
    if !header_ok {
        report.skip(
            "archivo",
            "No encontramos el encabezado del listado 69-B en la línea 3 (No, RFC, Nombre…).",
        );
        return Ok(report);
    }
    let mut bad_digit = 0;
    let mut tx = store.pool().begin().await?;
    for (i, row) in records.iter().enumerate().skip(3) {
        let line = i + 1;
        if row.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        if row.len() < 14 {
            report.skip(
                &format!("línea {line}"),
                &format!("La fila tiene {} columnas; se esperaban 20.", row.len()),
            );
            continue;
        }
        let raw_rfc = row[1].trim();
        if raw_rfc.chars().all(|c| c == 'X' || c == 'x') && !raw_rfc.is_empty() {
            report.skip(
                &format!("línea {line}: {raw_rfc}"),
                "RFC suprimido por resolución judicial.",
            );
            continue;
        }
        let check = rfc::check(raw_rfc);
        if !check.format_ok {
            report.skip(
                &format!("línea {line}: {raw_rfc}"),
                "El RFC no tiene un formato válido.",
            );
            continue;
        }
        if !check.check_digit_ok {
            bad_digit += 1;
        }
        let Some((kind, notice_col, date_col)) = situation(&row[3]) else {
            report.skip(
                &format!("línea {line}: {raw_rfc}"),
                &format!("Situación desconocida: «{}».", row[3].trim()),
            );
            continue;
        };
        let (name, note) = match row[2].split_once("//") {
            Some((n, rest)) => (n.trim().to_string(), Some(rest.trim().to_string())),
            None => (row[2].trim().to_string(), None),
        };
        let cell = |c: usize| row.get(c).map(String::as_str).unwrap_or("");
        let notice = first_notice(cell(notice_col));
        let key_notice = first_notice(cell(4))
            .or_else(|| notice.clone())
            .unwrap_or_else(|| format!("linea-{line}"));
        let date = parse_dates(cell(date_col)).or_else(|| parse_dates(cell(5)));
        let key = format!("{SOURCE}:{}:{key_notice}", check.normalized);
        let done = sqlx::query(
            "insert into mk_risks (risk_key, rfc, name, mark_kind, source, date, notice, note) values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict do nothing",
        )
        .bind(&key)
        .bind(&check.normalized)
        .bind(&name)
        .bind(kind.key())
        .bind(SOURCE)
        .bind(&date)
        .bind(&notice)
        .bind(&note)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if done > 0 {
            report.inserted.risks += 1;
        } else {
            report.unchanged += 1;
        }
    }
    tx.commit().await?;
    if bad_digit > 0 {
        report.warnings.push(format!(
            "{bad_digit} RFC no pasan el dígito verificador; se importaron tal como los publica el SAT."
        ));
    }
    let total: i64 = sqlx::query("select count(*) from mk_risks where source = $1")
        .bind(SOURCE)
        .fetch_one(store.pool())
        .await?
        .try_get(0)?;
    tracing::info!(inserted = report.inserted.risks, total, "sat69b import");
    log_import(
        store,
        SOURCE,
        "Listado SAT artículo 69-B",
        "sat69b",
        report.inserted.total(),
        report.skipped_total,
    )
    .await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quirky_cells() {
        assert_eq!(
            parse_dates("25/05/2022 - 26/04/2021").as_deref(),
            Some("2022-05-25")
        );
        assert_eq!(parse_dates("03/11/2020").as_deref(), Some("2020-11-03"));
        assert_eq!(parse_dates(""), None);
        assert_eq!(
            first_notice("500-05-2022-6121 de fecha 25 de mayo de 2022 // 500-05-2021-6937 de fecha 26 de abril de 2021").as_deref(),
            Some("500-05-2022-6121")
        );
        assert_eq!(decode(b"Situaci\xf3n"), "Situación");
    }
}
