//! The `luna-server` process under test: started on a free loopback port with its own
//! data directory, watched through `/proc/<pid>` (resident memory, CPU time) and
//! stopped with SIGTERM at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

pub struct Server {
    child: Child,
    pub base: String,
    pub bind: String,
    pub log: PathBuf,
}

/// A free loopback port (bound and released; the server binds it right after).
pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("a free port")?;
    Ok(listener.local_addr()?.port())
}

impl Server {
    /// Starts `binary` with the local director (no model variables) and waits for
    /// `/readyz`. `database_url` empty: the default embedded SQLite in `data_dir`.
    pub async fn start(binary: &Path, data_dir: &Path, database_url: &str) -> Result<Server> {
        let bind = format!("127.0.0.1:{}", free_port()?);
        let log = data_dir.join("server.log");
        let out = std::fs::File::create(&log).context("the server log")?;
        let mut cmd = Command::new(binary);
        // From the workspace root, like `.ci/serve` and the crash proof run it.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        cmd.current_dir(root)
            .env("LUNA_DATA_DIR", data_dir)
            .env("LUNA_BIND", &bind)
            .env("RUST_LOG", "warn")
            .env_remove("LUNA_MODEL_BASE_URL")
            .env_remove("LUNA_MODEL_PRIMARY")
            .env_remove("LUNA_DATABASE_URL")
            .stdout(out.try_clone()?)
            .stderr(out);
        if !database_url.is_empty() {
            cmd.env("LUNA_DATABASE_URL", database_url);
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut server = Server {
            child,
            base: format!("http://{bind}"),
            bind,
            log,
        };
        server.wait_ready().await?;
        Ok(server)
    }

    async fn wait_ready(&mut self) -> Result<()> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(300);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "the server exited with {status}; see {}",
                    self.log.display()
                );
            }
            let ready = client
                .get(format!("{}/readyz", self.base))
                .timeout(Duration::from_secs(2))
                .send()
                .await;
            if matches!(ready, Ok(r) if r.status().is_success()) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("the server was not ready within 300 s")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running (a crash under load is an error).
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Resident memory now and its peak (`VmRSS`, `VmHWM`), in KiB.
    pub fn memory_kib(&self) -> Result<(u64, u64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .context("reading /proc/<pid>/status")?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        match (field("VmRSS:"), field("VmHWM:")) {
            (Some(rss), Some(hwm)) => Ok((rss, hwm)),
            _ => bail!("no VmRSS/VmHWM in /proc/{}/status", self.pid()),
        }
    }

    /// CPU time the server used so far (user + system), in seconds.
    pub fn cpu_secs(&self) -> Result<f64> {
        cpu_secs_of(&format!("/proc/{}/stat", self.pid()))
    }

    /// CPU seconds per kind of thread (the thread name without its trailing number):
    /// tokio's workers run the handlers, the director and the websockets; sqlx runs
    /// each SQLite connection on a worker thread of its own.
    pub fn cpu_by_thread(&self) -> Result<BTreeMap<String, f64>> {
        let mut out = BTreeMap::new();
        for task in std::fs::read_dir(format!("/proc/{}/task", self.pid()))? {
            let dir = task?.path();
            let Ok(name) = std::fs::read_to_string(dir.join("comm")) else {
                continue; // the thread ended meanwhile
            };
            let Ok(secs) = cpu_secs_of(&dir.join("stat").to_string_lossy()) else {
                continue;
            };
            let kind = name
                .trim()
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
            *out.entry(kind.to_owned()).or_default() += secs;
        }
        Ok(out)
    }

    /// Threads of the server process.
    pub fn threads(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse().ok())
            .context("no Threads in /proc/<pid>/status")
    }

    /// SIGTERM, then waits up to 10 s (SIGKILL after that).
    pub fn stop(mut self) -> Result<()> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

/// User + system CPU seconds from a `/proc/.../stat` file.
pub fn cpu_secs_of(path: &str) -> Result<f64> {
    let stat = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    // Fields after the command name (which may contain spaces) start after ") ".
    let rest = stat
        .rsplit_once(") ")
        .map(|(_, r)| r)
        .context("a /proc stat line")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields
        .get(11..13)
        .context("utime/stime")?
        .iter()
        .map(|v| v.parse::<u64>().unwrap_or(0))
        .sum();
    Ok(ticks as f64 / 100.0) // USER_HZ is 100 on Linux
}

/// The soft limit on open files of this process (from `/proc/self/limits`).
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}
