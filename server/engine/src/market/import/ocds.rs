//! OCDS 1.1 importer, streaming: release packages (`releases[]`), record packages
//! (`records[]` with `compiledRelease`, else the last embedded release), bare releases
//! and records, and JSON Lines of any of these, plain or gzip, from a file, standard
//! input or bytes in memory.
//!
//! A blocking thread parses the input incrementally ([`read`]) and hands releases
//! through a bounded channel to the async writer, which commits them in batches, each
//! in one transaction together with the run's resume point ([`runs`]): memory stays
//! bounded whatever the file size, a killed import resumes after its last batch, and
//! a finished input is not imported twice. A newer release of the same process (by
//! `date`) updates the figures and keeps the old ones in `mk_history`; an older one
//! only fills what is empty ([`release`]).
//!
//! Real-world tolerance ([`fields`], [`release`]): Spanish role names, party ids like
//! `RFC-XXX…`, numeric identifiers, suppliers identified by a state registry
//! (`PROV-GOB-JAL`) or by a hashed RFC (32 hex chars), missing awards (the tender
//! still becomes a Licitación; contracts stand for the awards, as in the federal
//! administration's compiled releases), unsuccessful awards (skipped with reason),
//! amounts only in contracts or in the planning budget, and a
//! `procurementMethodDetails` that contradicts `procurementMethod` (the Spanish detail
//! wins). Awards are keyed by source + ocid + award id + supplier.
//!
//! At the end of a run (and every [`release::TOUCHED_MAX`] suppliers on a large
//! input), entity resolution (`market::entities`) links the suppliers the run wrote
//! that have no RFC to the RFC'd supplier they are; the report counts the links.

pub mod deferred;
mod fields;
mod history;
mod read;
mod release;
mod runs;
pub mod sample;
mod suppliers;

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

pub use super::input::Input;
use super::{input, log_import, ImportReport};
use crate::base::catalog::text::fold;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Backend, Conn, Store};
use luna_protocol::error::ErrorCode;
use read::{Item, ReadError};
use release::{write_grants, write_release, write_tender, Ctx, TOUCHED_MAX};
use suppliers::{refresh_suppliers, Totals};

/// How far an import is.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Input bytes read so far (compressed bytes for gzip).
    pub bytes: u64,
    /// The input's size, when known (files).
    pub total_bytes: Option<u64>,
    /// Releases read so far (including those a resumed run skips over).
    pub releases: u64,
    pub elapsed: Duration,
}

/// A progress callback (see [`Options::on_progress`]).
pub type OnProgress = Box<dyn FnMut(&Progress) + Send>;

/// Tunables of [`import_ocds_from`].
pub struct Options {
    /// Releases per transaction.
    pub batch: usize,
    /// The SQLite page cache of the import's connection, in KiB (`pragma
    /// cache_size`): a bulk load keeps touching index pages all over a large
    /// database, and SQLite's default 2 MB made each of those a read from the OS.
    pub cache_kib: u32,
    /// Called after every batch (and every batch's worth of releases skipped over).
    pub on_progress: Option<OnProgress>,
    /// Build the search indexes once at the end (`deferred`): `None` decides by the
    /// input's size against the data already stored.
    pub defer_indexes: Option<bool>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            batch: 500,
            cache_kib: 128 * 1024,
            on_progress: None,
            defer_indexes: None,
        }
    }
}

/// Imports one OCDS document held in memory. The same path as files: see
/// [`import_ocds_from`].
pub async fn import_ocds(store: &Store, bytes: &[u8]) -> EngineResult<ImportReport> {
    import_ocds_from(store, Input::Bytes(bytes.to_vec()), Options::default()).await
}

fn invalid(message: String) -> EngineError {
    EngineError::typed(
        ErrorCode::InvalidArgument,
        message,
        "Usa un paquete de entregas o de registros OCDS en JSON (o JSON Lines), sin comprimir o en gzip.",
    )
}

fn source_of(publisher: &str) -> String {
    format!("ocds:{}", fold(publisher).replace(' ', "-"))
}

/// The sha256 of a file, read in chunks.
fn file_sha256(path: &PathBuf) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((hex::encode(hasher.finalize()), total))
}

/// Standard input, hashed as it is read.
struct Hashing<R> {
    inner: R,
    hasher: Arc<std::sync::Mutex<Sha256>>,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Ok(mut h) = self.hasher.lock() {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
}

/// Imports an OCDS input in batches (see the module doc). Returns the report of the
/// whole input: a resumed run's report includes what the interrupted runs committed.
pub async fn import_ocds_from(
    store: &Store,
    input: Input,
    mut opts: Options,
) -> EngineResult<ImportReport> {
    let label = input.label();
    let started = Instant::now();
    let (sha, total_bytes) = match &input {
        Input::File(p) => {
            let p = p.clone();
            let (sha, size) = tokio::task::spawn_blocking(move || file_sha256(&p))
                .await
                .map_err(EngineError::internal)?
                .map_err(|e| invalid(format!("No se pudo leer el archivo ({e}).")))?;
            (Some(sha), Some(size))
        }
        Input::Bytes(b) => (Some(hex::encode(Sha256::digest(b))), Some(b.len() as u64)),
        Input::Stdin => (None, None),
    };
    let mut report = ImportReport {
        source: source_of("OCDS"),
        ..Default::default()
    };
    let (run_id, resume_after) =
        match runs::start(store, sha.as_deref(), &label, &mut report).await? {
            runs::Start::Done { finished_at } => {
                let when = chrono::DateTime::from_timestamp_millis(finished_at)
                    .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
                    .unwrap_or_default();
                report.notes.push(format!(
                    "Este archivo ya se importó completo ({when}); no se cambió nada."
                ));
                report.already_imported = true;
                return Ok(report);
            }
            runs::Start::Run { id, resume_after } => (id, resume_after),
        };
    if resume_after > 0 {
        report.notes.push(format!(
            "Se reanudó una importación interrumpida después de la entrega {resume_after}."
        ));
    }

    // ---- the reader: a blocking thread feeding a bounded channel
    let counter = Arc::new(AtomicU64::new(0));
    let stdin_hash = Arc::new(std::sync::Mutex::new(Sha256::new()));
    let (tx, mut rx) = mpsc::channel::<Item>(256);
    let reader = {
        let counter = counter.clone();
        let stdin_hash = stdin_hash.clone();
        tokio::task::spawn_blocking(move || -> Result<(), ReadError> {
            let raw: Box<dyn Read + Send> = match input {
                Input::Stdin => Box::new(Hashing {
                    inner: std::io::stdin(),
                    hasher: stdin_hash,
                }),
                other => other.open().map_err(|e| ReadError::Io(e.to_string()))?,
            };
            let decoded = input::decoded(read::Counted::new(raw, counter))
                .map_err(|e| ReadError::Io(e.to_string()))?;
            read::read_items(decoded, &mut |item| tx.blocking_send(item).is_ok())
        })
    };

    // ---- the writer: batches of releases, one transaction each, on one connection
    // with a page cache of `opts.cache_kib`.
    let mut conn = store.pool().acquire().await?;
    if store.backend() == Backend::Sqlite {
        sqlx::query(&format!(
            "pragma cache_size = -{}",
            opts.cache_kib.max(2000)
        ))
        .execute(&mut *conn)
        .await?;
        // The connection goes back to the pool with its cache freed.
        conn.close_on_drop();
    }
    // A bulk load builds the search indexes once, at the end (`deferred`).
    let bulk = match opts.defer_indexes {
        Some(forced) => forced,
        None => deferred::worth_it(&mut conn, total_bytes).await?,
    };
    if bulk {
        let n = deferred::defer(&mut conn, store.backend()).await?;
        tracing::info!(
            indexes = n,
            "bulk import: search indexes set aside until the end"
        );
    }
    // On PostgreSQL a second connection writes each batch's Licitaciones while this
    // one writes its Proveedores and Adjudicaciones (`flush`): every statement is a
    // round trip, and two connections keep the importer and the server both busy.
    let mut side = match store.backend() {
        Backend::Postgres => Some(store.pool().acquire().await?),
        Backend::Sqlite => None,
    };
    let batch_size = opts.batch.max(1);
    let mut ctx = Ctx {
        source: source_of("OCDS"),
        publisher: "OCDS".into(),
        now: crate::base::clock::now_ms(),
        run_id,
        known: Default::default(),
        touched: Default::default(),
    };
    let mut batch: Vec<Value> = Vec::with_capacity(batch_size);
    let mut seen: u64 = 0;
    let progress = |seen: u64, opts: &mut Options| {
        if let Some(f) = opts.on_progress.as_mut() {
            f(&Progress {
                bytes: counter.load(Ordering::Relaxed),
                total_bytes,
                releases: seen,
                elapsed: started.elapsed(),
            });
        }
    };
    let mut write_error = None;
    while let Some(item) = rx.recv().await {
        match item {
            Item::Publisher(p) => {
                if !batch.is_empty() {
                    // The releases read so far belong to the previous publisher.
                    if let Err(e) = flush(
                        &mut conn,
                        side.as_deref_mut(),
                        &mut ctx,
                        &mut batch,
                        run_id,
                        seen,
                        &mut report,
                    )
                    .await
                    {
                        write_error = Some(e);
                        break;
                    }
                }
                ctx.source = source_of(&p);
                ctx.publisher = p;
                report.source = ctx.source.clone();
            }
            Item::Skip { item, reason } => {
                if seen >= resume_after {
                    report.skip(&item, &reason);
                }
            }
            Item::Release(r) => {
                seen += 1;
                if seen <= resume_after {
                    if seen.is_multiple_of(batch_size as u64) {
                        progress(seen, &mut opts);
                    }
                    continue;
                }
                batch.push(r);
                if batch.len() >= batch_size {
                    if let Err(e) = flush(
                        &mut conn,
                        side.as_deref_mut(),
                        &mut ctx,
                        &mut batch,
                        run_id,
                        seen,
                        &mut report,
                    )
                    .await
                    {
                        write_error = Some(e);
                        break;
                    }
                    progress(seen, &mut opts);
                    if ctx.touched.len() >= TOUCHED_MAX {
                        if let Err(e) = resolve_touched(&mut conn, &mut ctx, &mut report).await {
                            write_error = Some(e);
                            break;
                        }
                    }
                }
            }
        }
    }
    if write_error.is_none() && !batch.is_empty() {
        write_error = flush(
            &mut conn,
            side.as_deref_mut(),
            &mut ctx,
            &mut batch,
            run_id,
            seen,
            &mut report,
        )
        .await
        .err();
    }
    if write_error.is_none() {
        // Entity resolution of the suppliers this run wrote (`market::entities`).
        write_error = resolve_touched(&mut conn, &mut ctx, &mut report)
            .await
            .err();
    }
    // The search indexes come back whatever happened (a failure here leaves them
    // listed for the next import or start: `deferred`).
    match deferred::restore(&mut conn, store.backend()).await {
        Ok(n) if n > 0 => report
            .notes
            .push("Los índices de búsqueda se construyeron al final (carga masiva).".into()),
        Ok(_) => {}
        Err(e) if write_error.is_none() => write_error = Some(e),
        Err(e) => tracing::error!(error = %e, "could not rebuild the search indexes"),
    }
    // Hang up first, so a reader blocked on a full channel stops.
    drop(rx);
    drop(conn);
    let read_result = reader.await.map_err(EngineError::internal)?;
    progress(seen, &mut opts);
    if let Some(e) = write_error {
        let _ = runs::finish(
            store,
            run_id,
            "failed",
            None,
            counter.load(Ordering::Relaxed),
        )
        .await;
        return Err(e);
    }
    let bytes = counter.load(Ordering::Relaxed);
    match read_result {
        Ok(()) | Err(ReadError::Cancelled) => {}
        Err(ReadError::Json(e)) | Err(ReadError::Io(e)) => {
            runs::finish(store, run_id, "failed", None, bytes).await?;
            return Err(invalid(if seen == 0 {
                format!("El archivo no es JSON válido ({e}).")
            } else {
                format!(
                    "El archivo se cortó o no es JSON válido después de {seen} entregas ({e}); lo leído quedó importado."
                )
            }));
        }
    }
    let sha = sha.or_else(|| {
        stdin_hash
            .lock()
            .ok()
            .map(|h| hex::encode(h.clone().finalize()))
    });
    runs::finish(store, run_id, "done", sha.as_deref(), bytes).await?;
    log_import(
        store,
        &ctx.source,
        &format!("Contrataciones abiertas (OCDS): {}", ctx.publisher),
        "ocds",
        report.inserted.total(),
        report.skipped_total,
    )
    .await?;
    Ok(report)
}

/// Links the suppliers the run wrote since the last call to the suppliers they are
/// (`market::entities`), and adds what it linked to the report.
async fn resolve_touched(
    conn: &mut Conn,
    ctx: &mut Ctx,
    report: &mut ImportReport,
) -> EngineResult<()> {
    let mut ids: Vec<String> = ctx.touched.drain().collect();
    ids.sort();
    let r = crate::market::entities::resolve(conn, &ids).await?;
    report.resolution.add(&r);
    Ok(())
}

/// Writes one batch and the run's resume point in one transaction; on PostgreSQL the
/// batch's Licitaciones go in a second transaction on `side`, committed first.
async fn flush(
    conn: &mut Conn,
    side: Option<&mut Conn>,
    ctx: &mut Ctx,
    batch: &mut Vec<Value>,
    run_id: i64,
    seen: u64,
    report: &mut ImportReport,
) -> EngineResult<()> {
    let mut totals = Totals::default();
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    match side {
        None => {
            for r in batch.drain(..) {
                write_release(&mut tx, ctx, &r, report, &mut totals).await?;
            }
            refresh_suppliers(&mut tx, totals).await?;
        }
        Some(side) => {
            // Licitaciones on `side`, the rest here, at the same time: the two touch
            // different rows, and each keeps the order of the releases.
            let mut tenders = sqlx::Connection::begin(&mut *side).await?;
            let heads: Vec<_> = batch
                .iter()
                .filter_map(|r| release::head(ctx, r, report))
                .collect();
            let source = ctx.source.clone();
            let mut tender_report = ImportReport::default();
            let (written, granted) = tokio::join!(
                async {
                    for h in &heads {
                        write_tender(&mut tenders, &source, h, &mut tender_report).await?;
                    }
                    EngineResult::Ok(())
                },
                async {
                    for h in &heads {
                        write_grants(&mut tx, ctx, h, report, &mut totals).await?;
                    }
                    refresh_suppliers(&mut tx, std::mem::take(&mut totals)).await
                }
            );
            written?;
            granted?;
            // The Licitaciones commit first: a run killed between the two commits has
            // not passed this batch's resume point, writes the batch again and finds
            // them there.
            tenders.commit().await?;
            report.absorb(tender_report);
            drop(heads);
            batch.clear();
        }
    }
    runs::checkpoint(&mut tx, run_id, seen, &ctx.publisher, report).await?;
    tx.commit().await?;
    Ok(())
}
