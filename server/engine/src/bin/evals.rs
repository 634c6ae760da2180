//! `cargo run -p luna-engine --bin evals [-- OUT_DIR]`: runs the brief bench through
//! the local director on generated demo data, checks the eight blocking evals over
//! every recorded trajectory, writes `report.md` and `report.json` (default
//! `target/evals/`) and exits non-zero on any blocking failure.
//!
//! Then it measures issue 22's public and held-out briefs (never blocking): the public
//! file's full report goes to `public.md`/`public.json`, both files' scores to
//! `scores.md`/`scores.json`. The held-out file is reported in aggregate only — no
//! sentence and no brief id is printed or written.
//!
//! `evals --briefs FILE [OUT_DIR]` runs only one briefs file from disk (the dev file
//! while tuning) and writes its detail to `OUT_DIR/<file stem>.md`. It refuses the
//! held-out file, whose sentences nobody reads.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use luna_engine::evals::bench;
use luna_engine::evals::report::{self, FileScore};
use luna_engine::EngineResult;

/// Runs one of issue 22's files on a fresh demo engine and scores it.
async fn measure(
    json: &str,
    name: &str,
    held_out: bool,
) -> EngineResult<(bench::Report, FileScore)> {
    let briefs = bench::load(json, name)?.briefs;
    let engine = bench::demo_engine().await?;
    let report = bench::run(&engine, &briefs).await?;
    let score = report::score(name, held_out, &briefs, &report);
    Ok((report, score))
}

fn write_measures(out: &Path, public: &bench::Report, scores: &[FileScore]) -> std::io::Result<()> {
    let table = report::scores_markdown(scores);
    let mut md = String::from("# Issue 22 briefs: public file\n\n");
    md.push_str(&table);
    md.push('\n');
    md.push_str(&bench::markdown(public));
    std::fs::write(out.join("public.md"), md)?;
    let json = serde_json::to_string_pretty(public).map_err(std::io::Error::other)?;
    std::fs::write(out.join("public.json"), json + "\n")?;
    std::fs::write(
        out.join("scores.md"),
        format!("# Issue 22 briefs: scores\n\n{table}"),
    )?;
    let json = serde_json::to_string_pretty(scores).map_err(std::io::Error::other)?;
    std::fs::write(out.join("scores.json"), json + "\n")
}

/// `--briefs FILE [OUT_DIR]`: one file's score and detail, nothing blocking.
async fn only(file: &Path, out: &Path) -> ExitCode {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.contains("heldout") {
        eprintln!(
            "evals: the held-out file is only measured in aggregate (run evals without --briefs)"
        );
        return ExitCode::from(2);
    }
    let json = match std::fs::read_to_string(file) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("evals: could not read {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let (detail, score) = match measure(&json, &name, false).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("evals: could not run {name}: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", report::score_line(&score));
    let stem = name.trim_end_matches(".json");
    let mut md = format!("# {name}\n\n");
    md.push_str(&report::scores_markdown(std::slice::from_ref(&score)));
    md.push('\n');
    md.push_str(&bench::markdown(&detail));
    let path = out.join(format!("{stem}.md"));
    if let Err(e) = std::fs::create_dir_all(out).and_then(|()| std::fs::write(&path, md)) {
        eprintln!("evals: could not write {}: {e}", path.display());
        return ExitCode::from(2);
    }
    println!("detail: {}", path.display());
    ExitCode::SUCCESS
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "--briefs") {
        args.next();
        let Some(file) = args.next().map(PathBuf::from) else {
            eprintln!("evals: --briefs needs a file");
            return ExitCode::from(2);
        };
        let out = args
            .next()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("target/evals"));
        return only(&file, &out).await;
    }
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

    let measured = async {
        let (public, p) = measure(bench::PUBLIC_JSON, "briefs_public.json", false).await?;
        let (_, h) = measure(bench::HELDOUT_JSON, "briefs_heldout.json", true).await?;
        EngineResult::Ok((public, vec![p, h]))
    }
    .await;
    match measured {
        Ok((public, scores)) => {
            println!("issue 22 briefs (measured, not blocking):");
            for s in &scores {
                print!("  {}", report::score_line(s));
            }
            match write_measures(&out, &public, &scores) {
                Ok(()) => println!(
                    "scores: {}; public detail: {}",
                    out.join("scores.md").display(),
                    out.join("public.md").display()
                ),
                Err(e) => eprintln!("evals: could not write the scores: {e}"),
            }
        }
        Err(e) => eprintln!("evals: could not measure the issue 22 briefs: {e}"),
    }
    if report.summary.green {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
