//! The grammar of Spanish commercial requests the local director understands.
//!
//! Examples it reads (accents and case do not matter):
//! - «Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno»
//!   → quantity 40, giro empaque, state Jalisco, sold to government.
//! - «Guárdamelos» / «guárdalos en el CRM» → save the selection.
//! - «consígueme el correo de los 10 mejores» → quote contacts for the top 10.
//! - «ármame una secuencia de tres correos» → draft a 3-step sequence.
//! - «¿cuántos proveedores de limpieza hay en Nuevo León?» → an exact count.
//! - «¿cuántos créditos me quedan?» → usage.
//! - «deja una nota: los de empaque rara vez publican RFC» → a note for the team.
//! - «que le hayan vendido al IMSS» → a named buyer.
//! - «revisa si tienen marcas de riesgo» → risk screening.
//! - «mándalo a HubSpot» → a connector Luna does not have: ends in `limite`.
//! - «mueve los 5 mejores a Contactado» / «mueve la mejor a Propuesta» → a stage move in
//!   the saved list (several: a bulk card; one: a level-0 move with «deshacer»).
//! - «investiga el mercado de insumos médicos en Nuevo León y dime quién domina» → a
//!   long research run (`research_start`, then the `investigar` card).
//! - «compara empaque en Jalisco contra Nuevo León» → a comparison of two segments
//!   (states, or buyers: «lo que le compran el IMSS y el ISSSTE»).
//!
//! Giro and state are looked up through a `Vocabulary`, so the grammar stays independent
//! of how catalogues are stored.

use serde::{Deserialize, Serialize};

use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text::fold;

use super::edits::{adds, removes, restricts, swapped_in};
use super::intent::{self, SmallTalk};
use super::places::Places;
use super::words::{self, Token};

/// Catalogue lookups the grammar needs. Inputs are folded text.
pub trait Vocabulary {
    /// The first state named in `text`: (canonical code, display name).
    fn find_state(&self, text: &str) -> Option<(String, String)>;
    /// The first giro named in `text`: (SCIAN prefix, display name).
    fn find_giro(&self, text: &str) -> Option<(String, String)>;
    /// Every giro named in the tokens outside the place spans, in order. By default the
    /// first only.
    fn find_giros_in(
        &self,
        text: &str,
        tokens: &[Token],
        skip: &[(usize, usize)],
    ) -> Vec<(String, String)> {
        self.find_giro_in(text, tokens, skip).into_iter().collect()
    }
    /// Government buyers named in `text` (display names).
    fn find_buyers(&self, text: &str) -> Vec<String>;
    /// Every place named (states, cities, regions). By default the first state only.
    fn find_places(&self, text: &str, _tokens: &[Token]) -> Places {
        let states = self
            .find_state(text)
            .and_then(|(_, name)| State::normalize(&name, StateContext::Filter).ok())
            .into_iter()
            .collect();
        Places {
            states,
            ..Places::default()
        }
    }
    /// The giro named in the tokens outside the place spans. By default `find_giro`.
    fn find_giro_in(
        &self,
        text: &str,
        _tokens: &[Token],
        _skip: &[(usize, usize)],
    ) -> Option<(String, String)> {
        self.find_giro(text)
    }
}

/// Everything the director understood from one message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub quantity: Option<u32>,
    pub giro: Option<(String, String)>,
    pub state: Option<(String, String)>,
    pub sold_to_government: bool,
    pub buyers: Vec<String>,
    pub save: bool,
    pub contacts_top: Option<u32>,
    pub sequence_steps: Option<u32>,
    pub note: Option<String>,
    pub asks_count: bool,
    pub asks_usage: bool,
    pub risk_screen: bool,
    /// An outside system Luna cannot reach in this version (HubSpot, Notion, Gmail…).
    pub connector: Option<String>,
    /// "send it now": sending is never a chat action.
    pub send_now: bool,
    /// A long research run: «investiga…», «quién domina…».
    #[serde(default)]
    pub research: bool,
    /// «mueve los 5 mejores a Contactado»: a stage move in the saved list.
    #[serde(default)]
    pub stage_move: Option<StageMove>,
    /// «compara…», «… contra …»: segments side by side.
    pub compare: bool,
    /// Every state named, in order: by name, through a city or a region (at most 5;
    /// also the segments of a comparison).
    pub states: Vec<(String, String)>,
    /// The region named («sureste», «Bajío»…), folded.
    #[serde(default)]
    pub region: Option<String>,
    /// A city in several states, none named: (city, candidate states).
    #[serde(default)]
    pub ambiguous_city: Option<(String, Vec<String>)>,
    /// A kind of company that is no giro of the catalogue: searched as free text.
    #[serde(default)]
    pub query: Option<String>,
    /// Greeting, thanks or a help question.
    #[serde(default)]
    pub small_talk: Option<SmallTalk>,
    /// The message asks for companies or records (a search verb or noun).
    #[serde(default)]
    pub search_cue: bool,
    /// Every giro named, in order (the segments of a comparison of giros).
    #[serde(default)]
    pub giros: Vec<(String, String)>,
    /// What a question about credits asks for.
    #[serde(default)]
    pub usage_focus: Option<super::acts::UsageFocus>,
    /// RFCs written in the message: a risk screen of exactly these.
    #[serde(default)]
    pub rfcs: Vec<String>,
    /// The stage a save or a sequence's audience names («en la etapa Propuesta»).
    #[serde(default)]
    pub stage_named: Option<String>,
    /// A correction of what the team knows.
    #[serde(default)]
    pub knowledge_edit: bool,
    /// «¿qué tenemos documentado sobre…?»: a question about what the team knows that
    /// names no market (no giro, no place).
    pub knowledge_ask: bool,
    /// «fusiona esa nota»: a merge into Knowledge.
    #[serde(default)]
    pub merge: bool,
    /// «quita los de CDMX»: the places named leave the criteria.
    #[serde(default)]
    pub removes_places: bool,
    /// «agrega Oaxaca también»: the places named join the criteria's places.
    #[serde(default)]
    pub adds_places: bool,
    /// «ya no quiero los de Edomex, nomás CDMX», «Nayarit sobra, déjalo en Jalisco y
    /// Colima»: a removal whose places put in (`swapped_in`) are the only ones that stay.
    #[serde(default)]
    pub keeps_last_place: bool,
    /// «las dos primeras», «los 5 de hasta arriba»: the first N of the selection an
    /// action on it takes (a risk check).
    #[serde(default)]
    pub first: Option<u32>,
    /// «el correo de la tercera», «la número uno»: the one company of the selection
    /// an action on it takes (contacts), when no first N was said.
    #[serde(default)]
    pub one: Option<u32>,
    /// «quita Coahuila y pon Tamaulipas»: in a removal, how many of the places named
    /// (the last ones) come after a verb of adding and join instead.
    #[serde(default)]
    pub swapped_in: usize,
}

pub use super::moves::StageMove;

/// «los primeros 8», «los mejores 5»: a number right after one of `nouns`.
pub(super) fn number_after(words: &[&str], nouns: &[&str]) -> Option<u32> {
    words.windows(2).find_map(|w| {
        nouns
            .iter()
            .any(|n| w[0].starts_with(n))
            .then(|| number(w[1]))
            .flatten()
    })
}

impl Request {
    /// True when the message states a search criterion of its own.
    pub fn has_criterion(&self) -> bool {
        self.giro.is_some()
            || self.state.is_some()
            || !self.states.is_empty()
            || self.query.is_some()
            || !self.buyers.is_empty()
            || self.sold_to_government
    }

    /// True when the message asks for an action on the board or the team's records:
    /// save, contacts, a sequence, a note, a comparison, a stage move.
    pub fn has_action(&self) -> bool {
        self.save
            || self.contacts_top.is_some()
            || self.sequence_steps.is_some()
            || self.note.is_some()
            || self.compare
            || self.stage_move.is_some()
            || self.knowledge_edit
            || self.knowledge_ask
            || self.merge
            || !self.rfcs.is_empty()
    }
}

pub(super) use super::words::number;

/// A number right before a word that names a giro on its own: «5 constructoras»,
/// «20 farmacéuticas», «media docena de fleteras» count companies of that giro.
fn number_before_giro(vocab: &dyn Vocabulary, tokens: &[Token]) -> Option<u32> {
    tokens.iter().enumerate().find_map(|(i, t)| {
        let n = number(&t.word).filter(|n| (1..=500).contains(n))?;
        // «media docena de fleteras» (→ «6 docena de fleteras»): past the unit.
        let next = tokens[i + 1..]
            .iter()
            .position(|w| !["docena", "docenas", "par", "pares", "de"].contains(&w.word.as_str()))
            .map(|skip| i + 1 + skip)?;
        vocab
            .find_giro_in("", &tokens[next..=next], &[])
            .is_some()
            .then_some(n)
    })
}

/// The number right before any of `nouns` within the next three words, e.g.
/// "40 fabricantes", "tres correos", "los 10 mejores".
pub(super) fn number_before(words: &[&str], nouns: &[&str]) -> Option<u32> {
    for (i, w) in words.iter().enumerate() {
        if let Some(n) = number(w) {
            let window = &words[i + 1..(i + 4).min(words.len())];
            if window
                .iter()
                .any(|x| nouns.iter().any(|noun| x.starts_with(noun)))
            {
                return Some(n);
            }
        }
    }
    None
}

/// «¿a quién le conviene más venderle, a CFE o a PEMEX?», «which is bigger, qro or
/// gto?»: a comparative over two or more segments of one kind (buyers, states or
/// giros) set as alternatives is a comparison, whatever the verb.
fn weighs_segments(text: &str, segments: usize) -> bool {
    const COMPARATIVES: &[&str] = &[
        " mas grande",
        " mas grandes",
        " mayor ",
        " conviene",
        " mejor ",
        " mejores ",
        " bigger",
        " larger",
        " better",
        " more ",
        " mas dinero",
        " mas lana",
        " mas mercado",
        " mas chico",
        " menor ",
        " smaller",
        // What pays off more: «¿qué deja más…?», «¿cuál paga más…?», «pays more».
        " deja mas",
        " dejan mas",
        " paga mas",
        " pagan mas",
        " rinde mas",
        " mas rentable",
        " pays more",
        // Who buys or sells more, between the alternatives named.
        " compra mas",
        " compran mas",
        " vende mas",
        " venden mas",
        " gasta mas",
    ];
    let padded = format!(" {text} ");
    segments >= 2 && has_any(&padded, COMPARATIVES) && has_any(&padded, &[" o ", " or ", " u "])
}

fn has_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| text.contains(n))
}

/// A risk screen, however it is asked: a word for the marks themselves («riesgo»,
/// «69-B», «boletinada», «factureras», «empresa fantasma», «quemada»), or trouble
/// («problemas», «broncas», «pedos», «líos») with the tax authority («SAT»,
/// «Hacienda»).
fn risk_screen(text: &str, words: &[&str]) -> bool {
    let marks = has_any(
        text,
        &[
            "riesgo",
            "69-b",
            "69 b",
            "lista negra",
            "factureras",
            "sancion",
            "boletinad",
            "fantasma",
            "operaciones simuladas",
            "quemad",
            "efos",
        ],
    );
    let trouble = words.iter().any(|w| {
        [
            "problema",
            "bronca",
            "pedo",
            "lio",
            "broncas",
            "pedos",
            "lios",
            "problemas",
            "issue",
        ]
        .contains(w)
    });
    // «pásalas por el filtro del SAT», «revísalas con Hacienda».
    let checked = words.iter().any(|w| {
        ["filtr", "revis", "chec", "valid"]
            .iter()
            .any(|v| w.starts_with(v))
    });
    let tax = words
        .iter()
        .any(|w| ["sat", "hacienda", "shcp", "fiscal", "fiscales", "impuestos"].contains(w));
    marks || ((trouble || checked) && tax)
}

/// Reads one message.
pub fn parse(message: &str, vocab: &dyn Vocabulary) -> Request {
    // «desde 2023.. no, desde 2024»: what was taken back is not read at all.
    let message = &super::restate::restated(message);
    let text = fold(message);
    let words: Vec<&str> = text.split(' ').collect();
    let tokens = words::tokens(message);
    // The same words with shorthand written out and quantities said in words as
    // numbers («una docena» → «12 docena»), for counts.
    let counted: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
    let places = vocab.find_places(&text, &tokens);
    // Every giro named, in order; the first is the request's giro (one scan for both).
    let giros = vocab.find_giros_in(&text, &tokens, &places.spans);
    let giro = giros.first().cloned();
    let query = if giro.is_none() {
        super::lexicon::free_query(&tokens, &places.spans)
    } else {
        None
    };
    let named = |s: &State| (s.name().to_owned(), s.name().to_owned());
    let names_no_market = giro.is_none() && places.states.is_empty();

    let acts = super::acts::read(message, &tokens);
    // «¿cuánto ha gastado el ISSSTE en limpieza?» is what a buyer spent, not the
    // person's credits.
    let usage_focus = acts.usage.filter(|_| vocab.find_buyers(&text).is_empty());
    let asks_usage = usage_focus.is_some();
    // «el correo de los 10 mejores», «el contacto de los primeros 3»; with no number,
    // the first companies of the selection (the planner caps how many).
    let contacts_top = acts.contacts.then(|| {
        number_before(
            &counted,
            &["mejor", "primer", "prioritari", "top", "best", "first"],
        )
        .or_else(|| number_after(&counted, &["top", "first", "primer"]))
        .or_else(|| number_before(&counted, &["correo", "contacto", "email", "mail"]))
        .unwrap_or(10)
    });
    let first = number_before(&counted, &["primer", "mejor", "arriba", "first", "top"]);
    let sequence_steps = acts.sequence_steps;
    let note = acts.note.clone();
    let buyers = vocab.find_buyers(&text);
    let compare = has_any(
        &text,
        &[
            "compara",
            "comparar",
            "comparame",
            "comparativo",
            "diferencia entre",
            "frente a",
            "lado a lado",
            "side by side",
            " contra ",
            " versus ",
            " vs ",
        ],
    ) || weighs_segments(
        &text,
        [buyers.len(), places.states.len(), giros.len()]
            .into_iter()
            .max()
            .unwrap_or(0),
    );
    Request {
        // «guarda las primeras 5 en Propuesta» is a save into a stage, not a move.
        // «pásalas por el filtro del SAT» checks them; it moves nothing.
        stage_move: super::moves::read(&text, &words)
            .filter(|_| !acts.save && !risk_screen(&text, &words)),
        compare,
        states: places.states.iter().map(named).collect(),
        region: places.region.clone(),
        ambiguous_city: places.ambiguous.as_ref().map(|(city, states)| {
            (
                city.clone(),
                states.iter().map(|s| s.name().to_owned()).collect(),
            )
        }),
        query,
        small_talk: intent::small_talk(&tokens),
        search_cue: intent::search_cue(&tokens),
        quantity: number_before(
            &counted,
            &[
                super::kinds::COMPANY_NOUNS,
                &["productor", "prospecto", "cliente"],
            ]
            .concat(),
        )
        .or_else(|| number_before_giro(vocab, &tokens))
        .or_else(|| words::cap(&counted)),
        giro,
        state: places.states.first().map(named),
        sold_to_government: has_any(
            &text,
            &[
                "gobierno",
                "sector publico",
                "dependencia",
                "adjudicacion",
                "licitacion",
                "vendido a",
                "contratos con",
                "con contratos",
                "historial de contratos",
                "con adjudicaciones",
                "ganado contratos",
                "ganaron contratos",
                "tenido contratos",
                "tengan contratos",
                "tienen contratos",
                "sell to government",
                "sold to government",
                "government",
                "gov contracts",
                "gov",
                "public sector",
            ],
        ),
        buyers,
        save: acts.save,
        contacts_top,
        sequence_steps,
        note,
        asks_count: !asks_usage
            && has_any(
                &text,
                &[
                    "cuantos",
                    "cuantas",
                    "cuanto hay",
                    "que tantos",
                    "que tantas",
                    "q tantos",
                    "q tantas",
                    "el total de",
                    "numero de",
                    "numero total",
                    "cantidad de",
                    "how many",
                ],
            ),
        asks_usage,
        usage_focus,
        giros,
        rfcs: acts.rfcs.clone(),
        stage_named: acts.stage.clone(),
        knowledge_edit: acts.knowledge_edit,
        knowledge_ask: acts.knowledge_ask && names_no_market,
        merge: acts.merge,
        removes_places: removes(&text, &tokens) && !places.states.is_empty(),
        keeps_last_place: removes(&text, &tokens) && restricts(&tokens),
        adds_places: adds(&text)
            && !removes(&text, &tokens)
            && !acts.save
            && !places.states.is_empty(),
        swapped_in: if removes(&text, &tokens) {
            swapped_in(&tokens)
        } else {
            0
        },
        first,
        one: first
            .is_none()
            .then(|| super::words::one_company(&text, &words))
            .flatten(),
        risk_screen: risk_screen(&text, &words),
        connector: acts.connector.clone(),
        research: acts.research,
        send_now: has_any(
            &text,
            &[
                "enviala ya",
                "mandala ya",
                "envialo ya",
                "manda los correos",
                "envia los correos",
                "enviala ahora",
                "mandalos ya",
            ],
        ),
    }
}

#[cfg(test)]
#[path = "grammar_tests.rs"]
mod tests;
