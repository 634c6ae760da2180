//! Luna-only tools over the work session's board (CONTRACT §5 catalog): `selection_update`
//! (argued cards: every item needs a `why`) and `board_read`. The board lives in the
//! session log: `selection_update` reads the current projection and appends the new
//! selection as a `board.patched` event; its result is a summary for the model.
//! `saved_summary` projects a CRM collection onto the board (exact stage counts) and
//! `saved_refresh` keeps the board's saved list true after any CRM write.

use luna_protocol::board::{Board, SavedCollection, SelectionItem, StageCount};
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{BoardPatched, SessionEvent};
use luna_protocol::patch::PatchOp;
use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::base::error::{EngineError, EngineResult};
use crate::crm::query::{CollectionTotals, QueryOp, QueryRequest, RecordFilter, RecordSort};
use crate::market::types::{GetArgs, MarketRecord};
use crate::market::Market;
use crate::registry::typed;
use crate::registry::{Family, Registry, Stage, Surface, ToolCtx, ToolDef, ToolOutput};

/// Most companies a selection holds.
pub const MAX_SELECTION: usize = 100;

/// The first row of `selection_update`: how many companies the selection holds, and
/// how many of them carry a priority. The screen's «quitar» decodes the same struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionTotals {
    pub total: usize,
    pub priority_total: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SelectionOp {
    Add,
    Remove,
    Replace,
    Clear,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectionEntry {
    /// `company:<id>` de un Proveedor.
    #[serde(rename = "ref")]
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub reference: String,
    /// Why this company is in, in one Spanish sentence. Required.
    #[schemars(length(min = 3, max = crate::base::bounds::TEXT_MAX))]
    pub why: String,
    /// 1 marks a priority company.
    #[serde(default)]
    pub priority: Option<u8>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectionUpdateArgs {
    pub op: SelectionOp,
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub items: Vec<SelectionEntry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoardSection {
    Selection,
    Saved,
    Pending,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardReadArgs {
    #[serde(default)]
    pub section: Option<BoardSection>,
}

pub fn register(reg: &mut Registry) {
    reg.add(
        ToolDef::new::<SelectionUpdateArgs>("selection_update", Family::Board)
            .label("Actualizando la selección")
            .description(
                "Úsala cuando quieras agregar, quitar o reemplazar empresas de la selección del tablero, \
                 cada una con su porqué (un elemento sin porqué se rechaza). NO la uses para guardar en el \
                 CRM (usa crm_save_companies) ni para buscar Proveedores (usa market_search).",
            )
            .example(
                "Agrega a la selección a un fabricante de empaque con adjudicaciones al IMSS",
                json!({"op": "add", "items": [{"ref": "company:sup_1", "why": "Vendió cajas de cartón al IMSS en 2025", "priority": 1}]}),
            )
            .surfaces(&[Surface::Luna, Surface::Ui])
            .budget(4_500)
            .citations(&["ref", "why", "total", "priority_total"])
            .stage(Stage::SinCriterio, 30)
            .stage(Stage::Buscando, 30)
            .stage(Stage::ConSeleccion, 10)
            .stage(Stage::ConListaGuardada, 110)
            .stage(Stage::ConBorrador, 120)
            // A search while a card waits still becomes the selection.
            .stage(Stage::DecisionPendiente, 25)
            .handler(selection_update),
    );
    reg.add(
        ToolDef::new::<BoardReadArgs>("board_read", Family::Board)
            .label("Revisando el tablero")
            .description(
                "Úsala cuando necesites saber qué hay en el tablero: la selección con sus porqués, la lista \
                 guardada o las decisiones pendientes. NO la uses para consultar el CRM completo (usa \
                 collection_query).",
            )
            .example("¿Qué empresas tengo en la selección?", json!({"section": "selection"}))
            .surfaces(&[Surface::Luna, Surface::Ui])
            .budget(4_500)
            .citations(&["ref", "why"])
            .stage(Stage::SinCriterio, 130)
            .stage(Stage::Buscando, 130)
            .stage(Stage::ConSeleccion, 130)
            .stage(Stage::ConListaGuardada, 130)
            .stage(Stage::ConBorrador, 100)
            .stage(Stage::DecisionPendiente, 10)
            .handler(board_read),
    );
}

fn session_of(ctx: &ToolCtx) -> EngineResult<&str> {
    ctx.session_id.as_deref().ok_or_else(|| {
        EngineError::typed(
            ErrorCode::InvalidArgument,
            "Esta herramienta solo funciona dentro de una conversación con Luna.",
            "Abre el chat y pídeselo a Luna.",
        )
    })
}

fn row_of(item: &SelectionItem) -> ResultRow {
    ResultRow::new(item.reference.clone(), item.label.clone())
        .with("why", item.why.clone())
        .with(
            "evidence",
            json!(item
                .evidence
                .iter()
                .map(|e| json!({"ref": e.reference, "label": e.label}))
                .collect::<Vec<_>>()),
        )
        .with("priority", json!(item.priority))
}

/// Looks a company up in the Proveedores and builds its card.
async fn card(market: &Market, entry: &SelectionEntry) -> EngineResult<SelectionItem> {
    if !entry.reference.starts_with("company:") {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            format!("«{}» no es una empresa.", entry.reference),
            "La selección solo admite empresas: usa el ref company:… de un Proveedor.",
        ));
    }
    let got = market
        .get(&GetArgs {
            record_ref: entry.reference.clone(),
            include_awards: false,
        })
        .await?;
    let MarketRecord::Supplier(detail) = got.record else {
        return Err(EngineError::not_found("esa empresa"));
    };
    let s = detail.supplier;
    Ok(SelectionItem {
        reference: s.r#ref,
        label: s.ref_label,
        why: entry.why.trim().to_owned(),
        evidence: s
            .evidence
            .into_iter()
            .take(3)
            .map(|e| luna_protocol::board::Evidence {
                reference: e.r#ref,
                label: e.ref_label,
            })
            .collect(),
        priority: entry.priority,
    })
}

async fn selection_update(ctx: ToolCtx, args: SelectionUpdateArgs) -> EngineResult<ToolOutput> {
    let session_id = session_of(&ctx)?;
    let snapshot = ctx
        .engine
        .sessions
        .snapshot_at_latest(&ctx.caller, session_id)
        .await?;
    let mut selection = snapshot.view.board.selection;
    let market = Market::new(ctx.engine.store.clone(), Vec::new());
    match args.op {
        SelectionOp::Clear => selection.clear(),
        SelectionOp::Remove => {
            selection.retain(|s| !args.items.iter().any(|i| i.reference == s.reference));
        }
        SelectionOp::Add | SelectionOp::Replace => {
            if args.op == SelectionOp::Replace {
                selection.clear();
            }
            for entry in &args.items {
                let item = card(&market, entry).await?;
                match selection.iter_mut().find(|s| s.reference == item.reference) {
                    Some(existing) => *existing = item,
                    None => selection.push(item),
                }
            }
        }
    }
    if selection.len() > MAX_SELECTION {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            format!("La selección admite hasta {MAX_SELECTION} empresas."),
            "Quita empresas o guarda la selección en el CRM antes de agregar más.",
        ));
    }
    // The board lives in the session log: write the new selection there now, whole,
    // so trimming this result to the output budget never trims the board.
    let patch = SessionEvent::BoardPatched(BoardPatched {
        turn_id: None,
        patch: vec![PatchOp::Replace {
            path: Board::SELECTION.to_owned(),
            value: serde_json::to_value(&selection)
                .map_err(|e| EngineError::Internal(e.to_string()))?,
        }],
    });
    ctx.engine.sessions.append_one(session_id, patch).await?;
    let selected: Vec<String> = selection.iter().map(|i| i.reference.clone()).collect();
    ctx.engine
        .agent
        .requote_on_selection(&ctx.engine, &ctx.caller, session_id, &selected)
        .await?;
    let totals = SelectionTotals {
        total: selection.len(),
        priority_total: selection.iter().filter(|s| s.priority.is_some()).count(),
    };
    let mut rows = vec![typed::row(
        "record:selection",
        format!("Selección de {} empresas", selection.len()),
        &totals,
    )?];
    rows.extend(selection.iter().map(row_of));
    Ok(ToolOutput::from(Envelope::rows(rows)))
}

async fn board_read(ctx: ToolCtx, args: BoardReadArgs) -> EngineResult<ToolOutput> {
    let session_id = session_of(&ctx)?;
    let board = ctx
        .engine
        .sessions
        .snapshot_at_latest(&ctx.caller, session_id)
        .await?
        .view
        .board;
    let mut rows = Vec::new();
    if matches!(args.section, None | Some(BoardSection::Selection)) {
        rows.extend(board.selection.iter().map(row_of));
    }
    if matches!(args.section, None | Some(BoardSection::Saved)) {
        if let Some(saved) = &board.saved {
            rows.push(
                ResultRow::new(
                    format!("collection:{}", saved.collection_id),
                    saved.name.clone(),
                )
                .with("total", saved.total),
            );
        }
    }
    if matches!(args.section, None | Some(BoardSection::Pending)) {
        rows.extend(board.pending.iter().map(|card| {
            ResultRow::new(format!("decision:{}", card.id), card.title.clone())
                .with("consequence", card.consequence.clone())
        }));
    }
    Ok(ToolOutput::from(Envelope::rows(rows)))
}

/// After a CRM write (Luna's, a drag on the board, a "deshacer"): the board's saved
/// list with its exact stage counts as a `board.patched`, or `None` when nothing is
/// saved in this session or the counts did not move.
pub async fn saved_refresh(
    engine: &crate::Engine,
    caller: &crate::accounts::Caller,
    board: &Board,
    turn_id: Option<&str>,
) -> EngineResult<Option<SessionEvent>> {
    let Some(saved) = &board.saved else {
        return Ok(None);
    };
    let fresh = saved_summary(engine, caller, &saved.collection_id, &saved.name).await?;
    if &fresh == saved {
        return Ok(None);
    }
    Ok(Some(SessionEvent::BoardPatched(BoardPatched {
        turn_id: turn_id.map(str::to_owned),
        patch: vec![PatchOp::replace(
            Board::SAVED,
            serde_json::to_value(&fresh).map_err(EngineError::internal)?,
        )],
    })))
}

/// The saved collection as the board shows it, counted exactly.
pub(crate) async fn saved_summary(
    engine: &crate::Engine,
    caller: &crate::accounts::Caller,
    collection_id: &str,
    name: &str,
) -> EngineResult<SavedCollection> {
    let env = engine
        .crm
        .query(
            &caller.workspace_id,
            &QueryRequest {
                collection_id: collection_id.to_owned(),
                op: QueryOp::Aggregate,
                filter: RecordFilter::default(),
                sort: RecordSort::UpdatedDesc,
                limit: 1,
                cursor: None,
                projection: Vec::new(),
                budget: 4_000,
            },
        )
        .await?;
    let totals: CollectionTotals = typed::first(&env)?;
    let stages = totals
        .by_stage
        .into_iter()
        .map(|s| StageCount {
            stage: s.stage,
            count: u32::try_from(s.count.max(0)).unwrap_or(u32::MAX),
        })
        .collect();
    let total = u64::try_from(totals.total.max(0)).unwrap_or(0);
    Ok(SavedCollection {
        collection_id: collection_id.to_owned(),
        name: name.to_owned(),
        total: u32::try_from(total).unwrap_or(u32::MAX),
        stages,
    })
}
