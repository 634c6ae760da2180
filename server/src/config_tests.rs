//! Unit tests of `config`: every variable read, defaulted or refused with its name.

use super::*;
use std::collections::HashMap;

fn cfg(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_lookup(|k| map.get(k).cloned(), "127.0.0.1:3000".parse().unwrap())
}

#[test]
fn defaults_are_the_embedded_set_up() {
    let c = cfg(&[]).unwrap();
    assert_eq!(c.database_url, "sqlite://data/luna.db");
    assert_eq!(c.bind.to_string(), "127.0.0.1:3000");
    assert!(c.model.is_none() && c.smtp_url.is_none() && c.seeds_demo());
}

#[test]
fn postgres_is_accepted_and_other_engines_are_refused_without_the_password() {
    let url = "postgres://luna:secreto@127.0.0.1:5432/luna";
    assert_eq!(
        cfg(&[("LUNA_DATABASE_URL", url)]).unwrap().database_url,
        url
    );
    let e = cfg(&[("LUNA_DATABASE_URL", "mysql://luna:secreto@db/luna")]).unwrap_err();
    assert_eq!(e.var, "LUNA_DATABASE_URL");
    assert!(!e.problem.contains("secreto"), "{}", e.problem);
}

#[test]
fn an_https_public_url_makes_the_cookie_secure_and_names_the_only_origin() {
    let c = cfg(&[("LUNA_PUBLIC_URL", "HTTPS://Luna.Example.mx/app/")]).unwrap();
    assert_eq!(c.public_origin.as_deref(), Some("https://luna.example.mx"));
    assert!(c.cookie_secure);
    let plain = cfg(&[("LUNA_PUBLIC_URL", "http://10.0.0.5:3000")]).unwrap();
    assert!(!plain.cookie_secure);
    assert!(!cfg(&[]).unwrap().cookie_secure);
    assert_eq!(
        cfg(&[("LUNA_PUBLIC_URL", "luna.example.mx")])
            .unwrap_err()
            .var,
        "LUNA_PUBLIC_URL"
    );
}

#[test]
fn bad_values_name_the_variable() {
    assert_eq!(cfg(&[("LUNA_BIND", "nope")]).unwrap_err().var, "LUNA_BIND");
    assert_eq!(
        cfg(&[("LUNA_MODEL_BASE_URL", "http://x")]).unwrap_err().var,
        "LUNA_MODEL_PRIMARY"
    );
    assert_eq!(
        cfg(&[("LUNA_SMTP_URL", "mail.example")]).unwrap_err().var,
        "LUNA_SMTP_URL"
    );
    assert_eq!(
        cfg(&[("LUNA_SECRET", "short")]).unwrap_err().var,
        "LUNA_SECRET"
    );
    assert_eq!(cfg(&[("LUNA_DEMO", "maybe")]).unwrap_err().var, "LUNA_DEMO");
}

#[test]
fn worker_timings_are_seconds_within_their_range() {
    let c = cfg(&[]).unwrap();
    assert_eq!(c.turn_stale, Duration::from_secs(60));
    assert_eq!(c.research_lease, Duration::from_secs(300));
    let c = cfg(&[
        ("LUNA_TURN_STALE_SECS", "3"),
        ("LUNA_RESEARCH_LEASE_SECS", "10"),
    ])
    .unwrap();
    assert_eq!(
        (c.turn_stale, c.research_lease),
        (Duration::from_secs(3), Duration::from_secs(10))
    );
    let e = cfg(&[("LUNA_RESEARCH_LEASE_SECS", "2")]).unwrap_err();
    assert_eq!(e.var, "LUNA_RESEARCH_LEASE_SECS");
    assert!(e.problem.contains("entre 5 y 3600"), "{}", e.problem);
    assert_eq!(
        cfg(&[("LUNA_TURN_STALE_SECS", "mucho")]).unwrap_err().var,
        "LUNA_TURN_STALE_SECS"
    );
}

#[test]
fn a_configured_model_reads_every_variable_and_never_prints_the_key() {
    let c = cfg(&[
        ("LUNA_MODEL_BASE_URL", "https://api.deepseek.com/v1"),
        ("LUNA_MODEL_API_KEY", "sk-no-se-imprime"),
        ("LUNA_MODEL_PRIMARY", "deepseek-chat"),
        ("LUNA_MODEL_FALLBACK", "gpt-5"),
        ("LUNA_MODEL_PRIMARY_PRICE", "0.14/0.28"),
        ("LUNA_MODEL_FALLBACK_PRICE", "1.25/10"),
        ("LUNA_MODEL_TIMEOUT_SECS", "30"),
        ("LUNA_MODEL_SPEND_CAP_USD", "7.5"),
        ("LUNA_MODEL_STREAM", "0"),
    ])
    .unwrap();
    let m = c.model.clone().unwrap();
    assert_eq!(m.primary.model, "deepseek-chat");
    assert_eq!(m.fallback.as_ref().unwrap().model, "gpt-5");
    assert_eq!(m.fallback.unwrap().price.unwrap().output, 10.0);
    assert_eq!(m.timeout, Duration::from_secs(30));
    assert_eq!(m.monthly_spend_cap_micro_usd, Some(7_500_000));
    assert!(!m.stream);
    assert!(!format!("{c:?}").contains("sk-no-se-imprime"));
}

#[test]
fn bad_model_values_name_their_variable() {
    let base = [
        ("LUNA_MODEL_BASE_URL", "http://127.0.0.1:11434/v1"),
        ("LUNA_MODEL_PRIMARY", "qwen"),
    ];
    for (var, value) in [
        ("LUNA_MODEL_PRIMARY_PRICE", "barato"),
        ("LUNA_MODEL_FALLBACK_PRICE", "1/x"),
        ("LUNA_MODEL_TIMEOUT_SECS", "0"),
        ("LUNA_MODEL_SPEND_CAP_USD", "-3"),
        ("LUNA_MODEL_STREAM", "a veces"),
    ] {
        let mut pairs = base.to_vec();
        pairs.push((var, value));
        let e = cfg(&pairs).unwrap_err();
        assert_eq!(e.var, var);
        assert!(e.to_string().starts_with("configuración inválida: "), "{e}");
    }
    assert_eq!(
        cfg(&[
            ("LUNA_MODEL_BASE_URL", "ftp://x"),
            ("LUNA_MODEL_PRIMARY", "m")
        ])
        .unwrap_err()
        .var,
        "LUNA_MODEL_BASE_URL"
    );
}

#[test]
fn demo_is_seeded_by_default_only_on_loopback_or_when_asked() {
    assert!(cfg(&[]).unwrap().seeds_demo());
    assert!(cfg(&[("LUNA_BIND", "[::1]:3000")]).unwrap().seeds_demo());
    assert!(!cfg(&[("LUNA_BIND", "0.0.0.0:3000")]).unwrap().seeds_demo());
    assert!(cfg(&[("LUNA_BIND", "0.0.0.0:3000"), ("LUNA_DEMO", "1")])
        .unwrap()
        .seeds_demo());
    assert!(!cfg(&[("LUNA_DEMO", "0")]).unwrap().seeds_demo());
}

#[test]
fn a_public_bind_with_the_published_demo_password_refuses_to_start() {
    let published = ["duena@demo.luna.mx"];
    let public = cfg(&[("LUNA_BIND", "0.0.0.0:3000")]).unwrap();
    let line = public.check_demo_exposure(&published).unwrap_err();
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(
        line.contains("duena@demo.luna.mx") && line.contains("LUNA_DEMO=1"),
        "{line}"
    );
    // Fine: no demo password left, loopback, or a public demo asked for.
    assert!(public.check_demo_exposure(&[]).is_ok());
    assert!(cfg(&[]).unwrap().check_demo_exposure(&published).is_ok());
    let asked = cfg(&[("LUNA_BIND", "0.0.0.0:3000"), ("LUNA_DEMO", "1")]).unwrap();
    assert!(asked.check_demo_exposure(&published).is_ok());
    let off = cfg(&[("LUNA_BIND", "0.0.0.0:3000"), ("LUNA_DEMO", "0")]).unwrap();
    assert!(off.check_demo_exposure(&published).is_err());
}

#[test]
fn trusted_proxies_are_a_list_of_addresses() {
    assert_eq!(
        cfg(&[("LUNA_TRUSTED_PROXIES", "10.0.0.2, ::1")])
            .unwrap()
            .trusted_proxies,
        crate::client_ip::TrustedProxies::new(vec![
            "10.0.0.2".parse().unwrap(),
            "::1".parse().unwrap()
        ])
    );
    assert_eq!(
        cfg(&[("LUNA_TRUSTED_PROXIES", "proxy.local")])
            .unwrap_err()
            .var,
        "LUNA_TRUSTED_PROXIES"
    );
}

/// The secret is never readable by others, not even for a moment: created 0600,
/// and a short one left world-readable is narrowed before it is rewritten.
#[cfg(unix)]
#[test]
fn secret_key_is_only_readable_by_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("luna-cfg-{}", uuid::Uuid::new_v4().simple()));
    let mut a = cfg(&[("LUNA_DATA_DIR", dir.to_str().unwrap())]).unwrap();
    a.ensure_secret().unwrap();
    let path = dir.join("secret.key");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    std::fs::write(&path, "corto").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut b = cfg(&[("LUNA_DATA_DIR", dir.to_str().unwrap())]).unwrap();
    b.ensure_secret().unwrap();
    assert_eq!(b.secret.len(), 64);
    assert_eq!(mode(&path), 0o600);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn secret_is_generated_once_and_reused() {
    let dir = std::env::temp_dir().join(format!("luna-cfg-{}", uuid::Uuid::new_v4().simple()));
    let mut a = cfg(&[("LUNA_DATA_DIR", dir.to_str().unwrap())]).unwrap();
    a.ensure_secret().unwrap();
    let mut b = cfg(&[("LUNA_DATA_DIR", dir.to_str().unwrap())]).unwrap();
    b.ensure_secret().unwrap();
    assert_eq!(a.secret.len(), 64);
    assert_eq!(a.secret, b.secret);
}
