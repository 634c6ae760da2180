//! The director's vocabulary, read from the catalogues: the 32 states (through the one
//! normaliser), the giros with their synonyms, and the federal buyers.

use crate::base::catalog::scian::Giro;
use crate::base::catalog::states::{State, StateContext};
use crate::market::generator::BUYERS;

use super::grammar::Vocabulary;
use super::places::{self, Places};
use super::words::Token;

/// Looks words up in the real catalogues.
#[derive(Debug, Clone, Copy, Default)]
pub struct CatalogVocabulary;

fn contains_phrase(words: &[&str], phrase: &str) -> bool {
    let target: Vec<&str> = phrase.split(' ').collect();
    !target.is_empty() && words.windows(target.len()).any(|w| w == target.as_slice())
}

/// How people name the buyers besides their acronyms (folded): «el Seguro Social», «la
/// Marina», «el Ejército», «Petróleos Mexicanos»…
const BUYER_NAMES: &[(&str, &str)] = &[
    ("seguro social", "IMSS"),
    ("el seguro", "IMSS"),
    ("la marina", "SEMAR"),
    ("secretaria de marina", "SEMAR"),
    ("armada de mexico", "SEMAR"),
    ("ejercito", "SEDENA"),
    ("defensa nacional", "SEDENA"),
    ("la defensa", "SEDENA"),
    ("petroleos mexicanos", "PEMEX"),
    ("comision federal de electricidad", "CFE"),
    ("la de luz", "CFE"),
    ("la de la luz", "CFE"),
    ("compania de luz", "CFE"),
    ("la petrolera", "PEMEX"),
    ("secretaria de salud", "SSA"),
    ("salud federal", "SSA"),
    ("educacion publica", "SEP"),
    ("secretaria de educacion", "SEP"),
    ("comunicaciones y transportes", "SCT"),
    ("sict", "SCT"),
    ("comision nacional del agua", "CONAGUA"),
    ("caminos y puentes", "CAPUFE"),
    ("aeropuerto de la ciudad de mexico", "GACM"),
    ("aeropuerto de la cdmx", "GACM"),
    ("aicm", "GACM"),
    ("trabajadores del estado", "ISSSTE"),
];

impl Vocabulary for CatalogVocabulary {
    fn find_state(&self, text: &str) -> Option<(String, String)> {
        let words: Vec<&str> = text.split(' ').collect();
        // Longest phrases first so "baja california sur" wins over "baja california".
        for len in (1..=5).rev() {
            for window in words.windows(len) {
                let phrase = window.join(" ");
                // Short tokens ("que", "mor", "son") are abbreviations in the catalogue
                // but ordinary words in a sentence: only longer phrases name a state.
                if phrase.len() < 4 {
                    continue;
                }
                if let Ok(state) = State::normalize(&phrase, StateContext::Filter) {
                    return Some((state.name().to_owned(), state.name().to_owned()));
                }
            }
        }
        None
    }

    fn find_giro(&self, text: &str) -> Option<(String, String)> {
        let words: Vec<&str> = text.split(' ').collect();
        Giro::ALL.iter().find_map(|giro| {
            giro.synonyms()
                .iter()
                .any(|syn| contains_phrase(&words, syn))
                .then(|| (giro.key().to_owned(), giro.label().to_owned()))
        })
    }

    fn find_places(&self, _text: &str, tokens: &[Token]) -> Places {
        places::find(tokens)
    }

    fn find_giro_in(
        &self,
        _text: &str,
        tokens: &[Token],
        skip: &[(usize, usize)],
    ) -> Option<(String, String)> {
        super::lexicon::find_giro(tokens, skip).map(|g| (g.key().to_owned(), g.label().to_owned()))
    }

    fn find_giros_in(
        &self,
        _text: &str,
        tokens: &[Token],
        skip: &[(usize, usize)],
    ) -> Vec<(String, String)> {
        super::lexicon::find_giros(tokens, skip)
            .into_iter()
            .map(|g| (g.key().to_owned(), g.label().to_owned()))
            .collect()
    }

    fn find_buyers(&self, text: &str) -> Vec<String> {
        let words: Vec<&str> = text.split(' ').collect();
        let mut found: Vec<(usize, &str)> = Vec::new(); // (where written, acronym)
        let named = BUYERS
            .iter()
            .map(|(abbr, _)| (crate::base::catalog::text::fold(abbr), *abbr))
            .chain(
                BUYER_NAMES
                    .iter()
                    .map(|(name, abbr)| ((*name).to_owned(), *abbr)),
            );
        for (phrase, abbr) in named {
            let target: Vec<&str> = phrase.split(' ').collect();
            if let Some(at) = words
                .windows(target.len())
                .position(|w| w == target.as_slice())
            {
                match found.iter_mut().find(|(_, a)| *a == abbr) {
                    Some(entry) => entry.0 = entry.0.min(at),
                    None => found.push((at, abbr)),
                }
            }
        }
        // In the catalogue's order, whatever name was used.
        found.sort_by_key(|(_, abbr)| BUYERS.iter().position(|(a, _)| a == abbr));
        found.into_iter().map(|(_, abbr)| abbr.to_owned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::director::grammar::parse;

    #[test]
    fn two_giros_are_both_found_in_the_order_written() {
        let r = parse(
            "diferencia entre limpieza y seguridad en cdmx",
            &CatalogVocabulary,
        );
        let keys: Vec<&str> = r.giros.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(keys, ["limpieza", "seguridad"]);
        assert!(r.compare);
    }

    #[test]
    fn the_catalogues_resolve_states_giros_and_buyers() {
        let r = parse(
            "Quiero 40 fabricantes de empaque en Jalisco que le hayan vendido al IMSS",
            &CatalogVocabulary,
        );
        assert_eq!(r.state.map(|s| s.0), Some("Jalisco".to_owned()));
        assert_eq!(r.giro.map(|g| g.0), Some("empaque".to_owned()));
        assert_eq!(r.buyers, vec!["IMSS".to_owned()]);
        let r = parse("proveedores de limpieza en CDMX", &CatalogVocabulary);
        assert_eq!(
            r.state.map(|s| s.0),
            Some(State::CiudadDeMexico.name().to_owned())
        );
        // The bare country is not a state.
        assert!(parse("empresas de México", &CatalogVocabulary)
            .state
            .is_none());
    }
}
