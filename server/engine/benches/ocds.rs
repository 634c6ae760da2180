//! OCDS import at scale (issue 24): generates a record package in the federal
//! administration's shape (`ocds::sample`) and imports it with the streaming importer,
//! printing releases per second.
//!
//! - `cargo bench -p luna-engine --bench ocds` — 20,000 releases into a fresh
//!   database (`LUNA_TEST_DATABASE_URL` for PostgreSQL), `LUNA_BENCH_RELEASES=N` for more.
//! - `cargo bench -p luna-engine --bench ocds -- generate <file> <releases>` — only
//!   writes the file (append `.gz` to the name for gzip), for timing the CLI under
//!   `/usr/bin/time -v luna-server import-ocds <file>` (peak RSS).
//! - `LUNA_BENCH_DB=<url>` imports into that database and keeps it (then `cargo bench
//!   --bench market` with the same `LUNA_BENCH_DB` measures searches on the imported
//!   data); `LUNA_BENCH_DEFER=0|1` forces how the search indexes are built.

use std::time::Instant;

use luna_engine::market::import::ocds;
use luna_engine::Store;

fn generate(path: &str, releases: u64) -> u64 {
    let file = std::fs::File::create(path).expect("create the output file");
    if path.ends_with(".gz") {
        let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        ocds::sample::write_record_package(gz, releases, 24).expect("write")
    } else {
        ocds::sample::write_record_package(file, releases, 24).expect("write")
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("generate") {
        let path = args.get(1).expect("generate <file> <releases>");
        let n = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(500_000);
        let t = Instant::now();
        let bytes = generate(path, n);
        eprintln!(
            "{path}: {n} releases, {} MB (uncompressed) in {:.1?}",
            bytes >> 20,
            t.elapsed()
        );
        return;
    }
    let n: u64 = std::env::var("LUNA_BENCH_RELEASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let path = std::env::temp_dir().join(format!("luna-bench-ocds-{}.json", std::process::id()));
    let bytes = generate(&path.display().to_string(), n);
    // `LUNA_BENCH_DB=sqlite:///tmp/x.db?mode=rwc` keeps the imported data there, for the
    // market bench to measure searches on it (`LUNA_BENCH_DB` there too).
    let store = match std::env::var("LUNA_BENCH_DB") {
        Ok(url) => Store::open(&url).await.expect("open LUNA_BENCH_DB"),
        Err(_) => Store::open_temp().await.expect("store"),
    };
    let t = Instant::now();
    // `LUNA_BENCH_BATCH` and `LUNA_BENCH_CACHE_KIB` try other batch and cache sizes;
    let mut opts = ocds::Options::default();
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(b) = env("LUNA_BENCH_BATCH") {
        opts.batch = b as usize;
    }
    if let Some(c) = env("LUNA_BENCH_CACHE_KIB") {
        opts.cache_kib = c as u32;
    }
    // `LUNA_BENCH_DEFER=0|1` forces the search indexes kept during the import or built
    // at its end (by default the importer decides by the file's size).
    if let Some(d) = env("LUNA_BENCH_DEFER") {
        opts.defer_indexes = Some(d == 1);
    }
    let r = ocds::import_ocds_from(&store, ocds::Input::File(path.clone()), opts)
        .await
        .expect("import");
    let secs = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    println!(
        "| {:?} | {n} | {} MB | {:.1} s | {:.0} releases/s | {} awards, {} suppliers |",
        store.backend(),
        bytes >> 20,
        secs,
        n as f64 / secs,
        r.inserted.awards,
        r.inserted.suppliers
    );
}
