//! What the loop makes of an answer for the person: the small enum
//! mappings the events need. How a tool result is read (citable values, harvested
//! refs, the tool line) is the contract's `results`.

use luna_protocol::event::IntentKind;

use crate::agent::contract::intent::TurnIntent;

pub(super) fn intent_kind(intent: &TurnIntent) -> IntentKind {
    match intent {
        TurnIntent::Responder {} => IntentKind::Responder,
        TurnIntent::Encuadre { .. } => IntentKind::Encuadre,
        TurnIntent::ProponerDecision { .. } => IntentKind::ProponerDecision,
        TurnIntent::Cierre { .. } => IntentKind::Cierre,
        TurnIntent::Limite { .. } => IntentKind::Limite,
    }
}

pub(super) fn level_number(level: crate::registry::def::Level) -> u8 {
    use crate::registry::def::Level;
    match level {
        Level::L0 => 0,
        Level::L1 => 1,
        Level::L2 => 2,
        Level::Never => 3,
    }
}
