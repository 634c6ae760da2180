//! Reading the SAT 69-B list, one CSV record at a time (the `csv` crate over a
//! buffered, possibly gzip, reader): fields decoded as UTF-8 or, failing that,
//! Windows-1252 (the SAT publishes the latter); the list's date from its first line;
//! the header checked on line 3; each row turned into a [`Mark`] or a skip with
//! its reason. Blocking: run it on a blocking thread.

use std::io::BufRead;

use crate::base::catalog::rfc;
use crate::base::catalog::text::fold;
use crate::market::types::MarkKind;

/// One taxpayer's situation as the list gives it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Mark {
    /// `sat69b:<rfc>:<notice of presumption>`: one taxpayer's process, whose
    /// situation later lists move on (presunto → definitivo, desvirtuado…).
    pub(super) key: String,
    pub(super) rfc: String,
    pub(super) name: String,
    pub(super) kind: MarkKind,
    pub(super) date: Option<String>,
    pub(super) notice: Option<String>,
    pub(super) note: Option<String>,
    /// The RFC's check digit fails: imported as the SAT publishes it, with a warning.
    pub(super) bad_digit: bool,
}

/// What one line of the file gives the writer.
#[derive(Debug)]
pub(super) enum Line {
    /// The date the list says it is current to (`yyyy-mm-dd`), from line 1.
    ListDate(String),
    Mark(Mark),
    Skip {
        item: String,
        reason: String,
    },
}

/// Why reading stopped early.
#[derive(Debug)]
pub(super) enum ReadError {
    /// Line 3 is not the list's header: not a 69-B file.
    NoHeader,
    Io(String),
}

/// One field as text: UTF-8 (without a BOM) when valid, else Windows-1252.
pub(super) fn decode(bytes: &[u8]) -> String {
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

/// «Información actualizada al 30 de noviembre de 2022» → `2022-11-30`.
pub fn list_date(line: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ];
    let folded = fold(line);
    let words: Vec<&str> = folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(5).find_map(|w| {
        let month = MONTHS.iter().position(|m| *m == w[2])? as u32 + 1;
        if w[1] != "de" || w[3] != "de" {
            return None;
        }
        let d = chrono::NaiveDate::from_ymd_opt(w[4].parse().ok()?, month, w[0].parse().ok()?)?;
        Some(d.format("%Y-%m-%d").to_string())
    })
}

/// The situation's mark and the columns of its notice and its SAT publication date.
fn situation(s: &str) -> Option<(MarkKind, usize, usize)> {
    match fold(s).as_str() {
        "presunto" => Some((MarkKind::Sat69bPresunto, 4, 5)),
        "desvirtuado" => Some((MarkKind::Sat69bDesvirtuado, 8, 9)),
        "definitivo" => Some((MarkKind::Sat69bDefinitivo, 12, 13)),
        "sentencia favorable" => Some((MarkKind::Sat69bSentenciaFavorable, 16, 17)),
        _ => None,
    }
}

/// One data row (line number `line`, 1-based) as a mark or a skip.
pub(super) fn row(line: usize, row: &[String]) -> Option<Line> {
    if row.iter().all(|c| c.trim().is_empty()) {
        return None;
    }
    let skip = |item: String, reason: String| Some(Line::Skip { item, reason });
    if row.len() < 14 {
        return skip(
            format!("línea {line}"),
            format!("La fila tiene {} columnas; se esperaban 20.", row.len()),
        );
    }
    let raw_rfc = row[1].trim();
    let item = format!("línea {line}: {raw_rfc}");
    if !raw_rfc.is_empty() && raw_rfc.chars().all(|c| c == 'X' || c == 'x') {
        return skip(item, "RFC suprimido por resolución judicial.".into());
    }
    let check = rfc::check(raw_rfc);
    if !check.format_ok {
        return skip(item, "El RFC no tiene un formato válido.".into());
    }
    let Some((kind, notice_col, date_col)) = situation(&row[3]) else {
        return skip(item, format!("Situación desconocida: «{}».", row[3].trim()));
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
    let mark = Mark {
        key: format!("{}:{}:{key_notice}", super::SOURCE, check.normalized),
        rfc: check.normalized,
        name,
        kind,
        date,
        notice,
        note,
        bad_digit: !check.check_digit_ok,
    };
    Some(Line::Mark(mark))
}

/// Reads the whole list, handing each line to `sink` (which returns `false` to stop).
pub(super) fn read_lines(
    input: impl BufRead,
    sink: &mut dyn FnMut(Line) -> bool,
) -> Result<(), ReadError> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut record = csv::ByteRecord::new();
    let mut index = 0usize;
    loop {
        match csv.read_byte_record(&mut record) {
            // A file that ends before line 3 has no header either.
            Ok(false) if index < 3 => return Err(ReadError::NoHeader),
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => return Err(ReadError::Io(e.to_string())),
        }
        // Line numbers as a spreadsheet shows them (quoted newlines counted).
        let line = record.position().map_or(index + 1, |p| p.line() as usize);
        let fields: Vec<String> = record.iter().map(decode).collect();
        let go_on = match index {
            0 => match fields.first().and_then(|f| list_date(f)) {
                Some(date) => sink(Line::ListDate(date)),
                None => true,
            },
            1 => true,
            2 => {
                if fields.get(1).is_none_or(|c| c.trim() != "RFC") {
                    return Err(ReadError::NoHeader);
                }
                true
            }
            _ => match row(line, &fields) {
                Some(l) => sink(l),
                None => true,
            },
        };
        if !go_on {
            return Ok(());
        }
        index += 1;
    }
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
        assert_eq!(decode("Situación".as_bytes()), "Situación");
    }

    #[test]
    fn the_list_date_comes_from_its_first_line() {
        assert_eq!(
            list_date("Información actualizada al 30 de noviembre de 2022").as_deref(),
            Some("2022-11-30")
        );
        assert_eq!(
            list_date("INFORMACION ACTUALIZADA AL 1 DE MARZO DE 2024").as_deref(),
            Some("2024-03-01")
        );
        assert_eq!(list_date("Listado completo de contribuyentes"), None);
    }
}
