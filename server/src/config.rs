//! Configuration from environment variables, validated at start-up. A bad value stops
//! the server with one clear line naming the variable, never a panic trace.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use luna_engine::turn::openai::{ApiKey, GatewayConfig, Price, Profile};

/// Everything Luna reads from the environment. See the README's configuration table.
#[derive(Clone, Debug)]
pub struct Config {
    pub database_url: String,
    pub bind: SocketAddr,
    pub data_dir: PathBuf,
    /// Secret for cookies and HMAC seals. Generated and stored on first run if absent.
    pub secret: String,
    /// The OpenAI-compatible model gateway; `None`: the local director plays Luna.
    pub model: Option<GatewayConfig>,
    pub smtp_url: Option<String>,
    pub cookie_secure: bool,
    /// `LUNA_DEMO`: whether the demo logins (with their published password) may exist.
    pub demo: Demo,
    /// `LUNA_TRUSTED_PROXIES`: reverse proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: crate::client_ip::TrustedProxies,
    /// `LUNA_PUBLIC_URL`'s origin (scheme, host, port): the only origin browsers may
    /// post from; `None` means the request's own host.
    pub public_origin: Option<String>,
    /// A running turn whose heartbeat is silent this long belongs to a dead process.
    pub turn_stale: std::time::Duration,
    /// How long a research run's instance holds it without renewing (`LUNA_RESEARCH_LEASE_SECS`).
    pub research_lease: std::time::Duration,
}

/// `LUNA_DEMO`: unset seeds the demo only on a loopback bind; `1` asks for it
/// anywhere (a public demo on purpose); `0` never seeds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Demo {
    Auto,
    On,
    Off,
}

/// A configuration error: the variable and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("configuración inválida: {var}: {problem}")]
pub struct ConfigError {
    pub var: &'static str,
    pub problem: String,
}

/// A duration in whole seconds within `range`, `default` when unset.
fn seconds(
    var: &'static str,
    value: Option<String>,
    range: std::ops::RangeInclusive<u64>,
    default: u64,
) -> Result<std::time::Duration, ConfigError> {
    let Some(v) = value else {
        return Ok(std::time::Duration::from_secs(default));
    };
    match v.trim().parse::<u64>() {
        Ok(secs) if range.contains(&secs) => Ok(std::time::Duration::from_secs(secs)),
        _ => Err(err(
            var,
            format!(
                "«{v}» no es válido; usa segundos entre {} y {}",
                range.start(),
                range.end()
            ),
        )),
    }
}

/// `scheme://host[:port]` of an http(s) URL, lower-cased, without path.
fn origin_of(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let host = rest.split(['/', '?', '#']).next()?.to_ascii_lowercase();
    if host.is_empty() || host.contains('@') {
        return None;
    }
    Some(format!("{scheme}://{host}"))
}

fn err(var: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        var,
        problem: problem.into(),
    }
}

fn parse_bool(
    var: &'static str,
    value: Option<String>,
    default: bool,
) -> Result<bool, ConfigError> {
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok(default),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some("0" | "false" | "no" | "off") => Ok(false),
        Some(other) => Err(err(
            var,
            format!("«{other}» no es un booleano (usa true o false)"),
        )),
    }
}

impl Config {
    /// Whether the demo logins are seeded into a database without users: asked for
    /// with `LUNA_DEMO=1`, or by default when only this machine can connect.
    pub fn seeds_demo(&self) -> bool {
        match self.demo {
            Demo::On => true,
            Demo::Off => false,
            Demo::Auto => self.bind.ip().is_loopback(),
        }
    }

    /// The start-up check: serving beyond this machine while demo logins still accept
    /// the published password (`published`: their emails) is refused with one line
    /// saying what to do, unless the demo was asked for with `LUNA_DEMO=1`.
    pub fn check_demo_exposure(&self, published: &[&str]) -> Result<(), String> {
        if published.is_empty() || self.bind.ip().is_loopback() || self.demo == Demo::On {
            return Ok(());
        }
        Err(format!(
            "Luna no arranca: escucha en {} (accesible desde fuera de esta máquina) y las cuentas de demostración ({}) siguen con la contraseña publicada; escucha en 127.0.0.1, usa una base de datos sin la demo (otro LUNA_DATA_DIR o LUNA_DATABASE_URL) o, si quieres una demo pública a propósito, arranca con LUNA_DEMO=1.",
            self.bind,
            published.join(", ")
        ))
    }

    /// Reads the process environment. `default_bind` comes from the Leptos options.
    pub fn from_env(default_bind: SocketAddr) -> Result<Config, ConfigError> {
        Config::from_lookup(|k| std::env::var(k).ok(), default_bind)
    }

    /// Reads configuration through `get`, so tests can pass a map.
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
        default_bind: SocketAddr,
    ) -> Result<Config, ConfigError> {
        let non_empty = |k: &str| get(k).filter(|v| !v.trim().is_empty());

        let data_dir = PathBuf::from(non_empty("LUNA_DATA_DIR").unwrap_or_else(|| "data".into()));
        let database_url = non_empty("LUNA_DATABASE_URL")
            .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("luna.db").display()));
        if luna_engine::store::Backend::of_url(&database_url).is_err() {
            return Err(err(
                "LUNA_DATABASE_URL",
                format!(
                    "«{}» no es compatible; usa una URL sqlite:// o postgres://",
                    luna_engine::store::redact(&database_url)
                ),
            ));
        }

        let bind = match non_empty("LUNA_BIND") {
            Some(v) => v.parse().map_err(|_| {
                err(
                    "LUNA_BIND",
                    format!("«{v}» no es una dirección; usa algo como 127.0.0.1:3000"),
                )
            })?,
            None => default_bind,
        };

        let secret = match non_empty("LUNA_SECRET") {
            Some(s) if s.len() < 32 => {
                return Err(err("LUNA_SECRET", "debe tener al menos 32 caracteres"))
            }
            Some(s) => s,
            None => String::new(), // filled by `ensure_secret` once the data dir exists
        };

        let model = match (
            non_empty("LUNA_MODEL_BASE_URL"),
            non_empty("LUNA_MODEL_PRIMARY"),
        ) {
            (None, None) => None,
            (Some(base_url), Some(primary)) => {
                if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                    return Err(err(
                        "LUNA_MODEL_BASE_URL",
                        format!("«{base_url}» debe empezar con http:// o https://"),
                    ));
                }
                let price = |var: &'static str| {
                    match non_empty(var) {
                    None => Ok(None),
                    Some(v) => Price::parse(&v).map(Some).ok_or_else(|| {
                        err(var, format!("«{v}» no es un precio; usa entrada/salida en dólares por millón de tokens, como 0.14/0.28"))
                    }),
                }
                };
                let mut gateway = GatewayConfig::new(base_url, primary);
                gateway.api_key = non_empty("LUNA_MODEL_API_KEY").map(ApiKey::new);
                gateway.primary.price = price("LUNA_MODEL_PRIMARY_PRICE")?;
                let fallback_price = price("LUNA_MODEL_FALLBACK_PRICE")?;
                gateway.fallback = non_empty("LUNA_MODEL_FALLBACK").map(|model| Profile {
                    model,
                    price: fallback_price,
                });
                if let Some(v) = non_empty("LUNA_MODEL_TIMEOUT_SECS") {
                    let secs = v
                        .trim()
                        .parse::<u64>()
                        .ok()
                        .filter(|s| (1..=600).contains(s));
                    gateway.timeout = Duration::from_secs(secs.ok_or_else(|| {
                        err(
                            "LUNA_MODEL_TIMEOUT_SECS",
                            format!("«{v}» no es un número de segundos entre 1 y 600"),
                        )
                    })?);
                }
                if let Some(v) = non_empty("LUNA_MODEL_SPEND_CAP_USD") {
                    let dollars = v
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|d| d.is_finite() && *d >= 0.0);
                    let dollars = dollars.ok_or_else(|| {
                        err(
                            "LUNA_MODEL_SPEND_CAP_USD",
                            format!("«{v}» no es un monto en dólares (por ejemplo 20 o 7.5)"),
                        )
                    })?;
                    gateway.monthly_spend_cap_micro_usd =
                        Some((dollars * 1_000_000.0).round() as i64);
                }
                if let Some(v) = non_empty("LUNA_MODEL_STREAM") {
                    gateway.stream = match v.trim() {
                        "1" | "true" | "si" | "sí" => true,
                        "0" | "false" | "no" => false,
                        _ => {
                            return Err(err(
                                "LUNA_MODEL_STREAM",
                                format!("«{v}» no es 1 ni 0 (1: respuestas en streaming, el valor por omisión)"),
                            ))
                        }
                    };
                }
                Some(gateway)
            }
            (Some(_), None) => {
                return Err(err(
                    "LUNA_MODEL_PRIMARY",
                    "falta el modelo principal para LUNA_MODEL_BASE_URL",
                ))
            }
            (None, Some(_)) => {
                return Err(err(
                    "LUNA_MODEL_BASE_URL",
                    "falta la URL del proveedor para LUNA_MODEL_PRIMARY",
                ))
            }
        };

        let smtp_url = non_empty("LUNA_SMTP_URL");
        if let Some(url) = &smtp_url {
            if !(url.starts_with("smtp://") || url.starts_with("smtps://")) {
                return Err(err(
                    "LUNA_SMTP_URL",
                    format!("«{url}» debe empezar con smtp:// o smtps://"),
                ));
            }
        }

        let public_origin = match non_empty("LUNA_PUBLIC_URL") {
            None => None,
            Some(url) => Some(origin_of(&url).ok_or_else(|| {
                err(
                    "LUNA_PUBLIC_URL",
                    format!("«{url}» debe ser una URL http:// o https:// (p. ej. https://luna.example.mx)"),
                )
            })?),
        };
        // Served over HTTPS: the session cookie is `Secure` unless told otherwise.
        let https = public_origin
            .as_deref()
            .is_some_and(|o| o.starts_with("https://"));
        Ok(Config {
            public_origin,
            database_url,
            bind,
            data_dir,
            secret,
            model,
            smtp_url,
            cookie_secure: parse_bool("LUNA_COOKIE_SECURE", get("LUNA_COOKIE_SECURE"), https)?,
            demo: match non_empty("LUNA_DEMO") {
                None => Demo::Auto,
                Some(v) => {
                    if parse_bool("LUNA_DEMO", Some(v), false)? {
                        Demo::On
                    } else {
                        Demo::Off
                    }
                }
            },
            trusted_proxies: {
                let mut proxies = Vec::new();
                for v in non_empty("LUNA_TRUSTED_PROXIES")
                    .iter()
                    .flat_map(|v| v.split(','))
                {
                    let v = v.trim();
                    if v.is_empty() {
                        continue;
                    }
                    proxies.push(v.parse().map_err(|_| {
                        err(
                            "LUNA_TRUSTED_PROXIES",
                            format!("«{v}» no es una dirección IP; usa una lista como 10.0.0.2,10.0.0.3"),
                        )
                    })?);
                }
                crate::client_ip::TrustedProxies::new(proxies)
            },
            turn_stale: seconds(
                "LUNA_TURN_STALE_SECS",
                non_empty("LUNA_TURN_STALE_SECS"),
                3..=3600,
                luna_engine::turn::service::STALE_AFTER_MS as u64 / 1000,
            )?,
            research_lease: seconds(
                "LUNA_RESEARCH_LEASE_SECS",
                non_empty("LUNA_RESEARCH_LEASE_SECS"),
                5..=3600,
                luna_engine::research::LEASE_MS as u64 / 1000,
            )?,
        })
    }

    /// Fills `secret` from `<data_dir>/secret.key`, creating it (mode 0600) on first run.
    pub fn ensure_secret(&mut self) -> Result<(), ConfigError> {
        if !self.secret.is_empty() {
            return Ok(());
        }
        let path = self.data_dir.join("secret.key");
        if let Ok(existing) = std::fs::read_to_string(&path) {
            let existing = existing.trim().to_owned();
            if existing.len() >= 32 {
                self.secret = existing;
                return Ok(());
            }
        }
        std::fs::create_dir_all(&self.data_dir).map_err(|e| {
            err(
                "LUNA_DATA_DIR",
                format!("no se pudo crear {}: {e}", self.data_dir.display()),
            )
        })?;
        let mut bytes = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut bytes);
        let secret = hex::encode(bytes);
        write_private(&path, &secret).map_err(|e| {
            err(
                "LUNA_DATA_DIR",
                format!("no se pudo escribir {}: {e}", path.display()),
            )
        })?;
        self.secret = secret;
        Ok(())
    }
}

/// Writes `contents` to a file only its owner can read: created with mode 0600 (an
/// existing file is narrowed to 0600 before anything is written to it).
fn write_private(path: &std::path::Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        let mut file = file;
        file.write_all(contents.as_bytes())?;
        file.sync_all()
    }
    #[cfg(not(unix))]
    {
        let mut file = options.open(path)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
