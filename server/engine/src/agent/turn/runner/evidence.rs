//! What the loop makes of an answer for the person: its anchors and the small enum
//! mappings the events need. How a tool result is read (citable values, harvested
//! refs, the tool line) is the contract's `results`.

use luna_protocol::event::{Anchor, IntentKind};

use crate::agent::contract::intent::TurnIntent;
use crate::agent::contract::narration::ResolvedNarration;

pub(super) fn to_anchors(resolved: &ResolvedNarration) -> Vec<Anchor> {
    resolved
        .anchors
        .iter()
        .map(|a| Anchor {
            start: a.start as u32,
            end: a.end as u32,
            label: resolved.text[a.start..a.end].to_owned(),
            reference: a.reference.clone(),
        })
        .collect()
}

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
