//! Operator subcommands of the `luna-server` binary, run against the configured
//! database instead of serving:
//!
//! - `luna-server create-api-key --email <owner/admin email> --name <name>` prints
//!   the new key's secret on the first line and its id on the second.
//! - `luna-server revoke-api-key --email <owner/admin email> --id <key id>`.

use luna_engine::Engine;

/// Value of `--flag` in `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// Runs a subcommand if `args[0]` names one; returns its exit code, or `None` to serve.
pub async fn run(
    args: &[String],
    engine: impl std::future::Future<Output = Result<Engine, String>>,
) -> Option<i32> {
    let command = args.first()?.as_str();
    if !matches!(command, "create-api-key" | "revoke-api-key") {
        return None;
    }
    let Some(email) = flag(args, "--email") else {
        eprintln!("uso: luna-server {command} --email <correo> …");
        return Some(2);
    };
    let engine = match engine.await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return Some(1);
        }
    };
    let caller = match engine.accounts.caller_for_email(email).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            eprintln!("no existe una cuenta con el correo {email} en ningún espacio de trabajo");
            return Some(1);
        }
        Err(e) => {
            eprintln!("{e}");
            return Some(1);
        }
    };
    let result = match command {
        "create-api-key" => {
            let name = flag(args, "--name").unwrap_or("cli");
            engine
                .accounts
                .create_api_key(&caller, name)
                .await
                .map(|k| println!("{}\n{}", k.secret, k.id))
        }
        _ => match flag(args, "--id") {
            Some(id) => engine.accounts.revoke_api_key(&caller, id).await,
            None => {
                eprintln!("uso: luna-server revoke-api-key --email <correo> --id <llave>");
                return Some(2);
            }
        },
    };
    match result {
        Ok(()) => Some(0),
        Err(e) => {
            eprintln!("{}", e.body().message);
            Some(1)
        }
    }
}
