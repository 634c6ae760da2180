//! Crash test of the streaming OCDS import (issue 24): the `luna-server import-ocds`
//! binary is killed with SIGKILL in the middle of a generated record package, run
//! again on the same file, and must end with the same rows as a clean import into a
//! fresh database; a third run changes nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use luna_engine::Store;

/// Releases in the generated file: enough for an import of several seconds.
const RELEASES: u64 = 15_000;

fn import(dir: &Path, file: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_luna-server"));
    cmd.arg("import-ocds")
        .arg(file)
        .env("LUNA_DATA_DIR", dir)
        .env(
            "LUNA_DATABASE_URL",
            format!("sqlite://{}", dir.join("luna.db").display()),
        )
        .env("LUNA_DEMO", "0")
        .env("LUNA_BIND", "127.0.0.1:0")
        .env_remove("LUNA_SECRET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

async fn counts(dir: &Path) -> Vec<(String, i64)> {
    let store = Store::open(&format!("sqlite://{}", dir.join("luna.db").display()))
        .await
        .unwrap();
    let mut out = Vec::new();
    for (name, sql) in [
        ("suppliers", "select count(*) from mk_suppliers where source like 'ocds:%'"),
        ("opportunities", "select count(*) from mk_opportunities where source like 'ocds:%'"),
        ("awards", "select count(*) from mk_awards where source like 'ocds:%'"),
        ("awards_total", "select cast(coalesce(sum(awards_count), 0) as bigint) from mk_suppliers where source like 'ocds:%'"),
        ("history", "select count(*) from mk_history"),
    ] {
        let (n,): (i64,) = sqlx::query_as(sql).fetch_one(store.pool()).await.unwrap();
        out.push((name.to_string(), n));
    }
    out
}

async fn releases_done(dir: &Path) -> Option<i64> {
    let store = Store::open(&format!("sqlite://{}", dir.join("luna.db").display()))
        .await
        .ok()?;
    sqlx::query_as::<_, (i64,)>("select releases_done from mk_import_runs order by id desc limit 1")
        .fetch_optional(store.pool())
        .await
        .ok()
        .flatten()
        .map(|r| r.0)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("luna-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_import_resumes_and_ends_equal_to_a_clean_import() {
    let work = temp_dir("file");
    let file = work.join("records.json");
    luna_engine::market::import::ocds::sample::write_record_package(
        std::fs::File::create(&file).unwrap(),
        RELEASES,
        24,
    )
    .unwrap();

    // A clean import into a fresh database.
    let clean = temp_dir("clean");
    let out = import(&clean, &file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = counts(&clean).await;
    assert!(expected[2].1 >= RELEASES as i64, "{expected:?}");

    // Killed midway: after at least one batch is committed, before the end.
    let crashed = temp_dir("crashed");
    // The database and its migrations exist before the import starts.
    drop(
        Store::open(&format!("sqlite://{}", crashed.join("luna.db").display()))
            .await
            .unwrap(),
    );
    let mut child = import(&crashed, &file).spawn().unwrap();
    let started = Instant::now();
    loop {
        if releases_done(&crashed).await.unwrap_or(0) >= 2_000 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended before it could be killed"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no batch committed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = releases_done(&crashed).await.unwrap();
    assert!(done < RELEASES as i64, "killed too late: {done}");
    assert_ne!(
        counts(&crashed).await,
        expected,
        "the kill left a partial import"
    );

    // Run again: resumes after the last committed batch.
    let out = import(&crashed, &file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Se reanudó"), "{text}");
    assert_eq!(counts(&crashed).await, expected);

    // And once more: the finished file is recognised and nothing changes.
    let out = import(&crashed, &file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("ya se importó"), "{text}");
    assert_eq!(counts(&crashed).await, expected);

    for d in [work, clean, crashed] {
        let _ = std::fs::remove_dir_all(d);
    }
}
