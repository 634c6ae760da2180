//! The director's side of a chained request (CONTRACT §7.6): a turn that continues a
//! plan after its card was accepted does the next part of the original request —
//! save the selection, reveal the contacts, draft the sequence — and never searches
//! again. Which parts are done comes from the board (a saved list) and from the plan
//! (the cards accepted along it).

use luna_protocol::decision::DecisionKind;

use super::{final_, LocalDirector};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::input::PlanBrief;
use crate::agent::contract::intent::TurnIntent;
use crate::agent::director::grammar::Request;

impl LocalDirector {
    pub(super) fn continue_plan(
        &self,
        input: &ModelInput,
        req: &Request,
        plan: &PlanBrief,
    ) -> ModelStep {
        let saved = input.turn.board.saved_collection.is_some();
        if req.save && !saved && !plan.done(DecisionKind::GuardarEnCrm) {
            if let Some(step) = self.save_selection(input) {
                return step;
            }
        }
        if let Some(whose) =
            super::outreach::Whose::of(req).filter(|_| !plan.done(DecisionKind::RevelarContactos))
        {
            let then = req
                .sequence_steps
                .filter(|_| !plan.done(DecisionKind::RevisarSecuencia))
                .map(|n| (n, req.stage_named.as_deref()));
            return self.contacts_or_next(input, whose, then);
        }
        if let Some(n) = req
            .sequence_steps
            .filter(|_| saved && !plan.done(DecisionKind::RevisarSecuencia))
        {
            return self.sequence(input, n, req.stage_named.as_deref());
        }
        final_(
            TurnIntent::Responder {},
            "Listo: quedó todo lo que me pediste en ese mensaje.",
        )
    }
}
