//! Questions about credits answered with the figure asked for: contact credits, the
//! searches left today (or that the plan has no daily limit), the period's allowance
//! against what is left, or both balances. Every figure is an anchor into `usage`.

use serde_json::{json, Value};

use super::{call, calls_of, final_, ok_rows, LocalDirector};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::intent::TurnIntent;
use crate::agent::director::acts::UsageFocus;

impl LocalDirector {
    pub(super) fn usage(&self, input: &ModelInput, focus: UsageFocus) -> ModelStep {
        let visible = input.tools.iter().any(|t| t.name == "usage");
        let Some(ex) = calls_of(&input.transcript, "usage").first().copied() else {
            if visible {
                return ModelStep::Tools(vec![call("usage", json!({}))]);
            }
            return final_(
                TurnIntent::Responder {},
                "No pude leer tus créditos en este momento; intenta de nuevo en un momento.",
            );
        };
        let Some(row) = ok_rows(ex).first() else {
            return final_(
                TurnIntent::Responder {},
                "No pude leer tus créditos en este momento; intenta de nuevo en un momento.",
            );
        };
        let c = &ex.call;
        let narracion = match focus {
            UsageFocus::Contacts => format!(
                "Te quedan [[evidence:{c}.0.contact_credits_left]] créditos de contacto."
            ),
            UsageFocus::Searches if row.get("searches_left_today").is_some_and(Value::is_i64) => format!(
                "Hoy te quedan [[evidence:{c}.0.searches_left_today]] búsquedas; además tienes [[evidence:{c}.0.reads_left_this_hour]] lecturas en esta hora."
            ),
            UsageFocus::Searches => format!(
                "Tu plan no tiene límite diario de búsquedas; en esta hora te quedan [[evidence:{c}.0.reads_left_this_hour]] lecturas."
            ),
            UsageFocus::Spent => format!(
                "Este periodo llevas [[evidence:{c}.0.intelligence_credits_used]] créditos de inteligencia gastados de [[evidence:{c}.0.intelligence_credits_allowance]] (te quedan [[evidence:{c}.0.intelligence_credits_left]]) y [[evidence:{c}.0.contact_credits_used]] créditos de contacto (te quedan [[evidence:{c}.0.contact_credits_left]])."
            ),
            UsageFocus::Credits => format!(
                "Te quedan [[evidence:{c}.0.intelligence_credits_left]] créditos de inteligencia y [[evidence:{c}.0.contact_credits_left]] créditos de contacto."
            ),
        };
        final_(TurnIntent::Responder {}, narracion)
    }
}
