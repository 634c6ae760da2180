//! Tests that need PostgreSQL (`LUNA_TEST_DATABASE_URL=postgres://…`): the write scopes
//! (two workspaces never wait for each other; one workspace, one session still writes
//! one at a time) and the schema parity of the two engines' migrations. Without a
//! PostgreSQL URL each is reported as *ignored* (this file has its own harness,
//! `libtest-mimic`, so the decision is made at run time and shows in the summary);
//! `--ignored` runs them anyway and they fail for want of the server.

mod pg {
    pub mod parity;
    pub mod scopes;
}

use std::future::Future;

use libtest_mimic::{Arguments, Failed, Trial};

fn trial<F, Fut>(name: &'static str, test: F) -> Trial
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), Failed>>,
{
    Trial::test(name, move || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .map_err(|e| Failed::from(e.to_string()))?
            .block_on(test())
    })
}

fn main() {
    let args = Arguments::from_args();
    let on_postgres = std::env::var("LUNA_TEST_DATABASE_URL")
        .is_ok_and(|u| u.starts_with("postgres:") || u.starts_with("postgresql:"));
    if !on_postgres {
        eprintln!(
            "PostgreSQL-only tests are ignored: set LUNA_TEST_DATABASE_URL=postgres://… to run them"
        );
    }
    let trials = vec![
        trial(
            "scopes::two_workspaces_write_without_waiting_for_each_other",
            pg::scopes::two_workspaces_write_without_waiting_for_each_other,
        ),
        trial(
            "scopes::writes_in_one_workspace_still_take_turns",
            pg::scopes::writes_in_one_workspace_still_take_turns,
        ),
        trial(
            "scopes::session_appends_wait_only_for_their_own_session",
            pg::scopes::session_appends_wait_only_for_their_own_session,
        ),
        trial(
            "parity::sqlite_and_postgres_schemas_agree",
            pg::parity::sqlite_and_postgres_schemas_agree,
        ),
    ];
    let trials = trials
        .into_iter()
        .map(|t| t.with_ignored_flag(!on_postgres))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
