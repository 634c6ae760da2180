//! `cargo run -p luna-engine --bin evals [-- OUT_DIR]`: runs the brief bench through
//! the local director on generated demo data, checks the eight blocking evals over
//! every recorded trajectory, writes `report.md` and `report.json` (default
//! `target/evals/`) and exits non-zero on any blocking failure.

use std::path::PathBuf;
use std::process::ExitCode;

use luna_engine::evals::bench;

#[tokio::main]
async fn main() -> ExitCode {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/evals"));
    let result = async {
        let briefs = bench::briefs()?;
        let engine = bench::demo_engine().await?;
        bench::run(&engine, &briefs).await
    }
    .await;
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("evals: could not run the bench: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = bench::write(&report, &out) {
        eprintln!(
            "evals: could not write the report to {}: {e}",
            out.display()
        );
        return ExitCode::from(2);
    }
    print!("{}", bench::summary_line(&report));
    println!("report: {}", out.join("report.md").display());
    if report.summary.green {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
