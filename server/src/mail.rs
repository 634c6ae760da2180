//! Where Luna's email goes: SMTP when `LUNA_SMTP_URL` is set, otherwise the local
//! outbox under the data directory (one `.eml` per message), and the dispatcher that
//! sends due sequence steps in the background.

use std::sync::Arc;
use std::time::Duration;

use luna_engine::sequences::{dispatch, Mailer, Outbox, Smtp};
use luna_engine::Engine;

use crate::config::Config;

/// How often the dispatcher looks for due steps.
pub const DISPATCH_EVERY: Duration = Duration::from_secs(15);

/// The configured transport.
pub fn mailer(config: &Config) -> Result<Arc<dyn Mailer>, String> {
    match &config.smtp_url {
        Some(url) => Ok(Arc::new(Smtp::from_url(url)?)),
        None => Ok(Arc::new(Outbox::new(config.data_dir.join("outbox")))),
    }
}

/// Starts the dispatcher for this instance.
pub fn start_dispatcher(engine: &Engine) -> tokio::task::JoinHandle<()> {
    tracing::info!(
        transport = engine.sequences.mailer.name(),
        "sequence dispatcher started"
    );
    dispatch::spawn(engine.clone(), DISPATCH_EVERY)
}
