//! Stage 3a of the director's interpreter: the place gazetteers. A message's tokens are
//! scanned left to right, longest phrase first, against
//! - the regions of `gazetteer` (documented sets of states),
//! - the 32 states and their variants (through the one normaliser,
//!   `State::normalize`), with a typo allowed on names of seven letters or more,
//! - every municipality of INEGI's catalogue (`data/municipios.csv`: name, state code)
//!   plus a few city names that are not municipality names (Cancún, Ciudad Juárez…).
//!
//! A city resolves to its state only when its name is unambiguous across states (or
//! one of its states is also named); otherwise it is reported as ambiguous and Luna
//! asks which state. A municipality needs a place cue before it («en», «de», «zona»…)
//! and never matches a common Spanish word (`COMMON_WORDS`), so «proveedores de madera»
//! is not Madera, Chihuahua.
//!
//! The names themselves (regions, city aliases, demonyms, big cities, common words)
//! live in `gazetteer`; this module reads them.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text::fold;

use super::gazetteer::{BIG_CITIES, CITY_ALIASES, COMMON_WORDS, DEMONYMS, REGIONS};
use super::restate::TAKE_BACK;
use super::words::{near, Token};

/// The most states one request carries (`states[]` in the market tools).
pub const MAX_STATES: usize = 5;

/// The state a demonym names, in any number and gender: the word itself, without a
/// plural «s»/«es», and with a final «a» read as «o» («poblanas» → «poblano»).
fn demonym(word: &str) -> Option<State> {
    let named = |w: &str| DEMONYMS.iter().find(|(d, _)| *d == w).map(|(_, s)| *s);
    let bare = [Some(word), word.strip_suffix('s'), word.strip_suffix("es")];
    bare.into_iter().flatten().find_map(|w| {
        named(w).or_else(|| {
            w.strip_suffix('a')
                .and_then(|stem| named(&format!("{stem}o")))
        })
    })
}

/// Words before a municipality that mark it as a place.
const CUES: &[&str] = &[
    "en",
    "de",
    "del",
    "por",
    "desde",
    "para",
    "zona",
    "area",
    "cerca",
    "rumbo",
    "hacia",
    "alrededor",
    "alrededores",
    "y",
    "o",
    "contra",
    "vs",
    // English mixed in: «companies near Ciudad Juárez», «in Monterrey».
    "near",
    "in",
    "around",
    "ciudad",
    "cd",
    // «suma Guadalajara», «quita Monterrey»: adding or taking out a place.
    "suma",
    "sumale",
    "agrega",
    "agregale",
    "incluye",
    "anade",
    "quita",
    "quitale",
    "sin",
    "menos",
    "excepto",
];

/// Short state abbreviations people type (the normaliser knows them; in a sentence only
/// these, which are not Spanish words, count).
const ABBREVIATIONS: &[&str] = &[
    "nl", "qro", "gto", "slp", "bcs", "ags", "chih", "coah", "tamps", "yuc", "qroo", "jal", "mich",
    "zac", "dgo", "hgo", "tlax", "oax", "chis", "df", "bc", "edomex", "cdmx",
];

/// What the place gazetteers found in one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// Every state named, in order, without repeats (at most `MAX_STATES`).
    pub states: Vec<State>,
    /// The region named, if any (its folded name).
    pub region: Option<String>,
    /// A city that exists in several states, none of them named: (city, its states).
    pub ambiguous: Option<(String, Vec<State>)>,
    /// Token ranges consumed by places (so they are not read as a giro or a query).
    pub spans: Vec<(usize, usize)>,
}

fn municipalities() -> &'static HashMap<String, Vec<State>> {
    static MAP: OnceLock<HashMap<String, Vec<State>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<String, Vec<State>> = HashMap::new();
        let mut heads: HashMap<String, Vec<State>> = HashMap::new();
        let put = |m: &mut HashMap<String, Vec<State>>, key: String, s: State| {
            let e = m.entry(key).or_default();
            if !e.contains(&s) {
                e.push(s);
            }
        };
        for line in include_str!("../../../data/municipios.csv").lines() {
            let Some((name, code)) = line.rsplit_once(',') else {
                continue;
            };
            let Some(state) = code.trim().parse().ok().and_then(State::from_code) else {
                continue;
            };
            let name = fold(name);
            // «Naucalpan de Juárez» is said «Naucalpan».
            if let Some((head, _)) = name.split_once(" de ") {
                if head.len() >= 5 {
                    put(&mut heads, head.to_owned(), state);
                }
            }
            put(&mut map, name, state);
        }
        // «Tlalnepantla» is Tlalnepantla de Baz (Estado de México) as well as
        // Tlalnepantla (Morelos): a head adds its states to a name's.
        for (head, states) in heads {
            for s in states {
                put(&mut map, head.clone(), s);
            }
        }
        for (alias, state) in CITY_ALIASES {
            map.insert((*alias).to_owned(), vec![*state]);
        }
        for word in COMMON_WORDS {
            map.remove(*word);
        }
        map
    })
}

fn region(phrase: &str) -> Option<&'static [State]> {
    REGIONS
        .iter()
        .find(|(name, _)| *name == phrase)
        .map(|(_, states)| *states)
}

fn state(phrase: &str, words: usize) -> Option<State> {
    if phrase.len() < 4 && !(words == 1 && ABBREVIATIONS.contains(&phrase)) {
        return None;
    }
    if words == 1 && phrase.len() <= 5 && !ABBREVIATIONS.contains(&phrase) {
        // Short single words that are abbreviations in the catalogue («mor», «son»,
        // «ver») but words in a sentence.
        if State::ALL.iter().all(|s| fold(s.name()) != phrase) {
            return None;
        }
    }
    State::normalize(phrase, StateContext::Filter).ok()
}

/// A state name written with a typo («Jalsico», «Guanajuto»): names of seven letters
/// or more only.
fn state_with_typo(phrase: &str) -> Option<State> {
    if phrase.len() < 7 {
        return None;
    }
    State::ALL
        .iter()
        .copied()
        .find(|s| near(phrase, &fold(s.name())))
}

/// A big city written with a typo (seven letters or more: «pueblo» is not Puebla), as
/// the catalogue spells it.
fn big_city_with_typo(word: &str) -> Option<&'static str> {
    if word.len() < 7 {
        return None;
    }
    BIG_CITIES.iter().copied().find(|c| near(word, c))
}

/// Reads the places of a message. A correction between places keeps the places after
/// it («los de Monterrey… jk, en Coahuila» → Coahuila); every place word stays
/// consumed, so none is read as a giro.
pub fn find(tokens: &[Token]) -> Places {
    let all = scan(tokens);
    let corrected = tokens
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, t)| TAKE_BACK.contains(&t.word.as_str()))
        .map(|(cut, _)| cut)
        .find(|&cut| {
            all.spans.iter().any(|(_, end)| *end <= cut)
                && all.spans.iter().any(|(start, _)| *start > cut)
        });
    match corrected {
        Some(cut) => Places {
            spans: all.spans,
            ..scan(&tokens[cut + 1..])
        },
        None => all,
    }
}

fn scan(tokens: &[Token]) -> Places {
    let words: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
    let mut out = Places::default();
    // States in the order named: from regions, and named one by one (states, demonyms,
    // cities); cities wait until every state is known.
    let mut in_region: Vec<State> = Vec::new();
    // (where written, state), so cities resolved at the end keep their place.
    let mut named: Vec<(usize, State)> = Vec::new();
    let mut cities: Vec<(usize, String, Vec<State>)> = Vec::new();
    let add = |list: &mut Vec<State>, s: State| {
        if !list.contains(&s) {
            list.push(s);
        }
    };
    let mut i = 0;
    while i < words.len() {
        let mut matched = 0;
        // A place word before, or a place just named («en Toluca, Naucalpan y…»).
        let cued = i > 0
            && (CUES.contains(&words[i - 1]) || out.spans.last().is_some_and(|(_, end)| *end == i));
        for len in (1..=5.min(words.len() - i)).rev() {
            let phrase = words[i..i + len].join(" ");
            if let Some(states) = region(&phrase) {
                states.iter().for_each(|s| add(&mut in_region, *s));
                if !states.is_empty() {
                    out.region = Some(phrase);
                }
                matched = len;
                break;
            }
            if let Some(s) =
                state(&phrase, len).or_else(|| (len == 1).then(|| demonym(&phrase)).flatten())
            {
                named.push((i, s));
                matched = len;
                break;
            }
            // A city inside a region just named needs no cue: «el Bajío, en concreto
            // León, Qro y Ags».
            let in_named_region =
                |states: &&Vec<State>| states.iter().any(|s| in_region.contains(s));
            if let Some(states) = municipalities()
                .get(&phrase)
                .filter(|states| cued || in_named_region(states))
            {
                cities.push((i, phrase, states.clone()));
                matched = len;
                break;
            }
        }
        if matched == 0 {
            // «nuevo loen», «san luis potoci»: a name of two or three words with a typo.
            let long_typo = (2..=3.min(words.len() - i))
                .rev()
                .find_map(|len| state_with_typo(&words[i..i + len].join(" ")).map(|s| (s, len)));
            if let Some((s, len)) = long_typo {
                named.push((i, s));
                matched = len;
            } else if let Some(s) = state_with_typo(words[i]) {
                named.push((i, s));
                matched = 1;
            } else if let Some(city) = cued.then(|| big_city_with_typo(words[i])).flatten() {
                if let Some(states) = municipalities().get(city) {
                    cities.push((i, city.to_owned(), states.clone()));
                    matched = 1;
                }
            }
        }
        if matched > 0 {
            out.spans.push((i, i + matched));
            i += matched;
        } else {
            i += 1;
        }
    }
    // Cities in one state first, so a city in several states resolves against them
    // too («Toluca, Naucalpan y Tlalnepantla» is the Estado de México's).
    for (at, _, states) in &cities {
        if let [one] = states.as_slice() {
            named.push((*at, *one));
        }
    }
    named.sort_by_key(|(at, _)| *at);
    let mut in_order: Vec<State> = Vec::new();
    for (_, s) in named {
        add(&mut in_order, s);
    }
    for (_, city, states) in cities {
        if states.len() > 1
            && !states
                .iter()
                .any(|s| in_order.contains(s) || in_region.contains(s))
            && out.ambiguous.is_none()
        {
            out.ambiguous = Some((city, states));
        }
    }
    // «la frontera: Tijuana, Juárez y Reynosa»: places named inside a region narrow it.
    let narrowed = !in_order.is_empty() && in_order.iter().all(|s| in_region.contains(s));
    let all = if narrowed {
        in_order
    } else {
        in_region.into_iter().chain(in_order).collect()
    };
    for s in all {
        if !out.states.contains(&s) && out.states.len() < MAX_STATES {
            out.states.push(s);
        }
    }
    out
}

#[cfg(test)]
#[path = "places_tests.rs"]
mod tests;
