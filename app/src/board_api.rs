//! Server functions behind the board and the evidence drawer: the company file,
//! the saved collection, moving a card, "quitar" on a selection card and "deshacer".
//! Each is one call into `luna_engine::screen`, which goes through the tool pipeline
//! as the `ui` surface wherever the action is a tool.

use leptos::prelude::*;
use luna_protocol::crm::{CollectionBoard, Moved, UndoReceipt};
use luna_protocol::evidence::CompanyFile;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// The evidence drawer's file for a `company:<id>`.
#[server(prefix = "/api", endpoint = "company_file_open", output = crate::codec::Answer)]
pub async fn open_company_file(company_ref: String) -> Result<CompanyFile, AppError> {
    let caller = caller()?;
    luna_engine::screen::company_file(&engine()?, &caller, &company_ref)
        .await
        .map_err(fail)
}

/// The saved collection with its stages and records (Tablero / Tabla).
#[server(prefix = "/api", endpoint = "collection_board_read", output = crate::codec::Answer)]
pub async fn read_collection_board(collection_id: String) -> Result<CollectionBoard, AppError> {
    let caller = caller()?;
    luna_engine::screen::collection_board(&engine()?, &caller, &collection_id)
        .await
        .map_err(fail)
}

/// Moves a card to another stage (`crm_record` update with the version read).
#[server(prefix = "/api", endpoint = "move_record", output = crate::codec::Answer)]
pub async fn move_record(
    session_id: Option<String>,
    record_ref: String,
    version: i64,
    stage: String,
) -> Result<Moved, AppError> {
    let caller = caller()?;
    luna_engine::screen::move_record(
        &engine()?,
        &caller,
        session_id.as_deref(),
        &record_ref,
        version,
        &stage,
    )
    .await
    .map_err(fail)
}

/// "quitar": removes a company from the session's selection; returns how many remain.
#[server(prefix = "/api", endpoint = "remove_from_selection", output = crate::codec::Answer)]
pub async fn remove_from_selection(
    session_id: String,
    company_ref: String,
) -> Result<u32, AppError> {
    let caller = caller()?;
    luna_engine::screen::remove_from_selection(&engine()?, &caller, &session_id, &company_ref)
        .await
        .map_err(fail)
}

/// "deshacer" on a tool line that wrote.
#[server(prefix = "/api", endpoint = "undo_write", output = crate::codec::Answer)]
pub async fn undo_write(
    session_id: Option<String>,
    undo_token: String,
) -> Result<UndoReceipt, AppError> {
    let caller = caller()?;
    luna_engine::screen::undo(&engine()?, &caller, session_id.as_deref(), &undo_token)
        .await
        .map_err(fail)
}

/// "Cancelar" on a research run card: stops the run at its next phase boundary.
#[server(prefix = "/api", endpoint = "cancel_research_run", output = crate::codec::Answer)]
pub async fn cancel_research_run(run_id: String) -> Result<(), AppError> {
    let caller = caller()?;
    luna_engine::research::cancel(&engine()?, &caller, &run_id)
        .await
        .map(|_| ())
        .map_err(fail)
}
