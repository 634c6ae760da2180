//! SAT Article 69-B list importer (companies presumed to issue simulated invoices),
//! streaming like the OCDS importer: a blocking thread reads the CSV record by record
//! ([`parse`]) into a bounded channel, and the writer commits batches of marks, one
//! transaction each, so memory stays bounded whatever the list's size.
//!
//! Each row is one taxpayer's process, keyed by RFC + notice of presumption. The SAT
//! republishes the whole list as processes move on, so a later list **re-marks**: a
//! process whose situation changed (Presunto → Definitivo, Desvirtuado, Sentencia
//! favorable) or whose date or notice changed is updated, and what it said before is
//! kept in `mk_history` (kind `risk`). Re-importing the same list changes nothing.
//!
//! Real-file quirks handled: Windows-1252 encoding (UTF-8 accepted too), CRLF, two
//! preamble lines with the header on line 3, RFC `XXXXXXXXXXXX` suppressed by court
//! order (skipped with reason), the same RFC on several rows (key = RFC + notice of
//! presumption), two dates in one cell ("25/05/2022 - 26/04/2021", latest wins),
//! court notes after " // " in names (kept as `note`), and RFCs whose check digit
//! fails (imported with a warning).

mod parse;

use std::collections::{BTreeMap, HashMap};

use luna_protocol::error::ErrorCode;
use tokio::sync::mpsc;

pub use parse::{first_notice, list_date, parse_dates};

use super::{input, log_import, ImportReport, Input};
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{numbered, Conn, Store};
use crate::market::types::MarkKind;
use parse::{Line, Mark, ReadError};

pub const SOURCE: &str = "sat69b";

const HINT: &str =
    "Usa el «Listado completo» del artículo 69-B que publica el SAT, en CSV (o CSV en gzip).";

/// Marks per transaction.
const BATCH: usize = 500;

/// Imports the list held in memory. The same path as files: see [`import_sat69b_from`].
pub async fn import_sat69b(store: &Store, bytes: &[u8]) -> EngineResult<ImportReport> {
    import_sat69b_from(store, Input::Bytes(bytes.to_vec())).await
}

/// What the writer learns while it goes: the list's date, the situation changes.
#[derive(Default)]
struct Run {
    list_date: Option<String>,
    bad_digit: u64,
    /// (before, after) situation → how many processes moved so.
    moves: BTreeMap<(String, String), u64>,
}

/// Imports a 69-B list (plain or gzip; UTF-8 or Windows-1252). Idempotent; a later
/// list re-marks the processes whose situation changed (see the module doc).
pub async fn import_sat69b_from(store: &Store, input: Input) -> EngineResult<ImportReport> {
    let mut report = ImportReport {
        source: SOURCE.into(),
        ..Default::default()
    };
    let (tx, mut rx) = mpsc::channel::<Line>(1024);
    let reader = tokio::task::spawn_blocking(move || -> Result<(), ReadError> {
        let raw = input.open().map_err(|e| ReadError::Io(e.to_string()))?;
        let decoded = input::decoded(raw).map_err(|e| ReadError::Io(e.to_string()))?;
        parse::read_lines(decoded, &mut |line| tx.blocking_send(line).is_ok())
    });
    let mut run = Run::default();
    let mut batch: Vec<Mark> = Vec::with_capacity(BATCH);
    let mut write_error = None;
    while let Some(line) = rx.recv().await {
        match line {
            Line::ListDate(d) => run.list_date = Some(d),
            Line::Skip { item, reason } => report.skip(&item, &reason),
            Line::Mark(m) => {
                run.bad_digit += u64::from(m.bad_digit);
                batch.push(m);
                if batch.len() >= BATCH {
                    if let Err(e) = write_batch(store, &mut batch, &mut run, &mut report).await {
                        write_error = Some(e);
                        break;
                    }
                }
            }
        }
    }
    drop(rx);
    let read = reader.await.map_err(EngineError::internal)?;
    if let Some(e) = write_error {
        return Err(e);
    }
    match read {
        Ok(()) => {}
        Err(ReadError::NoHeader) => {
            return Err(EngineError::typed(
                ErrorCode::InvalidArgument,
                "No encontramos el encabezado del listado 69-B en la línea 3 (No, RFC, Nombre…).",
                HINT,
            ))
        }
        Err(ReadError::Io(e)) => {
            return Err(EngineError::typed(
                ErrorCode::InvalidArgument,
                format!("No se pudo leer el listado 69-B ({e})."),
                HINT,
            ))
        }
    }
    write_batch(store, &mut batch, &mut run, &mut report).await?;
    finish(store, run, &mut report).await?;
    Ok(report)
}

/// The stored processes among `keys`: key → (mark kind, date, notice, note).
type Stored = HashMap<String, (String, Option<String>, Option<String>, Option<String>)>;

async fn stored(conn: &mut Conn, keys: &[&str]) -> EngineResult<Stored> {
    let mut out = HashMap::new();
    for chunk in keys.chunks(200) {
        let sql = numbered(&format!(
            "select risk_key, mark_kind, date, notice, note from mk_risks where risk_key in ({})",
            crate::base::store::marks(chunk.len())
        ));
        type Row = (
            String,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let mut q = sqlx::query_as::<_, Row>(&sql);
        for k in chunk {
            q = q.bind(*k);
        }
        for (key, kind, date, notice, note) in q.fetch_all(&mut *conn).await? {
            out.insert(key, (kind, date, notice, note));
        }
    }
    Ok(out)
}

/// Writes one batch in one transaction: new processes inserted, changed ones
/// re-marked with their old situation kept in `mk_history`, the rest left alone.
async fn write_batch(
    store: &Store,
    batch: &mut Vec<Mark>,
    run: &mut Run,
    report: &mut ImportReport,
) -> EngineResult<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut tx = store.pool().begin().await?;
    let keys: Vec<&str> = batch.iter().map(|m| m.key.as_str()).collect();
    let mut known = stored(&mut tx, &keys).await?;
    let now = crate::base::clock::now_ms();
    for m in batch.drain(..) {
        let Some(old) = known.get(&m.key).cloned() else {
            let done = sqlx::query(
                "insert into mk_risks (risk_key, rfc, name, mark_kind, source, date, notice, note) values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict do nothing",
            )
            .bind(&m.key)
            .bind(&m.rfc)
            .bind(&m.name)
            .bind(m.kind.key())
            .bind(SOURCE)
            .bind(&m.date)
            .bind(&m.notice)
            .bind(&m.note)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if done > 0 {
                report.inserted.risks += 1;
                // A repeat of the same process later in the file is compared with this.
                known.insert(
                    m.key.clone(),
                    (m.kind.key().to_string(), m.date, m.notice, m.note),
                );
            } else {
                report.unchanged += 1;
            }
            continue;
        };
        let new = (
            m.kind.key().to_string(),
            m.date.clone(),
            m.notice.clone(),
            m.note.clone(),
        );
        if new == old {
            report.unchanged += 1;
            continue;
        }
        sqlx::query(
            "insert into mk_history (kind, row_key, status, date, replaced_by, replaced_at) values ('risk', $1, $2, $3, $4, $5)",
        )
        .bind(&m.key)
        .bind(&old.0)
        .bind(&old.1)
        .bind(&run.list_date)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("update mk_risks set mark_kind = $1, date = $2, notice = $3, note = $4 where risk_key = $5")
            .bind(&new.0)
            .bind(&new.1)
            .bind(&new.2)
            .bind(&new.3)
            .bind(&m.key)
            .execute(&mut *tx)
            .await?;
        report.updated += 1;
        if old.0 != new.0 {
            *run.moves.entry((old.0.clone(), new.0.clone())).or_default() += 1;
        }
        known.insert(m.key, new);
    }
    tx.commit().await?;
    Ok(())
}

/// A situation's label for the summary («SAT 69-B definitivo»).
fn label(key: &str) -> String {
    MarkKind::from_key(key).map_or_else(|| key.to_string(), |k| k.label().to_string())
}

/// Warnings and notes of the whole run, and the coverage log.
async fn finish(store: &Store, run: Run, report: &mut ImportReport) -> EngineResult<()> {
    if run.bad_digit > 0 {
        report.warn(format!(
            "{} RFC no pasan el dígito verificador; se importaron tal como los publica el SAT.",
            run.bad_digit
        ));
    }
    if let Some(d) = &run.list_date {
        report.notes.push(format!("Listado actualizado al {d}."));
    }
    for ((before, after), n) in &run.moves {
        report.notes.push(format!(
            "{n} contribuyentes cambiaron de situación: {} → {}.",
            label(before),
            label(after)
        ));
    }
    tracing::info!(
        inserted = report.inserted.risks,
        updated = report.updated,
        "sat69b import"
    );
    log_import(
        store,
        SOURCE,
        "Listado SAT artículo 69-B",
        "sat69b",
        report.inserted.total() + report.updated,
        report.skipped_total,
    )
    .await
}

#[cfg(test)]
mod tests;
