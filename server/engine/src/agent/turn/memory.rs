//! Session memory (CONTRACT §7.4, §7.6): the fact ledger accumulated over a session's
//! turns and the stage derived from the session's state.
//!
//! The ledger of a turn starts from the ledger the previous turn of the session ended
//! with (kept in `turn_trajectories.facts`), takes what this message says (a field the
//! message names replaces the old value; the others stay as they were, with the turn
//! they were said at), and at the end of the turn learns what the tools were actually
//! asked for (`inferido`, for a field nobody said: what a model read into the message).
//! The stage comes from the board alone — pending cards, a sequence draft, a saved
//! list, a selection — never from parsing the message, so a real model's framing does
//! not depend on the local director's grammar.

use luna_protocol::board::{Board, SequenceStatus};
use luna_protocol::session::{CommercialProfile, Stage};
use luna_protocol::tool::ToolOutcome;
use sqlx::AnyPool;

use crate::base::error::EngineResult;

use crate::agent::contract::gateway::Exchange;
use crate::agent::contract::intent::{FactField, FactLedger, FactStatus};
use crate::market::filters::MarketFilters;
use crate::market::types::{CountArgs, SearchArgs};
use crate::registry::typed;

/// The stage of the session, from what is on its board (CONTRACT §7.4). A session with
/// nothing on the board is `buscando`: whatever the first message asks, the search
/// tools are in view.
pub fn derive_stage(board: &Board) -> Stage {
    if !board.pending.is_empty() {
        Stage::DecisionPendiente
    } else if board
        .sequences
        .iter()
        .any(|s| s.status == SequenceStatus::Borrador)
    {
        Stage::ConBorrador
    } else if board.saved.is_some() {
        Stage::ConListaGuardada
    } else if !board.selection.is_empty() {
        Stage::ConSeleccion
    } else {
        Stage::Buscando
    }
}

pub use crate::agent::contract::intent::merge;
pub use crate::agent::director::memory::{said_in, said_over, GOVERNMENT};

/// What a market search or count was asked for, decoded into the tool's own
/// arguments type (`SearchArgs`, `CountArgs`): the filters, the state list and the
/// free text (a count has none).
fn market_ask(ex: &Exchange) -> Option<(MarketFilters, Vec<String>, Option<String>)> {
    let ok = matches!(
        serde_json::from_value::<ToolOutcome>(ex.result.clone()),
        Ok(ToolOutcome::Ok(_))
    );
    if !ok {
        return None;
    }
    let (name, args) = (ex.tool.name.as_str(), &ex.tool.args);
    // The call ran, so its arguments passed the same type; one that does not decode
    // is logged by `typed::args` and teaches the ledger nothing.
    match name {
        "market_search" => typed::args::<SearchArgs>(name, args)
            .ok()
            .map(|a| (a.filters, a.states, a.query)),
        "market_count" => typed::args::<CountArgs>(name, args)
            .ok()
            .map(|a| (a.filters, a.states, None)),
        _ => None,
    }
}

/// Fields nobody said but the turn's successful searches and counts were asked for:
/// what the model understood the message to mean, `inferido` at `turn`.
pub fn infer_from_calls(ledger: &mut FactLedger, transcript: &[Exchange], turn: u32) {
    for ex in transcript {
        let Some((filters, states, query)) = market_ask(ex) else {
            continue;
        };
        let states = if states.is_empty() {
            filters.state.clone()
        } else {
            Some(states.join(", "))
        };
        let buyer = filters
            .buyer
            .clone()
            .or_else(|| (filters.has_awards == Some(true)).then(|| GOVERNMENT.to_owned()));
        let giro = filters.giro.clone().or(query);
        for (field, value) in [
            (FactField::Giro, giro),
            (FactField::Estado, states),
            (FactField::Comprador, buyer),
        ] {
            if let Some(valor) = value.filter(|v| !v.trim().is_empty()) {
                if ledger.is_missing(field) {
                    ledger.set(field, FactStatus::Inferido { valor, turno: turn });
                }
            }
        }
    }
}

/// Lays the profile under the ledger: every `perfil` fact is taken from the current
/// profile (an admin's change shows at the next turn), and a field the person said or
/// a turn inferred keeps its value. The offer, the territory (state names joined with
/// ", ", as the ledger writes several states), the targeted buyers and — when the
/// profile names exactly one — the giro.
pub fn apply_profile(ledger: &mut FactLedger, p: &CommercialProfile) {
    let stale: Vec<FactField> = ledger
        .fields
        .iter()
        .filter(|(_, s)| matches!(s, FactStatus::Perfil { .. }))
        .map(|(f, _)| *f)
        .collect();
    for field in stale {
        ledger.fields.remove(&field);
    }
    let giro = match p.giros.as_slice() {
        [one] => one.clone(),
        _ => String::new(),
    };
    for (field, valor) in [
        (FactField::Oferta, p.oferta.clone()),
        (FactField::Estado, p.estados.join(", ")),
        (FactField::Comprador, p.compradores.join(", ")),
        (FactField::Giro, giro),
    ] {
        if !valor.is_empty() && ledger.is_missing(field) {
            ledger.set(field, FactStatus::Perfil { valor });
        }
    }
}

/// The ledger the session's latest turn ended with (empty for a first turn).
pub async fn previous_ledger(pool: &AnyPool, session_id: &str) -> EngineResult<FactLedger> {
    let facts: Option<String> = sqlx::query_scalar(
        "select facts from turn_trajectories where session_id = $1
          order by created_at desc limit 1",
    )
    .bind(session_id)
    .fetch_optional(pool)
    .await?;
    match facts {
        None => Ok(FactLedger::default()),
        Some(facts) => crate::base::stored::json("turn_trajectories.facts", &facts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::director::grammar::parse;
    use crate::agent::director::vocab::CatalogVocabulary;

    fn ledger(message: &str, turn: u32) -> FactLedger {
        said_in(&parse(message, &CatalogVocabulary), turn)
    }

    #[test]
    fn the_profile_fills_only_what_nobody_said_and_follows_its_changes() {
        let p = CommercialProfile {
            oferta: "Empaque corrugado y etiquetas".into(),
            giros: vec!["alimentos".into()],
            estados: vec!["Jalisco".into(), "Estado de México".into()],
            compradores: vec!["IMSS".into()],
            ticket_mxn: Some(250_000),
            exclusiones: String::new(),
        };
        let mut ledger = FactLedger::default();
        ledger.set(
            FactField::Estado,
            FactStatus::Dicho {
                valor: "Nuevo León".into(),
                turno: 1,
            },
        );
        apply_profile(&mut ledger, &p);
        assert_eq!(
            ledger.status(FactField::Estado),
            &FactStatus::Dicho {
                valor: "Nuevo León".into(),
                turno: 1
            },
            "what the person said wins"
        );
        assert_eq!(
            ledger.status(FactField::Oferta),
            &FactStatus::Perfil {
                valor: "Empaque corrugado y etiquetas".into()
            }
        );
        assert_eq!(
            ledger.status(FactField::Comprador),
            &FactStatus::Perfil {
                valor: "IMSS".into()
            }
        );
        assert_eq!(
            ledger.status(FactField::Giro),
            &FactStatus::Perfil {
                valor: "alimentos".into()
            }
        );
        // An admin empties the profile: its facts leave the ledger at the next turn.
        apply_profile(&mut ledger, &CommercialProfile::default());
        assert!(ledger.is_missing(FactField::Oferta));
        assert!(ledger.is_missing(FactField::Giro));
        assert!(!ledger.is_missing(FactField::Estado));
    }

    #[test]
    fn a_refinement_changes_only_the_field_it_names() {
        let first = ledger(
            "40 fabricantes de empaque en Jalisco que ya le vendieron a gobierno",
            1,
        );
        let second = merge(&first, &ledger("ahora en Nuevo León", 2));
        assert_eq!(
            second.status(FactField::Estado),
            &FactStatus::Dicho {
                valor: "Nuevo León".into(),
                turno: 2
            }
        );
        for field in [FactField::Giro, FactField::Cantidad, FactField::Comprador] {
            assert_eq!(second.status(field), first.status(field), "{field:?}");
        }
        // A message that names nothing keeps everything.
        assert_eq!(merge(&second, &ledger("gracias", 3)), second);
    }

    #[test]
    fn two_states_are_both_remembered() {
        let l = ledger("empaque en Jalisco y Nuevo León", 1);
        assert_eq!(
            l.status(FactField::Estado),
            &FactStatus::Dicho {
                valor: "Jalisco, Nuevo León".into(),
                turno: 1
            }
        );
    }

    #[test]
    fn the_stage_follows_the_board_not_the_message() {
        let mut board = Board::default();
        assert_eq!(derive_stage(&board), Stage::Buscando);
        board.sequences.push(luna_protocol::board::SequenceCard {
            sequence_id: "seq_1".into(),
            name: "Primera".into(),
            steps: 3,
            recipients: 10,
            status: SequenceStatus::Borrador,
            progress: Vec::new(),
            version: 1,
            drafts: Vec::new(),
            notice: None,
        });
        assert_eq!(derive_stage(&board), Stage::ConBorrador);
        board.sequences[0].status = SequenceStatus::Activa;
        assert_eq!(derive_stage(&board), Stage::Buscando);
    }
}
