//! Command-line options of the load bench (`--name value`; cargo's own `--bench` flag
//! is ignored). Every option has a default that reproduces the reported run.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

/// The scene's request (the seed scene, first sentence): count, search and select.
pub const SCENE: &str =
    "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno";

#[derive(Debug, Clone)]
pub struct Args {
    /// Websockets held open, each on its own work session.
    pub sockets: usize,
    /// Founder workspaces added to the demo one (each has its own hourly read ceiling).
    pub teams: usize,
    /// Sessions (among the sockets) that run turns.
    pub turn_sessions: usize,
    /// Turns run one after the other in each of those sessions.
    pub turns_per_session: usize,
    /// Turns running at once across all sessions.
    pub concurrency: usize,
    /// Websocket handshakes in flight at once while connecting.
    pub connect_concurrency: usize,
    /// Seconds the sockets stay idle before the memory reading.
    pub idle_secs: u64,
    /// Empty: the default embedded SQLite in a fresh data dir; else a database URL.
    pub database_url: String,
    /// The server binary (default: the one cargo built for this bench).
    pub server: PathBuf,
    pub text: String,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            sockets: 1000,
            teams: 19,
            turn_sessions: 400,
            turns_per_session: 3,
            concurrency: 16,
            connect_concurrency: 50,
            idle_secs: 5,
            database_url: String::new(),
            server: PathBuf::from(env!("CARGO_BIN_EXE_luna-server")),
            text: SCENE.to_owned(),
        }
    }
}

pub const USAGE: &str = "cargo bench -p luna-server --bench load -- [--sockets 1000] [--teams 19] \
[--turn-sessions 400] [--turns-per-session 3] [--concurrency 16] [--connect-concurrency 50] \
[--idle-secs 5] [--database-url postgres://…] [--server path/to/luna-server] [--text «mensaje»]";

pub fn parse(mut raw: impl Iterator<Item = String>) -> Result<Args> {
    let mut args = Args::default();
    while let Some(flag) = raw.next() {
        if flag == "--bench" {
            continue;
        }
        if flag == "--help" || flag == "-h" {
            bail!("usage: {USAGE}");
        }
        let value = raw
            .next()
            .with_context(|| format!("{flag} needs a value; usage: {USAGE}"))?;
        let number = || {
            value
                .parse::<usize>()
                .with_context(|| format!("{flag}: «{value}» is not a number"))
        };
        match flag.as_str() {
            "--sockets" => args.sockets = number()?,
            "--teams" => args.teams = number()?,
            "--turn-sessions" => args.turn_sessions = number()?,
            "--turns-per-session" => args.turns_per_session = number()?,
            "--concurrency" => args.concurrency = number()?.max(1),
            "--connect-concurrency" => args.connect_concurrency = number()?.max(1),
            "--idle-secs" => args.idle_secs = number()? as u64,
            "--database-url" => args.database_url = value,
            "--server" => args.server = PathBuf::from(value),
            "--text" => args.text = value,
            other => bail!("unknown option {other}; usage: {USAGE}"),
        }
    }
    if args.turn_sessions > args.sockets {
        bail!("--turn-sessions cannot exceed --sockets");
    }
    Ok(args)
}
