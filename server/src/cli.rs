//! Operator subcommands of the `luna-server` binary, run against the configured
//! database instead of serving:
//!
//! - `luna-server create-api-key --email <owner/admin email> --name <name>
//!   [--scopes contacts:reveal,crm:write,knowledge:write,knowledge:delete]
//!   [--budget <credits per month>] [--expires <YYYY-MM-DD>]` prints the new key's
//!   secret on the first line and its id on the second. Without `--scopes` the key is
//!   read-only.
//! - `luna-server revoke-api-key --email <owner/admin email> --id <key id>`.
//! - `luna-server import-ocds <file>...` imports OCDS release packages, record
//!   packages, bare releases or JSON Lines of them, plain or gzip (`-` reads standard
//!   input), streaming with a progress line on standard error; a killed import run
//!   again on the same file resumes, a finished one is not imported twice.
//! - `luna-server sync [<path>...]` imports what is new in the configured sources
//!   (`LUNA_SYNC_SOURCES`, or the paths given): files already imported completely are
//!   skipped by their hash; each sync is recorded (`mk_sync_runs`).
//! - `luna-server resolve-suppliers` links every supplier without an RFC (hashed RFC,
//!   state registry id, name alone) to the RFC'd supplier it is, by RFC and then by
//!   legal name (`market::entities`; an OCDS import already does it for the suppliers
//!   it wrote), and prints what it linked.
//! - `luna-server import-sat69b <file.csv>` imports the SAT 69-B list.
//! - `luna-server model-pin --email <owner/admin email> --pin none|primary|fallback`
//!   pins the workspace to one model route (the pin gate, CONTRACT §7.5).
//! - `luna-server mark-replied --email <member email> --sequence <id> --recipient <correo>`
//!   records that the recipient answered the sequence: their remaining steps of it are
//!   cancelled and never sent (there is no mailbox integration in this version).
//!
//! Imports are idempotent: re-running one reports nothing inserted. Each prints what
//! it inserted and what it skipped, and why.

mod progress;
mod sync;

use luna_engine::accounts::{Caller, KeySpec};
use luna_engine::error::{EngineError, EngineResult};
use luna_engine::turn::openai::pin::{self, Pin};
use luna_engine::Engine;
use luna_protocol::account::{ApiScope, Role};
use luna_protocol::error::ErrorCode;

/// Pins the caller's workspace to a model route; owners and admins only.
async fn pin_workspace(engine: &Engine, caller: &Caller, to: Pin) -> EngineResult<()> {
    if !matches!(caller.role, Role::Owner | Role::Admin) {
        return Err(EngineError::typed(
            ErrorCode::Forbidden,
            "Solo el dueño o un administrador fija la ruta del modelo.",
            "Pídeselo a quien administra el espacio de trabajo.",
        ));
    }
    pin::set(&engine.store, &caller.workspace_id, to).await?;
    println!("{} → {}", caller.workspace_id, to.as_str());
    Ok(())
}

/// Value of `--flag` in `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The key `create-api-key` asks for: `--name`, `--scopes a,b`, `--budget N`,
/// `--expires YYYY-MM-DD` (the key works through that day, central Mexico time).
fn key_spec(args: &[String]) -> Result<KeySpec, String> {
    let mut scopes = Vec::new();
    if let Some(list) = flag(args, "--scopes") {
        for name in list.split(',').filter(|s| !s.trim().is_empty()) {
            let scope = ApiScope::parse(name).ok_or_else(|| {
                let known: Vec<&str> = ApiScope::ALL.iter().map(|s| s.as_str()).collect();
                format!(
                    "permiso desconocido «{}»; usa {}",
                    name.trim(),
                    known.join(", ")
                )
            })?;
            scopes.push(scope);
        }
    }
    KeySpec::from_text(
        flag(args, "--name").unwrap_or("cli"),
        scopes,
        flag(args, "--budget"),
        flag(args, "--expires"),
    )
    .map_err(|e| e.body().message)
}

/// Runs a subcommand if `args[0]` names one; returns its exit code, or `None` to serve.
pub async fn run(
    args: &[String],
    engine: impl std::future::Future<Output = Result<Engine, String>>,
) -> Option<i32> {
    let command = args.first()?.as_str();
    if matches!(command, "import-ocds" | "import-sat69b") {
        return Some(import(command, &args[1..], engine).await);
    }
    if command == "resolve-suppliers" {
        return Some(resolve_suppliers(engine).await);
    }
    if command == "sync" {
        let configured = std::env::var("LUNA_SYNC_SOURCES").ok();
        return Some(sync::run(&args[1..], configured.as_deref(), engine).await);
    }
    if !matches!(
        command,
        "create-api-key" | "revoke-api-key" | "model-pin" | "mark-replied"
    ) {
        return None;
    }
    let Some(email) = flag(args, "--email") else {
        eprintln!("uso: luna-server {command} --email <correo> …");
        return Some(2);
    };
    let engine = match engine.await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return Some(1);
        }
    };
    let caller = match engine.accounts.caller_for_email(email).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            eprintln!("no existe una cuenta con el correo {email} en ningún espacio de trabajo");
            return Some(1);
        }
        Err(e) => {
            eprintln!("{e}");
            return Some(1);
        }
    };
    let result = match command {
        "create-api-key" => match key_spec(args) {
            Ok(spec) => engine
                .accounts
                .create_api_key(&caller, &spec)
                .await
                .map(|k| println!("{}\n{}", k.secret, k.id)),
            Err(message) => {
                eprintln!("{message}");
                return Some(2);
            }
        },
        "mark-replied" => {
            let (Some(sequence), Some(recipient)) =
                (flag(args, "--sequence"), flag(args, "--recipient"))
            else {
                eprintln!("uso: luna-server mark-replied --email <correo> --sequence <secuencia> --recipient <correo>");
                return Some(2);
            };
            luna_engine::sequences::replies::mark(&engine, &caller, sequence, recipient)
                .await
                .map(|m| {
                    println!(
                        "{}: {} pasos pendientes cancelados",
                        if m.new {
                            "Respuesta registrada"
                        } else {
                            "La respuesta ya estaba registrada"
                        },
                        m.cancelled
                    )
                })
        }
        "model-pin" => {
            let Some(pin) = flag(args, "--pin").and_then(Pin::parse) else {
                eprintln!(
                    "uso: luna-server model-pin --email <correo> --pin none|primary|fallback"
                );
                return Some(2);
            };
            pin_workspace(&engine, &caller, pin).await
        }
        _ => match flag(args, "--id") {
            Some(id) => engine.accounts.revoke_api_key(&caller, id).await,
            None => {
                eprintln!("uso: luna-server revoke-api-key --email <correo> --id <llave>");
                return Some(2);
            }
        },
    };
    match result {
        Ok(()) => Some(0),
        Err(e) => {
            eprintln!("{}", e.body().message);
            Some(1)
        }
    }
}

/// Which importer a subcommand runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    Ocds,
    Sat69b,
}

/// `import-ocds` / `import-sat69b`: imports every file, prints one report per file
/// and returns 0 when every file could be read and parsed.
async fn import(
    command: &str,
    files: &[String],
    engine: impl std::future::Future<Output = Result<Engine, String>>,
) -> i32 {
    let kind = if command == "import-ocds" {
        ImportKind::Ocds
    } else {
        ImportKind::Sat69b
    };
    if files.is_empty() || (kind == ImportKind::Sat69b && files.len() != 1) {
        eprintln!(
            "uso: luna-server {command} {}",
            if kind == ImportKind::Ocds {
                "<archivo.json|.jsonl|.gz|->..."
            } else {
                "<archivo.csv>"
            }
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
    let mut code = 0;
    for file in files {
        match import_file(&engine, kind, std::path::Path::new(file)).await {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("{file}: {e}");
                code = 1;
            }
        }
    }
    code
}

/// Imports one file (`-`: standard input) and renders its report (Spanish, for the
/// operator). OCDS imports stream, show their progress on standard error and resume
/// an interrupted run of the same file.
pub async fn import_file(
    engine: &Engine,
    kind: ImportKind,
    path: &std::path::Path,
) -> Result<String, String> {
    use luna_engine::market::import::ocds;
    let store = engine.market.store();
    let label = path.display().to_string();
    let report = match kind {
        ImportKind::Ocds => {
            let input = if label == "-" {
                ocds::Input::Stdin
            } else {
                ocds::Input::File(path.to_path_buf())
            };
            let options = ocds::Options {
                on_progress: Some(progress::reporter(label.clone())),
                ..Default::default()
            };
            ocds::import_ocds_from(store, input, options).await
        }
        ImportKind::Sat69b => {
            let input = if label == "-" {
                ocds::Input::Stdin
            } else {
                ocds::Input::File(path.to_path_buf())
            };
            luna_engine::market::import::sat69b::import_sat69b_from(store, input).await
        }
    }
    .map_err(|e| e.body().message)?;
    Ok(render_report(&label, &report))
}

/// `resolve-suppliers`: entity resolution over every supplier.
async fn resolve_suppliers(
    engine: impl std::future::Future<Output = Result<Engine, String>>,
) -> i32 {
    let engine = match engine.await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    match luna_engine::market::entities::resolve_all(engine.market.store()).await {
        Ok(r) => {
            println!("{}", resolution_line(&r));
            0
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// What entity resolution linked, in Spanish.
fn resolution_line(r: &luna_engine::market::entities::Resolution) -> String {
    format!(
        "identidades enlazadas: por RFC {} · por nombre {} · nombres ambiguos (sin enlazar): {}",
        r.linked_by_rfc, r.linked_by_name, r.ambiguous_names
    )
}

/// How many skipped items the summary names one by one (the rest are counted by reason).
const SKIPPED_SHOWN: usize = 10;

pub(crate) fn render_report(file: &str, r: &luna_engine::market::import::ImportReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let i = &r.inserted;
    let _ = writeln!(out, "{file} ({})", r.source);
    for n in &r.notes {
        let _ = writeln!(out, "  nota: {n}");
    }
    let _ = writeln!(
        out,
        "  importados: {} (Proveedores {}, Licitaciones {}, Adjudicaciones {}, marcas de riesgo {})",
        i.total(),
        i.suppliers,
        i.opportunities,
        i.awards,
        i.risks
    );
    let _ = writeln!(
        out,
        "  actualizados: {} · ya estaban: {} · omitidos: {}",
        r.updated, r.unchanged, r.skipped_total
    );
    if r.source.starts_with("ocds:") {
        let _ = writeln!(out, "  {}", resolution_line(&r.resolution));
    }
    for (reason, n) in &r.skipped_by_reason {
        let _ = writeln!(out, "    {n} omitidos: {reason}");
    }
    for s in r.skipped.iter().take(SKIPPED_SHOWN) {
        let _ = writeln!(out, "    omitido {}: {}", s.item, s.reason);
    }
    for w in &r.warnings {
        let _ = writeln!(out, "  aviso: {w}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_engine::Store;

    fn fixture(rel: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("engine/tests/fixtures")
            .join(rel)
    }

    fn inserted_line(text: &str) -> String {
        text.lines()
            .find(|l| l.contains("importados:"))
            .unwrap_or_default()
            .to_owned()
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn create_api_key_reads_scopes_budget_and_expiry_and_defaults_to_read_only() {
        let plain = key_spec(&words("create-api-key --email a@b.mx --name bot")).unwrap();
        assert_eq!(plain, KeySpec::read_only("bot"));
        let full = key_spec(&words(
            "create-api-key --name bot --scopes contacts:reveal,knowledge:delete --budget 50 --expires 2026-12-31",
        ))
        .unwrap();
        assert_eq!(
            full.scopes,
            [ApiScope::ContactsReveal, ApiScope::KnowledgeDelete]
        );
        assert_eq!(full.credit_budget, Some(50));
        assert_eq!(full.expires_at, Some(1_798_783_200_000));
        let bad = key_spec(&words("create-api-key --scopes knowledge:merge")).unwrap_err();
        assert!(bad.contains("knowledge:merge"), "{bad}");
        assert!(key_spec(&words("create-api-key --budget mucho")).is_err());
    }

    #[tokio::test]
    async fn imports_print_a_report_and_a_second_run_is_a_no_op() {
        let engine = Engine::from_store(Store::open_temp().await.unwrap());
        let ocds = fixture("ocds/fictional/record-ocds-213czf-000-00001.json");
        let first = import_file(&engine, ImportKind::Ocds, &ocds).await.unwrap();
        assert!(!inserted_line(&first).contains("importados: 0 "), "{first}");
        assert!(
            first.contains("identidades enlazadas: por RFC 0 · por nombre 0 · nombres ambiguos (sin enlazar): 0"),
            "{first}"
        );
        let again = import_file(&engine, ImportKind::Ocds, &ocds).await.unwrap();
        assert!(inserted_line(&again).contains("importados: 0 "), "{again}");

        let csv = fixture("sat69b/Listado_Completo_69-B.sample.cp1252.csv");
        let first = import_file(&engine, ImportKind::Sat69b, &csv)
            .await
            .unwrap();
        assert!(!inserted_line(&first).contains("importados: 0 "), "{first}");
        assert!(
            first.contains("omitido"),
            "the sample has rows to skip: {first}"
        );
        let again = import_file(&engine, ImportKind::Sat69b, &csv)
            .await
            .unwrap();
        assert!(inserted_line(&again).contains("importados: 0 "), "{again}");

        // The imported data is searchable through the tools' service.
        let cov = engine.market.coverage().await.unwrap();
        assert!(cov.sources.len() >= 2);

        assert!(
            import_file(&engine, ImportKind::Ocds, &fixture("nope.json"))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn the_subcommand_runs_every_file_and_checks_its_arguments() {
        let open = || async { Ok(Engine::from_store(Store::open_temp().await.unwrap())) };
        let args: Vec<String> = vec![
            "import-ocds".into(),
            fixture(
                "ocds/jalisco/ocds-xs1qbl-SFIN-03-0001-00-2017-20180118T043951880Z-planning.json",
            )
            .display()
            .to_string(),
            fixture(
                "ocds/jalisco/ocds-xs1qbl-SFIN-03-0001-00-2017-20180118T043951992Z-tender.json",
            )
            .display()
            .to_string(),
        ];
        assert_eq!(run(&args, open()).await, Some(0));
        assert_eq!(run(&["import-sat69b".to_string()], open()).await, Some(2));
        let missing = vec!["import-ocds".to_string(), "/no/existe.json".to_string()];
        assert_eq!(run(&missing, open()).await, Some(1));
        assert_eq!(run(&["serve".to_string()], open()).await, None);
    }

    #[tokio::test]
    async fn resolve_suppliers_runs_over_the_whole_market() {
        let open = || async { Ok(Engine::from_store(Store::open_temp().await.unwrap())) };
        let args = vec!["resolve-suppliers".to_string()];
        assert_eq!(run(&args, open()).await, Some(0));
    }

    #[tokio::test]
    async fn mark_replied_stops_the_recipients_remaining_steps() {
        use luna_engine::sequences::{dispatch, Step};
        use luna_protocol::account::Plan;
        let engine = luna_engine::testkit::engine().await.unwrap();
        let caller = luna_engine::testkit::caller(&engine, Plan::Founder, Role::Member)
            .await
            .unwrap();
        let steps = [
            Step {
                delay_days: 0,
                subject: "Hola".into(),
                body: "¿Platicamos?".into(),
            },
            Step {
                delay_days: 2,
                subject: "Seguimiento".into(),
                body: "Sigo aquí.".into(),
            },
        ];
        let (s, emails) =
            luna_engine::testkit::authorized_sequence(&engine, &caller, &["EBA010101AB1"], &steps)
                .await;
        let args = |recipient: &str| -> Vec<String> {
            words(&format!(
                "mark-replied --email {} --sequence {} --recipient {recipient}",
                caller.email, s.id
            ))
        };
        let e = engine.clone();
        assert_eq!(run(&args(&emails[0]), async move { Ok(e) }).await, Some(0));
        let r = dispatch::run_once(
            &engine,
            "cli",
            luna_engine::clock::now_ms() + 10 * 86_400_000,
        )
        .await
        .unwrap();
        assert_eq!(r.sent, 0, "{r:?}");
        let e = engine.clone();
        assert_eq!(
            run(&args("nadie@empresa.mx"), async move { Ok(e) }).await,
            Some(1)
        );
        let e = engine.clone();
        assert_eq!(
            run(
                &words(&format!("mark-replied --email {}", caller.email)),
                async move { Ok(e) }
            )
            .await,
            Some(2)
        );
    }
}
