//! The workspace's suppression list: addresses that never receive a sequence step.
//!
//! Reasons: `unsubscribed` (the recipient's link or one-click header), `bounced` (a
//! permanent SMTP refusal of the mailbox), `complained`, `manual` (an admin). Suppressing
//! an address cancels, in the same transaction, every pending step to it in the
//! workspace (status `cancelled`, the reason in Spanish in `error`, shown on the board).
//! Admins list, add, remove (audited) and import a CSV (`email[,motivo[,nota]]`, at most
//! [`IMPORT_MAX_BYTES`] and [`IMPORT_MAX_ROWS`]). The list is checked when a sequence is
//! authorized (the card names who is skipped and why) and again at dispatch.
//! All SQL of the list lives here.

use std::str::FromStr;

use luna_protocol::error::ErrorCode;

use super::Deps;
use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Conn;
use crate::base::store::Scope;

/// Largest CSV an admin may import.
pub const IMPORT_MAX_BYTES: usize = 200 * 1024;
/// Most rows of one import.
pub const IMPORT_MAX_ROWS: usize = 5_000;
/// Longest note an admin may attach.
pub const NOTE_MAX: usize = 300;
/// Longest address (RFC 5321's path limit).
pub const EMAIL_MAX: usize = 254;
/// Most rows a list call returns.
pub const LIST_MAX: i64 = 500;

/// Why an address is suppressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Unsubscribed,
    Bounced,
    Complained,
    Manual,
}

impl Reason {
    pub const ALL: [Reason; 4] = [
        Reason::Unsubscribed,
        Reason::Bounced,
        Reason::Complained,
        Reason::Manual,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Unsubscribed => "unsubscribed",
            Reason::Bounced => "bounced",
            Reason::Complained => "complained",
            Reason::Manual => "manual",
        }
    }

    /// The stored value, or a Spanish word an admin may write in a CSV.
    pub fn parse(s: &str) -> Option<Reason> {
        match crate::base::catalog::text::fold(s).trim() {
            "unsubscribed" | "baja" => Some(Reason::Unsubscribed),
            "bounced" | "rebote" | "rebotado" => Some(Reason::Bounced),
            "complained" | "queja" | "spam" => Some(Reason::Complained),
            "manual" => Some(Reason::Manual),
            _ => None,
        }
    }

    /// Whether the recipient asked for it (an unsubscribe or a spam complaint): such a
    /// suppression is the recipient's, and no one on the team may take it off the list.
    pub fn by_recipient(self) -> bool {
        matches!(self, Reason::Unsubscribed | Reason::Complained)
    }

    /// What the board and the review card say (es-MX).
    pub fn label(self) -> &'static str {
        match self {
            Reason::Unsubscribed => "se dio de baja",
            Reason::Bounced => "su correo rebotó",
            Reason::Complained => "marcó los correos como spam",
            Reason::Manual => "un administrador lo excluyó",
        }
    }
}

/// One suppressed address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    pub email: String,
    pub reason: Reason,
    pub detail: Option<String>,
    pub created_by: Option<String>,
    pub created_at: i64,
}

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

/// The address, lower-cased, if it is one.
pub fn normalize_email(raw: &str) -> EngineResult<String> {
    let e = raw.trim().to_lowercase();
    if e.len() > EMAIL_MAX || lettre::Address::from_str(&e).is_err() {
        return Err(invalid(
            format!(
                "«{}» no es un correo válido.",
                raw.chars().take(80).collect::<String>()
            ),
            "Escribe una dirección como nombre@empresa.mx.",
        ));
    }
    Ok(e)
}

/// `email_suppressions` as stored; [`Suppression`] is it decoded.
#[derive(sqlx::FromRow)]
struct StoredSuppression {
    email: String,
    reason: String,
    detail: Option<String>,
    created_by: Option<String>,
    created_at: i64,
}

fn from_row(r: &crate::base::store::DbRow) -> EngineResult<Suppression> {
    let r = <StoredSuppression as sqlx::FromRow<_>>::from_row(r)?;
    Ok(Suppression {
        reason: Reason::parse(&r.reason)
            .ok_or_else(|| EngineError::internal(format!("bad reason {}", r.reason)))?,
        email: r.email,
        detail: r.detail,
        created_by: r.created_by,
        created_at: r.created_at,
    })
}

/// The suppression of `email` in the workspace, if any.
pub async fn find(
    conn: &mut Conn,
    workspace_id: &str,
    email: &str,
) -> EngineResult<Option<Suppression>> {
    let row = sqlx::query(
        "select email, reason, detail, created_by, created_at from email_suppressions
          where workspace_id = $1 and email = $2",
    )
    .bind(workspace_id)
    .bind(email.trim().to_lowercase())
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(from_row).transpose()
}

/// Suppresses `email` and cancels every pending step to it in the workspace. A first
/// reason stays, except that the recipient's own (an unsubscribe or a complaint)
/// replaces a team's one (manual or bounce), so the team can never remove what the
/// recipient asked for. Returns (whether it was new, steps cancelled). Run it inside
/// the caller's write transaction.
pub async fn suppress_in(
    conn: &mut Conn,
    workspace_id: &str,
    email: &str,
    reason: Reason,
    detail: Option<&str>,
    by: Option<&str>,
) -> EngineResult<(bool, u64)> {
    let email = email.trim().to_lowercase();
    let added = sqlx::query(
        "insert into email_suppressions (workspace_id, email, reason, detail, created_by, created_at)
         values ($1, $2, $3, $4, $5, $6) on conflict (workspace_id, email) do nothing",
    )
    .bind(workspace_id)
    .bind(&email)
    .bind(reason.as_str())
    .bind(detail)
    .bind(by)
    .bind(now_ms())
    .execute(&mut *conn)
    .await?
    .rows_affected()
        == 1;
    if !added && reason.by_recipient() {
        sqlx::query(
            "update email_suppressions set reason = $1, detail = $2, created_by = $3, created_at = $4
              where workspace_id = $5 and email = $6 and reason in ('manual', 'bounced')",
        )
        .bind(reason.as_str())
        .bind(detail)
        .bind(by)
        .bind(now_ms())
        .bind(workspace_id)
        .bind(&email)
        .execute(&mut *conn)
        .await?;
    }
    let cancelled = cancel_pending(conn, workspace_id, &email, None, reason.label()).await?;
    Ok((added, cancelled))
}

/// Cancels the pending steps to `email` (of one sequence, or all of the workspace),
/// with `why` in Spanish for the board.
pub async fn cancel_pending(
    conn: &mut Conn,
    workspace_id: &str,
    email: &str,
    sequence_id: Option<&str>,
    why: &str,
) -> EngineResult<u64> {
    let done = sqlx::query(
        "update sequence_sends set status = 'cancelled', error = $1
          where workspace_id = $2 and email = $3 and status = 'pending'
            and ($4 is null or sequence_id = $5)",
    )
    .bind(why)
    .bind(workspace_id)
    .bind(email.trim().to_lowercase())
    .bind(sequence_id)
    .bind(sequence_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// The sequences with a send to `email` in the workspace (their boards change when
/// the address is suppressed).
pub async fn sequences_of(
    conn: &mut Conn,
    workspace_id: &str,
    email: &str,
) -> EngineResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "select distinct sequence_id from sequence_sends where workspace_id = $1 and email = $2",
    )
    .bind(workspace_id)
    .bind(email.trim().to_lowercase())
    .fetch_all(conn)
    .await?)
}

/// Refreshes the board card of each sequence in `ids` (best effort: the list is
/// already committed).
pub async fn republish(engine: &impl Deps, workspace_id: &str, ids: &[String]) {
    for id in ids {
        let found = match engine.store().pool().acquire().await {
            Ok(mut conn) => super::rows::find(&mut conn, workspace_id, id).await,
            Err(e) => Err(e.into()),
        };
        if let Ok(Some(s)) = found {
            if let Err(e) = super::publish_board(engine, &s).await {
                tracing::warn!(sequence = %s.id, error = %e, "board update failed");
            }
        }
    }
}

/// Admins: the workspace's list, newest first (at most [`LIST_MAX`]).
pub async fn list(engine: &impl Deps, caller: &Caller) -> EngineResult<Vec<Suppression>> {
    caller.require_admin()?;
    let mut conn = engine.store().pool().acquire().await?;
    let rows = sqlx::query(
        "select email, reason, detail, created_by, created_at from email_suppressions
          where workspace_id = $1 order by created_at desc, email limit $2",
    )
    .bind(&caller.workspace_id)
    .bind(LIST_MAX)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(from_row).collect()
}

fn check_note(note: Option<&str>) -> EngineResult<Option<String>> {
    let note = note.map(str::trim).filter(|n| !n.is_empty());
    if note.is_some_and(|n| n.chars().count() > NOTE_MAX) {
        return Err(invalid(
            format!("La nota pasa de {NOTE_MAX} caracteres."),
            "Acórtala.",
        ));
    }
    Ok(note.map(str::to_owned))
}

/// Admins: suppresses one address (audited). Returns whether it was new.
pub async fn add(
    engine: &impl Deps,
    caller: &Caller,
    email: &str,
    reason: Reason,
    note: Option<&str>,
) -> EngineResult<bool> {
    caller.require_admin()?;
    let email = normalize_email(email)?;
    let note = check_note(note)?;
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    let (added, cancelled) = suppress_in(
        &mut tx,
        &caller.workspace_id,
        &email,
        reason,
        note.as_deref(),
        Some(&caller.user_id),
    )
    .await?;
    let touched = sequences_of(&mut tx, &caller.workspace_id, &email).await?;
    crate::accounts::audit_in(
        &mut tx,
        caller,
        "suppression.add",
        &serde_json::json!({"email": email, "reason": reason.as_str(), "cancelled": cancelled}),
    )
    .await?;
    tx.commit().await?;
    republish(engine, &caller.workspace_id, &touched).await;
    Ok(added)
}

/// Admins: takes a manual exclusion or a bounce off the list (audited with what it
/// was); an unsubscribe or a complaint belongs to the recipient and is refused. Steps
/// already cancelled stay cancelled; a later authorization may include the address
/// again.
pub async fn remove(engine: &impl Deps, caller: &Caller, email: &str) -> EngineResult<()> {
    caller.require_admin()?;
    let email = email.trim().to_lowercase();
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    let Some(was) = find(&mut tx, &caller.workspace_id, &email).await? else {
        return Err(EngineError::not_found(
            "ese correo en la lista de supresión",
        ));
    };
    if was.reason.by_recipient() {
        return Err(EngineError::typed(
            ErrorCode::Forbidden,
            format!(
                "Esta baja la pidió el destinatario ({}); nadie del equipo puede quitarla.",
                was.reason.label()
            ),
            "Solo el destinatario puede volver a recibir correos: si te lo pide, que responda a un correo tuyo.",
        ));
    }
    sqlx::query("delete from email_suppressions where workspace_id = $1 and email = $2")
        .bind(&caller.workspace_id)
        .bind(&email)
        .execute(&mut *tx)
        .await?;
    crate::accounts::audit_in(
        &mut tx,
        caller,
        "suppression.remove",
        &serde_json::json!({"email": email, "reason": was.reason.as_str(), "detail": was.detail}),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    pub added: usize,
    pub already: usize,
    /// Rows refused, with their line number and why (at most 20 listed).
    pub rejected: Vec<String>,
    pub rejected_count: usize,
}

/// Admins: imports a CSV of `email[,motivo[,nota]]` (a header row is skipped; motivo
/// defaults to `manual`). Bounded in bytes and rows; a bad row is reported, never a
/// panic, and the good rows are stored in one transaction.
pub async fn import_csv(engine: &impl Deps, caller: &Caller, text: &str) -> EngineResult<Imported> {
    caller.require_admin()?;
    if text.len() > IMPORT_MAX_BYTES {
        return Err(invalid(
            format!("El archivo pasa de {} KB.", IMPORT_MAX_BYTES / 1024),
            "Divídelo en partes más pequeñas.",
        ));
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut out = Imported::default();
    let mut good: Vec<(String, Reason, Option<String>)> = Vec::new();
    let reject = |out: &mut Imported, line: usize, why: String| {
        out.rejected_count += 1;
        if out.rejected.len() < 20 {
            out.rejected.push(format!("Línea {line}: {why}"));
        }
    };
    for (i, record) in reader.records().enumerate() {
        let line = i + 1;
        if line > IMPORT_MAX_ROWS {
            return Err(invalid(
                format!("El archivo pasa de {IMPORT_MAX_ROWS} filas."),
                "Divídelo en partes más pequeñas.",
            ));
        }
        let record = match record {
            Ok(r) => r,
            Err(_) => {
                reject(&mut out, line, "no se pudo leer la fila".into());
                continue;
            }
        };
        let first = record.get(0).unwrap_or_default();
        if first.is_empty() {
            continue;
        }
        if line == 1 && ["email", "correo", "e-mail"].contains(&first.to_lowercase().as_str()) {
            continue;
        }
        let email = match normalize_email(first) {
            Ok(e) => e,
            Err(_) => {
                reject(&mut out, line, "no es un correo válido".into());
                continue;
            }
        };
        let reason = match record.get(1).filter(|r| !r.is_empty()) {
            None => Reason::Manual,
            Some(r) => match Reason::parse(r) {
                Some(r) => r,
                None => {
                    reject(
                        &mut out,
                        line,
                        "motivo desconocido (usa baja, rebote, queja o manual)".into(),
                    );
                    continue;
                }
            },
        };
        let note = match check_note(record.get(2)) {
            Ok(n) => n,
            Err(_) => {
                reject(
                    &mut out,
                    line,
                    format!("la nota pasa de {NOTE_MAX} caracteres"),
                );
                continue;
            }
        };
        good.push((email, reason, note));
    }
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    let mut touched = Vec::new();
    for (email, reason, note) in &good {
        let (added, _) = suppress_in(
            &mut tx,
            &caller.workspace_id,
            email,
            *reason,
            note.as_deref(),
            Some(&caller.user_id),
        )
        .await?;
        if added {
            out.added += 1;
            touched.extend(sequences_of(&mut tx, &caller.workspace_id, email).await?);
        } else {
            out.already += 1;
        }
    }
    crate::accounts::audit_in(
        &mut tx,
        caller,
        "suppression.import",
        &serde_json::json!({"added": out.added, "already": out.already, "rejected": out.rejected_count}),
    )
    .await?;
    tx.commit().await?;
    touched.sort();
    touched.dedup();
    republish(engine, &caller.workspace_id, &touched).await;
    Ok(out)
}
