//! Scheduled updates (`luna-server sync`): the configured sources — OCDS files, or
//! directories where an operator drops new dumps — are listed, and every file is
//! imported through the streaming OCDS importer, which skips bytes it already imported
//! completely (by sha256, `mk_import_runs`) and resumes an interrupted one. A newer
//! release of a process already in the database updates its figures (by release date).
//! Each sync is recorded in `mk_sync_runs`.
//!
//! Files are picked by name: `.json`, `.jsonl`, `.ndjson` are OCDS, `.csv` is a SAT
//! 69-B list (the whole list as the SAT republishes it: the importer re-marks the
//! processes whose situation changed, and a list with nothing new counts as already
//! imported), each optionally `.gz`.
//! Hidden files and names ending in `.part`/`.tmp` are left alone, so a dump being
//! copied into a directory is imported by the next sync, once renamed into place.

use std::path::{Path, PathBuf};

use luna_protocol::error::ErrorCode;

use super::ocds::{import_ocds_from, Input, Options};
use super::sat69b::import_sat69b_from;
use super::ImportReport;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;

/// What happened to one file of a sync.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Imported (new bytes, or an interrupted run resumed).
    Imported(Box<ImportReport>),
    /// The same bytes were imported completely before: nothing was read.
    Already,
    /// It could not be read or parsed (in Spanish); what it committed stays.
    Failed(String),
}

/// One file a sync saw.
#[derive(Debug, Clone)]
pub struct SyncedFile {
    pub path: PathBuf,
    pub outcome: Outcome,
}

/// What a sync did, file by file, in name order.
#[derive(Debug, Clone, Default)]
pub struct SyncReport {
    /// The row in `mk_sync_runs`.
    pub run_id: i64,
    pub files: Vec<SyncedFile>,
}

impl SyncReport {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.files.iter().filter(|s| f(&s.outcome)).count()
    }
    pub fn imported(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Imported(_)))
    }
    pub fn already(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Already))
    }
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }
}

/// The sources named by `LUNA_SYNC_SOURCES`: paths separated by commas (or new
/// lines), blanks ignored.
pub fn parse_sources(value: &str) -> Vec<PathBuf> {
    value
        .split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// What a sync imports a file as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Ocds,
    Sat69b,
}

/// The format of a file a sync imports, by its name (`None`: not a dump).
fn format_of(name: &str) -> Option<Format> {
    if name.starts_with('.') {
        return None;
    }
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if [".json", ".jsonl", ".ndjson"]
        .iter()
        .any(|ext| name.ends_with(ext))
    {
        Some(Format::Ocds)
    } else if name.ends_with(".csv") {
        Some(Format::Sat69b)
    } else {
        None
    }
}

fn importable(name: &str) -> bool {
    format_of(name).is_some()
}

fn unreadable(path: &Path, e: std::io::Error) -> EngineError {
    EngineError::typed(
        ErrorCode::InvalidArgument,
        format!("No se pudo leer la fuente {} ({e}).", path.display()),
        "Revisa LUNA_SYNC_SOURCES: rutas de archivos o directorios separadas por comas.",
    )
}

/// Every importable file under `dir`, recursively (hidden directories skipped).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> EngineResult<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))? {
        let entry = entry.map_err(|e| unreadable(dir, e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(|e| unreadable(&path, e))?;
        if kind.is_dir() {
            if !name.starts_with('.') {
                walk(&path, out)?;
            }
        } else if importable(&name) && std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            out.push(path);
        }
    }
    Ok(())
}

/// Every importable file of the sources: a file as given, a directory's files
/// (recursively), sorted by path and without repeats. A source that does not exist
/// is a typed error naming it.
pub fn list_files(sources: &[PathBuf]) -> EngineResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for source in sources {
        let meta = std::fs::metadata(source).map_err(|e| unreadable(source, e))?;
        if meta.is_dir() {
            walk(source, &mut out)?;
        } else {
            out.push(source.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Runs one sync over `sources`; `options` gives each file's import options (the
/// CLI's progress line). A file that fails is reported and the sync goes on.
pub async fn sync(
    store: &Store,
    sources: &[PathBuf],
    mut options: impl FnMut(&Path) -> Options,
) -> EngineResult<SyncReport> {
    let files = {
        let sources = sources.to_vec();
        tokio::task::spawn_blocking(move || list_files(&sources))
            .await
            .map_err(EngineError::internal)??
    };
    let listed = sources
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let run_id: i64 = sqlx::query_scalar(
        "insert into mk_sync_runs (sources, status, started_at) values ($1, 'running', $2) returning id",
    )
    .bind(&listed)
    .bind(crate::base::clock::now_ms())
    .fetch_one(store.pool())
    .await?;
    let mut report = SyncReport {
        run_id,
        files: Vec::with_capacity(files.len()),
    };
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let input = Input::File(path.clone());
        let imported = match name.as_deref().and_then(format_of) {
            Some(Format::Sat69b) => import_sat69b_from(store, input).await.map(|r| {
                let nothing_new = r.inserted.total() == 0 && r.updated == 0;
                (r, nothing_new)
            }),
            _ => import_ocds_from(store, input, options(&path))
                .await
                .map(|r| {
                    let already = r.already_imported;
                    (r, already)
                }),
        };
        let outcome = match imported {
            Ok((_, true)) => Outcome::Already,
            Ok((r, false)) => Outcome::Imported(Box::new(r)),
            Err(e) => Outcome::Failed(e.body().message),
        };
        report.files.push(SyncedFile { path, outcome });
    }
    sqlx::query(
        "update mk_sync_runs set status = 'done', files = $1, imported = $2, already = $3, failed = $4, finished_at = $5 where id = $6",
    )
    .bind(report.files.len() as i64)
    .bind(report.imported() as i64)
    .bind(report.already() as i64)
    .bind(report.failed() as i64)
    .bind(crate::base::clock::now_ms())
    .bind(run_id)
    .execute(store.pool())
    .await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ocds")
            .join(rel)
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("luna-sync-{tag}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    async fn count(store: &Store, table: &str) -> i64 {
        use sqlx::Row;
        sqlx::query(&format!("select count(*) from {table}"))
            .fetch_one(store.pool())
            .await
            .unwrap()
            .get(0)
    }

    #[tokio::test]
    async fn a_second_sync_imports_nothing_and_a_new_dump_is_imported() {
        let store = Store::open_temp().await.unwrap();
        let dir = temp_dir("drop");
        std::fs::copy(
            fixture("apf/record-package-apf.json"),
            dir.join("apf-2024.json"),
        )
        .unwrap();
        // Not dumps: a file being copied, a hidden file, a README.
        std::fs::write(dir.join("jalisco.json.part"), b"{").unwrap();
        std::fs::write(dir.join(".hidden.json"), b"{").unwrap();
        std::fs::write(dir.join("LEEME.txt"), b"hola").unwrap();
        let sources = vec![dir.clone()];

        let first = sync(&store, &sources, |_| Options::default())
            .await
            .unwrap();
        assert_eq!(first.files.len(), 1, "{:?}", first.files);
        assert_eq!(
            (first.imported(), first.already(), first.failed()),
            (1, 0, 0)
        );
        let awards = count(&store, "mk_awards").await;
        assert!(awards > 0);

        let second = sync(&store, &sources, |_| Options::default())
            .await
            .unwrap();
        assert_eq!(
            (second.imported(), second.already(), second.failed()),
            (0, 1, 0)
        );
        assert_eq!(count(&store, "mk_awards").await, awards);

        // An operator drops a new dump (gzip, in a subdirectory).
        std::fs::create_dir_all(dir.join("jalisco")).unwrap();
        let release_package =
            fixture("jalisco/ocds-xs1qbl-SFIN-03-0001-00-2017-20180118T043952078Z-award.json");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &std::fs::read(&release_package).unwrap()).unwrap();
        std::fs::write(dir.join("jalisco/nuevo.json.gz"), gz.finish().unwrap()).unwrap();
        let third = sync(&store, &sources, |_| Options::default())
            .await
            .unwrap();
        assert_eq!(
            (third.imported(), third.already(), third.failed()),
            (1, 1, 0)
        );
        let new_file = third
            .files
            .iter()
            .find(|f| f.path.ends_with("jalisco/nuevo.json.gz"))
            .unwrap();
        assert!(matches!(&new_file.outcome, Outcome::Imported(r) if r.inserted.total() > 0));

        // Each sync is recorded.
        use sqlx::Row;
        let runs = sqlx::query(
            "select files, imported, already, failed, status from mk_sync_runs order by id",
        )
        .fetch_all(store.pool())
        .await
        .unwrap();
        let runs: Vec<(i64, i64, i64, i64, String)> = runs
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
            .collect();
        assert_eq!(
            runs,
            vec![
                (1, 1, 0, 0, "done".to_string()),
                (1, 0, 1, 0, "done".to_string()),
                (2, 1, 1, 0, "done".to_string()),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_sat_69b_list_in_a_source_is_imported_and_then_counts_as_already_there() {
        let store = Store::open_temp().await.unwrap();
        let dir = temp_dir("sat69b");
        let list = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sat69b/Listado_Completo_69-B.sample.cp1252.csv");
        std::fs::copy(&list, dir.join("Listado_Completo_69-B.csv")).unwrap();
        std::fs::write(dir.join("otro.csv"), b"rfc,nombre\n").unwrap();
        let sources = vec![dir.clone()];
        let first = sync(&store, &sources, |_| Options::default())
            .await
            .unwrap();
        assert_eq!(
            (first.imported(), first.already(), first.failed()),
            (1, 0, 1),
            "{:?}",
            first.files
        );
        let not_a_list = first
            .files
            .iter()
            .find(|f| f.path.ends_with("otro.csv"))
            .unwrap();
        assert!(matches!(&not_a_list.outcome, Outcome::Failed(m) if m.contains("69-B")));
        let marks = count(&store, "mk_risks").await;
        assert!(marks > 200);
        let second = sync(&store, &sources, |_| Options::default())
            .await
            .unwrap();
        assert_eq!((second.imported(), second.already()), (0, 1));
        assert_eq!(count(&store, "mk_risks").await, marks);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_broken_dump_fails_alone_and_a_missing_source_is_named() {
        let store = Store::open_temp().await.unwrap();
        let dir = temp_dir("broken");
        std::fs::write(dir.join("a-roto.json"), b"{\"releases\": [").unwrap();
        std::fs::copy(fixture("apf/record-package-apf.json"), dir.join("b.json")).unwrap();
        let r = sync(&store, std::slice::from_ref(&dir), |_| Options::default())
            .await
            .unwrap();
        assert_eq!((r.imported(), r.already(), r.failed()), (1, 0, 1));

        let missing = dir.join("no-existe");
        let e = sync(&store, &[missing], |_| Options::default())
            .await
            .unwrap_err();
        assert!(
            e.body().message.contains("no-existe"),
            "{}",
            e.body().message
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sources_are_split_on_commas_and_new_lines() {
        assert_eq!(
            parse_sources(" /datos/apf , /datos/jalisco\n\n/x.json.gz,"),
            vec![
                PathBuf::from("/datos/apf"),
                PathBuf::from("/datos/jalisco"),
                PathBuf::from("/x.json.gz")
            ]
        );
    }
}
