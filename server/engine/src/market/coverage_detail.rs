//! The per-year and freshness part of the coverage map (`Market::coverage`):
//! Licitaciones and Adjudicaciones per year with their MXN amounts, and, per imported
//! OCDS source, its files, last import and newest release date, plus the last
//! scheduled sync. Same client-safe rule as `coverage`: labels, counts and dates only.

use luna_protocol::coverage::{ImportFreshness, SyncFreshness, YearCoverage};

use crate::base::error::EngineResult;
use crate::base::store::Store;

#[derive(sqlx::FromRow)]
struct YearRow {
    year: Option<String>,
    n: i64,
    total: Option<f64>,
}

#[derive(sqlx::FromRow)]
struct RunRow {
    source: Option<String>,
    publisher: Option<String>,
    n: i64,
    last_at: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct NewestRow {
    source: Option<String>,
    newest: Option<String>,
}

#[derive(sqlx::FromRow)]
struct SyncRow {
    status: String,
    started_at: i64,
    finished_at: Option<i64>,
    files: i64,
    imported: i64,
    already: i64,
    failed: i64,
}

/// Licitaciones and Adjudicaciones per year, oldest first.
pub(super) async fn years(store: &Store) -> EngineResult<Vec<YearCoverage>> {
    let pool = store.pool();
    let mut by_year = std::collections::BTreeMap::<String, YearCoverage>::new();
    let opportunities = sqlx::query_as::<_, YearRow>(
        "select substr(published, 1, 4) as year, count(*) as n, cast(null as double precision) as total
           from mk_opportunities where published is not null group by substr(published, 1, 4)",
    )
    .fetch_all(pool)
    .await?;
    let awards = sqlx::query_as::<_, YearRow>(
        "select substr(date, 1, 4) as year, count(*) as n,
                sum(case when currency = 'MXN' then amount else null end) as total
           from mk_awards where date is not null group by substr(date, 1, 4)",
    )
    .fetch_all(pool)
    .await?;
    let blank = |year: &str| YearCoverage {
        year: year.to_owned(),
        opportunities: 0,
        awards: 0,
        awards_amount_mxn: 0.0,
    };
    for r in opportunities {
        let Some(y) = r.year.filter(|y| is_year(y)) else {
            continue;
        };
        by_year
            .entry(y.clone())
            .or_insert_with(|| blank(&y))
            .opportunities += super::coverage::rows_count(r.n);
    }
    for r in awards {
        let Some(y) = r.year.filter(|y| is_year(y)) else {
            continue;
        };
        let e = by_year.entry(y.clone()).or_insert_with(|| blank(&y));
        e.awards += super::coverage::rows_count(r.n);
        e.awards_amount_mxn += r.total.unwrap_or(0.0);
    }
    Ok(by_year.into_values().collect())
}

fn is_year(y: &str) -> bool {
    y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit())
}

/// Each OCDS source's finished imports and the newest release its rows carry, most
/// recently imported first.
pub(super) async fn imports(store: &Store) -> EngineResult<Vec<ImportFreshness>> {
    let pool = store.pool();
    let runs = sqlx::query_as::<_, RunRow>(
        "select source, max(publisher) as publisher, count(*) as n, max(finished_at) as last_at
           from mk_import_runs where status = 'done' group by source",
    )
    .fetch_all(pool)
    .await?;
    let mut newest = std::collections::HashMap::<String, String>::new();
    for table in ["mk_awards", "mk_opportunities"] {
        let sql = format!(
            "select r.source as source, max(t.release_date) as newest
               from {table} t join mk_import_runs r on r.id = t.import_run group by r.source"
        );
        for row in sqlx::query_as::<_, NewestRow>(&sql).fetch_all(pool).await? {
            let (Some(s), Some(d)) = (row.source, row.newest) else {
                continue;
            };
            let slot = newest.entry(s).or_default();
            if d > *slot {
                *slot = d;
            }
        }
    }
    let mut out: Vec<ImportFreshness> = runs
        .into_iter()
        .map(|r| {
            let source = r.source.unwrap_or_else(|| "ocds".to_owned());
            ImportFreshness {
                newest_release: newest.get(&source).cloned(),
                source,
                publisher: r.publisher,
                files: super::coverage::rows_count(r.n),
                last_import_at: r.last_at,
            }
        })
        .collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.last_import_at));
    Ok(out)
}

/// The most recent sync run, if any ran.
pub(super) async fn last_sync(store: &Store) -> EngineResult<Option<SyncFreshness>> {
    let row = sqlx::query_as::<_, SyncRow>(
        "select status, started_at, finished_at, files, imported, already, failed
           from mk_sync_runs order by started_at desc, id desc limit 1",
    )
    .fetch_optional(store.pool())
    .await?;
    Ok(row.map(|r| SyncFreshness {
        status: r.status,
        started_at: r.started_at,
        finished_at: r.finished_at,
        files: super::coverage::rows_count(r.files),
        imported: super::coverage::rows_count(r.imported),
        already: super::coverage::rows_count(r.already),
        failed: super::coverage::rows_count(r.failed),
    }))
}

#[cfg(test)]
mod tests {
    use luna_protocol::account::{Plan, Role};

    use crate::market::import::ocds;
    use crate::testkit::World;

    #[tokio::test]
    async fn coverage_counts_an_imported_file_per_year_and_says_how_fresh_it_is() {
        let w = World::new(Plan::Founder, Role::Member).await.unwrap();
        let market = &w.engine.market;
        let before = market.coverage().await.unwrap();
        let year = |c: &luna_protocol::coverage::Coverage, y: &str| {
            c.years
                .iter()
                .find(|r| r.year == y)
                .map(|r| (r.opportunities, r.awards, r.awards_amount_mxn))
                .unwrap_or_default()
        };
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ocds/apf/record-package-apf.json");
        ocds::import_ocds_from(
            market.store(),
            ocds::Input::File(file.clone()),
            ocds::Options::default(),
        )
        .await
        .unwrap();
        // The same file again changes nothing.
        ocds::import_ocds_from(
            market.store(),
            ocds::Input::File(file),
            ocds::Options::default(),
        )
        .await
        .unwrap();
        let after = market.coverage().await.unwrap();

        // The contracts signed in March 2024 count in 2024, with their MXN amounts.
        let (_, awards_before, amount_before) = year(&before, "2024");
        let (_, awards_after, amount_after) = year(&after, "2024");
        assert!(awards_after >= awards_before + 2, "{:?}", after.years);
        assert!(
            amount_after - amount_before >= 148_500.5 - 0.01,
            "{amount_before} → {amount_after}"
        );
        let total: u64 = after.years.iter().map(|y| y.awards).sum();
        assert!(total <= after.kinds[2].rows);

        // Freshness: the publisher, one file, when it was imported, its newest release.
        let apf = after
            .imports
            .iter()
            .find(|f| f.publisher.as_deref() == Some("Administración Pública Federal (ficticio)"))
            .unwrap_or_else(|| panic!("{:?}", after.imports));
        assert_eq!(apf.files, 1);
        let at = apf.last_import_at.unwrap();
        assert!(after.last_import_at >= Some(at));
        assert!(
            apf.newest_release
                .as_deref()
                .is_some_and(|d| d.starts_with("2024-")),
            "{apf:?}"
        );
        assert!(
            after.summary.contains("publicado hasta 2024-"),
            "{}",
            after.summary
        );

        // The last sync run is reported.
        assert_eq!(before.last_sync, None);
        sqlx::query(
            "insert into mk_sync_runs (sources, status, files, imported, already, failed, started_at, finished_at)
             values ('/datos/apf', 'done', 3, 1, 2, 0, $1, $2)",
        )
        .bind(at)
        .bind(at + 1_000)
        .execute(market.store().pool())
        .await
        .unwrap();
        let sync = market.coverage().await.unwrap().last_sync.unwrap();
        assert_eq!(
            (sync.status.as_str(), sync.imported, sync.already),
            ("done", 1, 2)
        );
        assert_eq!(sync.finished_at, Some(at + 1_000));
    }
}
