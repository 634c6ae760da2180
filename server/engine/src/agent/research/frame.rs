//! What a research run looks for (its criterion): read from the brief by the grammar,
//! planned by the model, steered by the person. A model's plan is never trusted: each
//! filter it proposes is looked up in the catalogues (giros, the 32 states, the federal
//! buyers); an unknown value is rejected and the run keeps what the brief said.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::agent::director::grammar::{self, Request};
use crate::agent::director::vocab::CatalogVocabulary;
use crate::base::catalog::scian::Giro;
use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text::fold;
use crate::market::generator::BUYERS;

/// What the run looks for, from the brief and later steering.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// (giro key, display name).
    pub giro: Option<(String, String)>,
    /// (filter value, display name).
    pub state: Option<(String, String)>,
    pub buyers: Vec<String>,
}

/// The filters a model's plan named that the catalogues do not know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rejected {
    pub giro: bool,
    pub state: bool,
    pub buyer: bool,
    /// A filter the phases do not search by (or a value that is not text).
    pub other: bool,
}

impl Rejected {
    pub fn any(&self) -> bool {
        self.giro || self.state || self.buyer || self.other
    }

    /// How many filters were dropped.
    pub fn count(&self) -> usize {
        [self.giro, self.state, self.buyer, self.other]
            .iter()
            .filter(|on| **on)
            .count()
    }

    /// «el giro y el estado» — what was dropped, in words (never the model's values).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.giro {
            parts.push("el giro");
        }
        if self.state {
            parts.push("el estado");
        }
        if self.buyer {
            parts.push("el comprador");
        }
        if self.other {
            parts.push("un filtro que las fases no usan");
        }
        match parts.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} y {last}", rest.join(", ")),
        }
    }

    /// The rejected filters by name, for the run's record.
    pub fn names(&self) -> Vec<String> {
        [
            (self.giro, "giro"),
            (self.state, "state"),
            (self.buyer, "buyer"),
            (self.other, "other"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| (*n).to_owned())
        .collect()
    }
}

impl Frame {
    pub fn from_request(r: &Request) -> Frame {
        Frame {
            giro: r.giro.clone(),
            state: r.state.clone(),
            buyers: r.buyers.clone(),
        }
    }

    /// The brief as the grammar reads it (the deterministic framing).
    pub fn of_text(text: &str) -> Frame {
        Frame::from_request(&grammar::parse(text, &CatalogVocabulary))
    }

    /// Steering overrides what it names and keeps the rest.
    pub fn steered(&self, r: &Request) -> Frame {
        Frame {
            giro: r.giro.clone().or_else(|| self.giro.clone()),
            state: r.state.clone().or_else(|| self.state.clone()),
            buyers: if r.buyers.is_empty() {
                self.buyers.clone()
            } else {
                r.buyers.clone()
            },
        }
    }

    /// A model's plan (the `filters` of the search it proposed) over `base`: each
    /// known value replaces base's, an unknown one is rejected and base's stays, and
    /// a filter the plan leaves out keeps base's (a plan cannot drop what the person
    /// asked for).
    pub fn planned(base: &Frame, filters: &Map<String, Value>) -> (Frame, Rejected) {
        let mut frame = base.clone();
        let mut rejected = Rejected::default();
        for (key, value) in filters {
            match (key.as_str(), value.as_str()) {
                ("giro", Some(v)) => match Giro::parse(v) {
                    Ok(g) => frame.giro = Some((g.key().to_owned(), g.label().to_owned())),
                    Err(_) => rejected.giro = true,
                },
                ("state", Some(v)) => match State::normalize(v, StateContext::Filter) {
                    Ok(s) => frame.state = Some((s.name().to_owned(), s.name().to_owned())),
                    Err(_) => rejected.state = true,
                },
                ("buyer", Some(v)) => match known_buyer(v) {
                    Some(b) => frame.buyers = vec![b],
                    None => rejected.buyer = true,
                },
                ("has_awards", Some(_) | None) if value.is_boolean() => {}
                ("giro", None) => rejected.giro = true,
                ("state", None) => rejected.state = true,
                ("buyer", None) => rejected.buyer = true,
                _ => rejected.other = true,
            }
        }
        (frame, rejected)
    }

    pub fn award_filters(&self) -> Map<String, Value> {
        let mut f = Map::new();
        if let Some((key, _)) = &self.giro {
            f.insert("giro".into(), json!(key));
        }
        if let Some((_, name)) = &self.state {
            f.insert("state".into(), json!(name));
        }
        if let Some(buyer) = self.buyers.first() {
            f.insert("buyer".into(), json!(buyer));
        }
        f
    }

    pub fn supplier_filters(&self) -> Map<String, Value> {
        let mut f = self.award_filters();
        if !f.contains_key("buyer") {
            f.insert("has_awards".into(), json!(true));
        }
        f
    }

    /// "Proveedores de insumos médicos en Nuevo León que le venden a gobierno" (no digits).
    pub fn describe(&self) -> String {
        let mut s = "Proveedores".to_owned();
        if let Some((_, label)) = &self.giro {
            s.push_str(&format!(" de {}", label.to_lowercase()));
        }
        if let Some((_, name)) = &self.state {
            s.push_str(&format!(" en {name}"));
        }
        match self.buyers.first() {
            Some(b) => s.push_str(&format!(" que le venden a {b}")),
            None => s.push_str(" que le venden a gobierno"),
        }
        s
    }
}

/// A federal buyer by abbreviation or full name, as the catalogue spells its
/// abbreviation.
fn known_buyer(value: &str) -> Option<String> {
    let f = fold(value);
    BUYERS
        .iter()
        .find(|(abbr, name)| fold(abbr) == f || fold(name) == f)
        .map(|(abbr, _)| (*abbr).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_plan_with_known_values_replaces_the_brief() {
        let base = Frame::of_text("insumos médicos en Nuevo León");
        let (f, r) = Frame::planned(
            &base,
            &filters(
                json!({"giro": "Empaque", "state": "jal", "buyer": "imss", "has_awards": true}),
            ),
        );
        assert!(!r.any());
        assert_eq!(f.giro.unwrap().0, "empaque");
        assert_eq!(f.state.unwrap().0, "Jalisco");
        assert_eq!(f.buyers, vec!["IMSS".to_owned()]);
    }

    #[test]
    fn unknown_values_are_rejected_and_the_brief_stays() {
        let base = Frame::of_text("insumos médicos en Nuevo León");
        let (f, r) = Frame::planned(
            &base,
            &filters(
                json!({"giro": "astronautas", "state": "Atlántida", "buyer": "NASA", "min_amount": 5}),
            ),
        );
        assert!(r.giro && r.state && r.buyer && r.other);
        assert_eq!(f, base);
        assert_eq!(
            r.describe(),
            "el giro, el estado, el comprador y un filtro que las fases no usan"
        );
        // Leaving a filter out keeps the brief's.
        let (f, r) = Frame::planned(&base, &Map::new());
        assert_eq!((f, r.any()), (base, false));
    }
}
