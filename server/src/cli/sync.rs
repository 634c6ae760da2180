//! `luna-server sync [<path>...]`: one sync of the configured sources
//! (`LUNA_SYNC_SOURCES`, or the paths given on the command line) through
//! [`luna_engine::market::import::sync`]; prints one line per file and a summary, and
//! exits 1 when a file failed (the others are imported all the same).

use std::fmt::Write;
use std::path::PathBuf;

use luna_engine::market::import::ocds;
use luna_engine::market::import::sync::{self, Outcome, SyncReport};
use luna_engine::Engine;

/// Runs the subcommand; returns the exit code.
pub async fn run(
    args: &[String],
    configured: Option<&str>,
    engine: impl std::future::Future<Output = Result<Engine, String>>,
) -> i32 {
    let sources: Vec<PathBuf> = if args.is_empty() {
        configured.map(sync::parse_sources).unwrap_or_default()
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    if sources.is_empty() {
        eprintln!(
            "uso: luna-server sync [<archivo o directorio>...] (o define LUNA_SYNC_SOURCES con rutas separadas por comas)"
        );
        return 2;
    }
    let engine = match engine.await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    match sync::sync(engine.market.store(), &sources, |path| ocds::Options {
        on_progress: Some(super::progress::reporter(path.display().to_string())),
        ..Default::default()
    })
    .await
    {
        Ok(report) => {
            print!("{}", render(&report));
            i32::from(report.failed() > 0)
        }
        Err(e) => {
            eprintln!("{}", e.body().message);
            1
        }
    }
}

/// The operator's summary of one sync, in Spanish.
pub fn render(report: &SyncReport) -> String {
    let mut out = String::new();
    for f in &report.files {
        let file = f.path.display().to_string();
        match &f.outcome {
            Outcome::Imported(r) => out.push_str(&super::render_report(&file, r)),
            Outcome::Already => {
                let _ = writeln!(out, "{file}: ya importado completo; sin cambios");
            }
            Outcome::Failed(message) => {
                let _ = writeln!(out, "{file}: falló: {message}");
            }
        }
    }
    let _ = writeln!(
        out,
        "sincronización {}: {} archivos · importados {} · ya estaban {} · fallaron {}",
        report.run_id,
        report.files.len(),
        report.imported(),
        report.already(),
        report.failed()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_engine::Store;

    #[tokio::test]
    async fn sync_takes_the_configured_sources_and_the_second_run_changes_nothing() {
        let store = Store::open_temp().await.unwrap();
        let open = || {
            let store = store.clone();
            async move { Ok(Engine::from_store(store)) }
        };
        let dir =
            std::env::temp_dir().join(format!("luna-cli-sync-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("engine/tests/fixtures/ocds/apf/record-package-apf.json"),
            dir.join("apf.json"),
        )
        .unwrap();
        let configured = format!("{},", dir.display());
        assert_eq!(run(&[], Some(&configured), open()).await, 0);
        let engine = Engine::from_store(store.clone());
        let again = sync::sync(engine.market.store(), std::slice::from_ref(&dir), |_| {
            ocds::Options::default()
        })
        .await
        .unwrap();
        assert!(
            render(&again).contains("importados 0 · ya estaban 1"),
            "{}",
            render(&again)
        );
        // No sources anywhere: usage, exit 2; a missing source: exit 1.
        assert_eq!(run(&[], None, open()).await, 2);
        assert_eq!(run(&["/no/existe".to_string()], None, open()).await, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
