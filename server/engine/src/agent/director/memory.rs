//! Stage 5 of the director's interpreter: a follow-up refines what the session asked
//! before. «ahora en Nuevo León», «¿y en Querétaro?», «mejor que sean 20», «solo los que
//! le vendieron al IMSS» name one criterion; the others come from the session's fact
//! ledger (the turn's `memory`: what was said, inferred or taken from the
//! profile in earlier turns), so a refinement changes only the field it names and the
//! search runs on the whole criterion.
//!
//! A message is a refinement when it names at least one criterion, the ledger knows a
//! criterion the message does not name, it asks for nothing else (an action of its own,
//! a ranking, tenders, contacts: `OTHER_KINDS`), and either it carries a refinement cue
//! (`REFINE_CUES`) or it cannot stand alone as a request (it names no giro or kind of
//! company). A message that names a giro without a cue is a new request.

use crate::agent::contract::intent::{FactField, FactLedger, FactStatus};
use crate::base::catalog::scian::Giro;
use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text::fold;

use super::grammar::Request;
use super::places::MAX_STATES;
use super::words::bare_number;

/// What the person said in this message, as ledger fields said at `turn`.
pub fn said_in(request: &Request, turn: u32) -> FactLedger {
    let mut ledger = FactLedger::default();
    let said = |v: String| FactStatus::Dicho {
        valor: v,
        turno: turn,
    };
    if let Some((_, label)) = &request.giro {
        ledger.set(FactField::Giro, said(label.clone()));
    } else if let Some(query) = &request.query {
        ledger.set(FactField::Giro, said(query.clone()));
    }
    let states: Vec<&str> = if request.states.is_empty() {
        request
            .state
            .iter()
            .map(|(_, name)| name.as_str())
            .collect()
    } else {
        request
            .states
            .iter()
            .map(|(_, name)| name.as_str())
            .collect()
    };
    if !states.is_empty() {
        ledger.set(FactField::Estado, said(states.join(", ")));
    }
    if let Some(n) = request.quantity {
        ledger.set(FactField::Cantidad, said(n.to_string()));
    }
    if !request.buyers.is_empty() {
        ledger.set(FactField::Comprador, said(request.buyers.join(", ")));
    } else if request.sold_to_government {
        ledger.set(FactField::Comprador, said(GOVERNMENT.to_owned()));
    }
    ledger
}

/// The session's ledger after `request` (turn `turn`): what it says replaces what was
/// said before, and places it removes («quita los de CDMX») leave the places said
/// before.
pub fn said_over(previous: &FactLedger, request: &Request, turn: u32) -> FactLedger {
    let mut said = said_in(request, turn);
    // A comparison names segments, not a new request: the dimension it varies on
    // (buyers, then places, then giros, as `planner::compare` reads them) keeps what the
    // session said before.
    if request.compare {
        let varies = if request.buyers.len() >= 2 {
            FactField::Comprador
        } else if request.states.len() >= 2 {
            FactField::Estado
        } else if request.giros.len() >= 2 {
            FactField::Giro
        } else if !request.states.is_empty() {
            FactField::Estado
        } else if !request.buyers.is_empty() {
            FactField::Comprador
        } else {
            FactField::Giro
        };
        said.fields.remove(&varies);
    }
    // «agrega Oaxaca también»: the places said before, then the ones added.
    if request.adds_places {
        if let Some(before) = value(previous, FactField::Estado) {
            let mut places: Vec<&str> = before.split(", ").collect();
            for (_, name) in &request.states {
                if !places.contains(&name.as_str()) && places.len() < MAX_STATES {
                    places.push(name);
                }
            }
            said.set(
                FactField::Estado,
                FactStatus::Dicho {
                    valor: places.join(", "),
                    turno: turn,
                },
            );
        }
    }
    if request.removes_places {
        // «quita Coahuila y pon Tamaulipas»: the last places named join instead.
        let cut = request.states.len().saturating_sub(request.swapped_in);
        let swapped: Vec<&str> = request.states[cut..]
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        let dropped: Vec<&str> = request.states[..cut]
            .iter()
            .map(|(_, n)| n.as_str())
            .collect();
        said.fields.remove(&FactField::Estado);
        if request.keeps_last_place && !swapped.is_empty() {
            said.set(
                FactField::Estado,
                FactStatus::Dicho {
                    valor: swapped.join(", "),
                    turno: turn,
                },
            );
        } else if let Some(
            FactStatus::Dicho { valor, .. }
            | FactStatus::Perfil { valor }
            | FactStatus::Inferido { valor, .. },
        ) = previous.fields.get(&FactField::Estado)
        {
            let mut kept: Vec<&str> = valor.split(", ").filter(|s| !dropped.contains(s)).collect();
            for s in &swapped {
                if !kept.contains(s) && kept.len() < MAX_STATES {
                    kept.push(s);
                }
            }
            if !kept.is_empty() {
                said.set(
                    FactField::Estado,
                    FactStatus::Dicho {
                        valor: kept.join(", "),
                        turno: turn,
                    },
                );
            }
        }
    }
    crate::agent::contract::intent::merge(previous, &said)
}

/// The ledger's value for "sold to any government buyer".
pub const GOVERNMENT: &str = "gobierno";

/// Words that mark a message as a change to the request before it (folded).
const REFINE_CUES: &[&str] = &[
    "ahora",
    "mejor",
    "tambien",
    "en vez",
    "en lugar",
    "cambia",
    "cambialo",
    "pero",
    "solo",
    "solamente",
    "nada mas",
    "nomas",
    "igual",
    "lo mismo",
    "los mismos",
    "las mismas",
    "que sean",
    "y en",
    "y de",
    "y los",
    "y las",
    "y si",
];

/// Words that point back at what the session was about: «de esos», «para eso», «y
/// cuántas son en total», «los 10 mejores» (of what was found).
const BACK_REFERENCES: &[&str] = &[
    "esos", "esas", "estos", "estas", "eso", "esto", "ellos", "ellas", "mismos", "mismas", "total",
    "mejores", "primeros", "primeras", "les",
];

/// Adverbs of place that point back at the session's places («por allá», «ahí»).
const PLACE_REFERENCES: &[&str] = &["alla", "ahi", "alli", "there"];

/// True when the folded message points back at the session's request.
pub fn points_back(folded: &str) -> bool {
    folded.split(' ').any(|w| BACK_REFERENCES.contains(&w))
}

/// Words a reply may open with before what it asks («sale,», «va, y», «órale»).
const INTERJECTIONS: &[&str] = &[
    "sale", "va", "ok", "okay", "orale", "andale", "bueno", "pues", "y", "entonces", "oye",
    "ahora", "perfecto", "listo",
];

/// The folded message's words after the interjections it opens with.
fn after_interjections(folded: &str) -> Vec<&str> {
    folded
        .split(' ')
        .filter(|w| !w.is_empty())
        .skip_while(|w| INTERJECTIONS.contains(w))
        .collect()
}

/// «y…», «va, y…», «sale, ahora…»: a reply that goes on from what was said.
fn goes_on(folded: &str) -> bool {
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    let skipped = words.len() - after_interjections(folded).len();
    words[..skipped]
        .iter()
        .any(|w| ["y", "ahora", "entonces"].contains(w))
}

/// True when the folded message carries a refinement cue as whole words.
fn has_cue(folded: &str) -> bool {
    let padded = format!(" {folded} ");
    folded.starts_with("y ")
        || REFINE_CUES
            .iter()
            .any(|cue| padded.contains(&format!(" {cue} ")))
}

/// The value a ledger field holds, if any.
pub(super) fn value(facts: &FactLedger, field: FactField) -> Option<&str> {
    match facts.status(field) {
        FactStatus::Dicho { valor, .. }
        | FactStatus::Inferido { valor, .. }
        | FactStatus::Perfil { valor } => Some(valor.as_str()),
        FactStatus::Faltante => None,
    }
}

/// Word stems of requests for another kind of answer — a ranking («¿quién le vende
/// más…?»), tenders, contacts, emails — which are never a refinement of a search.
const OTHER_KINDS: &[&str] = &[
    "quien",
    "licitac",
    "convocator",
    "oportunidad",
    "correo",
    "mail",
    "contacto",
    "secuencia",
    "seguimiento",
    "cadencia",
    "nota",
    "anota",
    "investig",
    "compar",
    "riesgo",
];

/// True when the request carries an action of its own (save, contacts, a sequence, a
/// note…) or asks for another kind of answer.
fn asks_something_else(req: &Request, folded: &str) -> bool {
    req.has_action()
        || req.research
        || req.risk_screen
        || req.asks_usage
        || req.connector.is_some()
        || req.send_now
        || folded
            .split(' ')
            .any(|w| OTHER_KINDS.iter().any(|k| w.starts_with(k)))
}

/// Whether every place the message names comes after «con», «contra» or «vs»: it is
/// set against something else, the session's («ponlo lado a lado con Veracruz y
/// Chiapas»), not against each other («compara Jalisco con Veracruz»).
fn set_against_session(message: &str, states: &[(String, String)]) -> bool {
    let folded = fold(message);
    let with = [
        " con ",
        " contra ",
        " vs ",
        " versus ",
        " against ",
        " with ",
    ]
    .iter()
    .filter_map(|w| format!(" {folded} ").find(w))
    .min();
    let first_named = states
        .iter()
        .filter_map(|(name, _)| format!(" {folded} ").find(&fold(name)))
        .min();
    matches!((with, first_named), (Some(w), Some(n)) if w < n)
}

/// «¿y cómo se compara con Veracruz?»: a comparison that names one segment weighs it
/// against the session's request; so does one that names several, all after «con»
/// («ponlo lado a lado con Veracruz y Chiapas»). The session's value of that
/// dimension (state, buyer or giro) becomes the first segment, and what the message
/// does not name comes from the ledger.
pub fn against_session(req: &Request, facts: &FactLedger, message: &str) -> Request {
    let mut out = req.clone();
    let segments = [out.states.len(), out.buyers.len(), out.giros.len()];
    let with_session = set_against_session(message, &out.states);
    if segments.iter().any(|n| *n >= 2) && !(out.states.len() >= 2 && with_session) {
        return out;
    }
    if !out.states.is_empty() && (out.states.len() == 1 || with_session) {
        if let Some(v) = value(facts, FactField::Estado) {
            let earlier: Vec<(String, String)> = v
                .split(", ")
                .filter_map(|name| State::normalize(name, StateContext::Filter).ok())
                .map(|s| (s.name().to_owned(), s.name().to_owned()))
                .filter(|s| !out.states.contains(s))
                .take(1)
                .collect();
            out.states.splice(0..0, earlier);
        }
    } else if out.buyers.len() == 1 {
        if let Some(v) = value(facts, FactField::Comprador).filter(|v| *v != GOVERNMENT) {
            let earlier: Vec<String> = v
                .split(", ")
                .map(str::to_owned)
                .filter(|b| !out.buyers.contains(b))
                .take(1)
                .collect();
            out.buyers.splice(0..0, earlier);
        }
    } else if let (1, Some(v)) = (out.giros.len(), value(facts, FactField::Giro)) {
        let folded_v = fold(v);
        if let Some(g) = Giro::ALL.iter().find(|g| fold(g.label()) == folded_v) {
            let earlier = (g.key().to_owned(), g.label().to_owned());
            if !out.giros.contains(&earlier) {
                out.giros.insert(0, earlier);
                out.giro = None;
            }
        }
    }
    // The segments' shared criteria: the giro (unless giros vary), place, buyer.
    let varies_giro = out.giros.len() >= 2;
    let varies_place = out.states.len() >= 2;
    let varies_buyer = out.buyers.len() >= 2;
    let kept = (out.giros.clone(), out.states.clone(), out.buyers.clone());
    fill(&mut out, facts);
    if varies_giro {
        out.giro = None;
        out.query = None;
        out.giros = kept.0;
    }
    if varies_place {
        out.states = kept.1;
    }
    out.state = out.states.first().cloned();
    if varies_buyer {
        out.buyers = kept.2;
    }
    out
}

/// A request of another kind (a ranking, tenders, records) that points back at the
/// session («¿y quién le vende más de esos?», «¿hay licitaciones para eso?»): the giro,
/// places and buyers it does not name come from the ledger.
pub fn complete(req: &Request, facts: &FactLedger, message: &str) -> Request {
    let folded = fold(message);
    // «¿hay concursos de obra por allá?»: a place adverb stands for the session's
    // places, and only for them.
    let names_place = req.state.is_some() || !req.states.is_empty();
    if !names_place && folded.split(' ').any(|w| PLACE_REFERENCES.contains(&w)) {
        let mut out = req.clone();
        out.states = ledger_places(facts);
        out.state = out.states.first().cloned();
        return out;
    }
    // An action on the board («el contacto de los primeros 3») acts on the selection.
    // A question that points back («¿y de eso quién vende más?») or goes on from the
    // conversation («va, y ¿quiénes facturan más?») is about the session's market.
    if req.has_action() || !(points_back(&folded) || goes_on(&folded)) {
        return req.clone();
    }
    let mut out = req.clone();
    fill(&mut out, facts);
    out
}

/// `req` completed from the ledger when the message refines the session's request;
/// `None` when it is a request of its own (or there is nothing to recall).
/// `constraint`: the message names a constraint the grammar does not carry (a size,
/// an amount, a time window: «pero que sean medianas»).
pub fn recall(
    req: &Request,
    facts: &FactLedger,
    message: &str,
    constraint: bool,
) -> Option<Request> {
    let folded = fold(message);
    if asks_something_else(req, &folded) {
        return None;
    }
    // «quita los de CDMX»: the session's places without the ones named.
    if req.removes_places {
        let mut out = req.clone();
        let mut dropped = std::mem::take(&mut out.states);
        // «quita Coahuila y pon Tamaulipas»: the last places named join instead.
        let swapped = dropped.split_off(dropped.len().saturating_sub(req.swapped_in));
        out.state = None;
        out.region = None;
        fill(&mut out, facts);
        // «ya no quiero las del Edomex, nomás CDMX»: only the places put in stay.
        if req.keeps_last_place && !swapped.is_empty() {
            out.states.clear();
        } else {
            out.states.retain(|s| !dropped.contains(s));
        }
        for s in swapped {
            if !out.states.contains(&s) && out.states.len() < MAX_STATES {
                out.states.push(s);
            }
        }
        out.state = out.states.first().cloned();
        if out.state.is_none() || (out.giro.is_none() && out.query.is_none()) {
            return None;
        }
        out.search_cue = true;
        out.small_talk = None;
        return Some(out);
    }
    // «agrega Oaxaca también»: the session's places and the ones named.
    if req.adds_places {
        let mut out = req.clone();
        let added = std::mem::take(&mut out.states);
        out.state = None;
        out.region = None;
        fill(&mut out, facts);
        for s in added {
            if !out.states.contains(&s) && out.states.len() < MAX_STATES {
                out.states.push(s);
            }
        }
        out.state = out.states.first().cloned();
        if out.giro.is_none() && out.query.is_none() {
            return None;
        }
        out.search_cue = true;
        out.small_talk = None;
        return Some(out);
    }
    let names_giro = req.giro.is_some() || req.query.is_some();
    // A back reference refines only when the message names no giro of its own: «los 5
    // mejores proveedores de limpieza» is a new request.
    let back = points_back(&folded) && !names_giro;
    // «dame 25», «muéstrame 30 porfa», «sale, pásame 12»: a short ask for a number of
    // the same, after an interjection or not.
    let asked = after_interjections(&folded);
    let give = asked.len() <= 4
        && asked.first().is_some_and(|w| {
            [
                "dame",
                "pasame",
                "muestrame",
                "ensename",
                "traeme",
                "give",
                "show",
            ]
            .contains(w)
        })
        && bare_number(&folded).is_some();
    let cue = has_cue(&folded) || back || give;
    let mut out = req.clone();
    if out.quantity.is_none() && cue {
        out.quantity = bare_number(&folded);
    }
    let names_place = out.state.is_some() || !out.states.is_empty();
    let names_buyer = !out.buyers.is_empty() || out.sold_to_government;
    let names_any =
        names_giro || names_place || names_buyer || out.quantity.is_some() || constraint;
    // «¿y cuántas son en total?» names nothing but points back: the whole criterion.
    if !(names_any || (back && out.asks_count)) || (names_giro && !cue) {
        return None;
    }
    if !fill(&mut out, facts) {
        return None;
    }
    // The person asked for the change: it is a search, not an unclear message.
    out.search_cue = true;
    out.small_talk = None;
    Some(out)
}

/// Fills what `out` does not name from the ledger; true when anything was recalled.
/// The places the session's ledger holds, as the grammar names them.
fn ledger_places(facts: &FactLedger) -> Vec<(String, String)> {
    value(facts, FactField::Estado)
        .into_iter()
        .flat_map(|v| v.split(", "))
        .filter_map(|name| State::normalize(name, StateContext::Filter).ok())
        .map(|s| (s.name().to_owned(), s.name().to_owned()))
        .collect()
}

fn fill(out: &mut Request, facts: &FactLedger) -> bool {
    let names_giro = out.giro.is_some() || out.query.is_some();
    let names_place = out.state.is_some() || !out.states.is_empty();
    let names_buyer = !out.buyers.is_empty() || out.sold_to_government;
    let mut recalled = false;
    if !names_giro {
        if let Some(v) = value(facts, FactField::Giro) {
            let folded_v = fold(v);
            match Giro::ALL.iter().find(|g| fold(g.label()) == folded_v) {
                Some(g) => out.giro = Some((g.key().to_owned(), g.label().to_owned())),
                None => out.query = Some(v.to_owned()),
            }
            recalled = true;
        }
    }
    if !names_place {
        let states = ledger_places(facts);
        if !states.is_empty() {
            out.state = states.first().cloned();
            out.states = states;
            recalled = true;
        }
    }
    if !names_buyer {
        match value(facts, FactField::Comprador) {
            Some(GOVERNMENT) => {
                out.sold_to_government = true;
                recalled = true;
            }
            Some(v) => {
                out.buyers = v.split(", ").map(str::to_owned).collect();
                recalled = true;
            }
            None => {}
        }
    }
    if out.quantity.is_none() && !out.asks_count {
        if let Some(n) = value(facts, FactField::Cantidad).and_then(|v| v.parse().ok()) {
            out.quantity = Some(n);
            recalled = true;
        }
    }
    recalled
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
