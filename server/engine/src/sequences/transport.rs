//! How an email leaves: SMTP through `lettre` when configured, otherwise a local
//! outbox (one `.eml` file per message under the data directory) so the embedded
//! run needs nothing. The Message-ID is derived from the send's id, so a message is
//! recognisable if it were ever delivered twice.
//!
//! A message of a sequence carries its recipient's unsubscribe link twice: as a visible
//! Spanish line under the body and as the RFC 8058 headers (`List-Unsubscribe` with the
//! https link, `List-Unsubscribe-Post: List-Unsubscribe=One-Click`).
//!
//! Refusals are classified for the dispatcher: a 5xx that names the mailbox (550–559,
//! 521) is a bounce (`SendError::Bounced`: the address is suppressed); any other 5xx is
//! permanent for this message only; 4xx and connection trouble are transient.
//! The local outbox simulates refusals for tests: a recipient at `rebote.invalid`
//! bounces (550), one at `temporal.invalid` is deferred (451). `.invalid` can never be a
//! real address (RFC 6761), so nothing real is ever refused by it.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, Message};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

/// A message ready to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The send's id: also the Message-ID's local part and the outbox file name.
    pub send_id: String,
    pub from: String,
    pub to: String,
    pub subject: String,
    pub body: String,
    /// The recipient's signed unsubscribe link (`https://…/baja/TOKEN`): a visible line
    /// under the body and the RFC 8058 headers. `None` only for mail outside sequences.
    pub unsubscribe: Option<String>,
}

/// The domain whose recipients the local outbox bounces (550).
pub const SIMULATED_BOUNCE_DOMAIN: &str = "rebote.invalid";
/// The domain whose recipients the local outbox defers (451).
pub const SIMULATED_DEFER_DOMAIN: &str = "temporal.invalid";

/// The visible unsubscribe line under every sequence message.
pub fn unsubscribe_footer(url: &str) -> String {
    format!("\n\n--\nSi ya no quieres recibir estos correos, date de baja con un clic: {url}")
}

/// Whether an SMTP reply code refuses the recipient's mailbox for good (a bounce), as
/// opposed to refusing this message or this session (syntax, authentication).
pub fn is_bounce_code(code: u16) -> bool {
    (550..=559).contains(&code) || code == 521
}

impl Outgoing {
    pub fn message_id(&self) -> String {
        format!("<{}@luna.local>", self.send_id)
    }

    fn build(&self) -> Result<Message, SendError> {
        let from: Mailbox = self
            .from
            .parse()
            .map_err(|e| SendError::Permanent(format!("remitente inválido: {e}")))?;
        let to: Mailbox = self
            .to
            .parse()
            .map_err(|e| SendError::Permanent(format!("destinatario inválido: {e}")))?;
        let mut builder = Message::builder()
            .from(from)
            .to(to)
            .subject(self.subject.clone())
            .message_id(Some(self.message_id()))
            .header(ContentType::TEXT_PLAIN);
        let body = self.text();
        if let Some(url) = &self.unsubscribe {
            // Only a plain https/http URL of our own making goes into a header.
            if !url.starts_with("http") || url.chars().any(|c| c.is_whitespace() || c == '>') {
                return Err(SendError::Permanent("enlace de baja inválido".into()));
            }
            builder = builder
                .raw_header(HeaderValue::new(
                    HeaderName::new_from_ascii_str("List-Unsubscribe"),
                    format!("<{url}>"),
                ))
                .raw_header(HeaderValue::new(
                    HeaderName::new_from_ascii_str("List-Unsubscribe-Post"),
                    "List-Unsubscribe=One-Click".to_owned(),
                ));
        }
        builder
            .body(body)
            .map_err(|e| SendError::Permanent(e.to_string()))
    }

    /// The text the recipient reads: the body, then the visible unsubscribe line.
    pub fn text(&self) -> String {
        match &self.unsubscribe {
            Some(url) => format!("{}{}", self.body, unsubscribe_footer(url)),
            None => self.body.clone(),
        }
    }

    /// The message as it goes on the wire (RFC 5322).
    pub fn formatted(&self) -> Result<Vec<u8>, SendError> {
        Ok(self.build()?.formatted())
    }

    /// The domain of the recipient, lower-cased.
    fn to_domain(&self) -> String {
        self.to
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .trim_end_matches('>')
            .trim()
            .to_ascii_lowercase()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Worth retrying later (connection refused, 4xx).
    #[error("temporal: {0}")]
    Transient(String),
    /// Will not work by retrying this message (bad sender, 5xx that is not a bounce).
    #[error("permanente: {0}")]
    Permanent(String),
    /// The recipient's mailbox was refused for good (550–559, 521): the address bounced.
    #[error("rebote: {0}")]
    Bounced(String),
}

pub type SendFuture<'a> = Pin<Box<dyn Future<Output = Result<String, SendError>> + Send + 'a>>;
pub type KnownFuture<'a> = Pin<Box<dyn Future<Output = Option<bool>> + Send + 'a>>;

/// Where messages go. `send` returns the Message-ID.
pub trait Mailer: Send + Sync + std::fmt::Debug {
    fn send<'a>(&'a self, msg: &'a Outgoing) -> SendFuture<'a>;
    /// After a crash: whether the message with this send id left. `None` when the
    /// transport cannot know (SMTP): the send is then never retried, so never doubled.
    fn was_sent<'a>(&'a self, send_id: &'a str) -> KnownFuture<'a>;
    fn name(&self) -> &'static str;
}

/// The local outbox: `<dir>/<send_id>.eml`, written once.
#[derive(Debug, Clone)]
pub struct Outbox {
    dir: PathBuf,
}

impl Outbox {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Outbox { dir: dir.into() }
    }

    fn path(&self, send_id: &str) -> PathBuf {
        let safe: String = send_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        self.dir.join(format!("{safe}.eml"))
    }
}

impl Mailer for Outbox {
    fn send<'a>(&'a self, msg: &'a Outgoing) -> SendFuture<'a> {
        Box::pin(async move {
            match msg.to_domain().as_str() {
                SIMULATED_BOUNCE_DOMAIN => {
                    return Err(SendError::Bounced(
                        "550 5.1.1 el buzón no existe (rebote simulado del buzón local)".into(),
                    ))
                }
                SIMULATED_DEFER_DOMAIN => {
                    return Err(SendError::Transient(
                        "451 4.3.0 intenta más tarde (demora simulada del buzón local)".into(),
                    ))
                }
                _ => {}
            }
            let bytes = msg.build()?.formatted();
            tokio::fs::create_dir_all(&self.dir)
                .await
                .map_err(|e| SendError::Transient(e.to_string()))?;
            let path = self.path(&msg.send_id);
            let tmp = path.with_extension("eml.tmp");
            tokio::fs::write(&tmp, &bytes)
                .await
                .map_err(|e| SendError::Transient(e.to_string()))?;
            // The rename is the delivery: atomic, and the file exists only once.
            tokio::fs::rename(&tmp, &path)
                .await
                .map_err(|e| SendError::Transient(e.to_string()))?;
            Ok(msg.message_id())
        })
    }

    fn was_sent<'a>(&'a self, send_id: &'a str) -> KnownFuture<'a> {
        Box::pin(async move {
            Some(
                tokio::fs::try_exists(self.path(send_id))
                    .await
                    .unwrap_or(false),
            )
        })
    }

    fn name(&self) -> &'static str {
        "outbox"
    }
}

/// SMTP through lettre. `url` as lettre reads it: `smtp://user:pass@host:587?tls=required`,
/// `smtps://…:465`, or `smtp://127.0.0.1:2525` (plain, for a local relay).
#[derive(Clone)]
pub struct Smtp {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    host: String,
}

impl std::fmt::Debug for Smtp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print credentials.
        write!(f, "Smtp({})", self.host)
    }
}

impl Smtp {
    pub fn from_url(url: &str) -> Result<Smtp, String> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("LUNA_SMTP_URL no es válida: {e}"))?
            .build();
        let host = url
            .split('@')
            .next_back()
            .unwrap_or_default()
            .split(['/', '?'])
            .next()
            .unwrap_or_default()
            .to_owned();
        Ok(Smtp { transport, host })
    }
}

impl Mailer for Smtp {
    fn send<'a>(&'a self, msg: &'a Outgoing) -> SendFuture<'a> {
        Box::pin(async move {
            let m = msg.build()?;
            match self.transport.send(m).await {
                Ok(_) => Ok(msg.message_id()),
                Err(e) if e.status().map(u16::from).is_some_and(is_bounce_code) => {
                    Err(SendError::Bounced(e.to_string()))
                }
                Err(e) if e.is_permanent() => Err(SendError::Permanent(e.to_string())),
                Err(e) => Err(SendError::Transient(e.to_string())),
            }
        })
    }

    fn was_sent<'a>(&'a self, _send_id: &'a str) -> KnownFuture<'a> {
        Box::pin(async { None })
    }

    fn name(&self) -> &'static str {
        "smtp"
    }
}
