//! Stage 4c of the director's interpreter: stage moves of the saved selection
//! («mueve los 5 mejores a Contactado», «la segunda se cayó, márcala como perdida»,
//! «todas a contactado», «y el resto a Propuesta»), read from three parts:
//!
//! - **which companies**: an ordinal (one company: «la tercera», «la de hasta
//!   arriba», «la mejor»), the first N («los 5 mejores», «las primeras 6», «las 7 de
//!   arriba»), all («todas», a plural clitic: «muévelas»), the priorities, or the rest
//!   of an earlier move («el resto», «las demás»);
//! - **where to**: the words after the last « a », « como » or « en » («pásala a
//!   Ganado», «ponla como ganada»), else a stage word said anywhere («a la tercera ya
//!   le mandé propuesta, actualízala»); the planner matches it against the saved
//!   list's own stages by stem, so «ganada» finds «Ganado»;
//! - **a verb of moving or marking** (mueve, pasa, cambia, pon, marca, deja,
//!   actualiza, mete). Without one, only an explicit «which» with a stage word is a
//!   move («todas a contactado plis»).
//!
//! A move of one company named by its name is left to a model. To add a way of
//! saying it: a verb form in `VERBS`, a stage word in `STAGE_WORDS`, an ordinal in
//! `words::ORDINALS`.

use serde::{Deserialize, Serialize};

use super::grammar::{number_after, number_before};
use super::words::{one_company, ordinal};

/// Which companies of the selection go to which stage of the saved list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageMove {
    /// The stage as the person wrote it (folded); matched against the list's stages.
    pub stage: String,
    /// «los 5 mejores»: the first N (priorities first). `None` with `all` false and
    /// no `nth`: the priorities.
    pub top: Option<u32>,
    /// «muévelos», «todos»: every company of the selection.
    pub all: bool,
    /// «y el resto a Contactado»: the companies an earlier move of this conversation
    /// left where they were.
    #[serde(default)]
    pub rest: bool,
    /// «la tercera»: the one company at this place of the selection (1-based).
    #[serde(default)]
    pub nth: Option<u32>,
}

/// Verb forms of moving or marking, whole words (a clitic may follow the stem: the
/// prefixes end in `*`). «pásame», «cámbiame» give something to the person instead.
const VERBS: &[&str] = &[
    "muev*",
    "mueve*",
    "mover",
    "pasa*",
    "cambia*",
    "pon",
    "ponla",
    "ponlas",
    "ponlo",
    "ponlos",
    "marca",
    "marcala",
    "marcalas",
    "marcalo",
    "marcalos",
    "deja",
    "dejala",
    "dejalas",
    "dejalo",
    "dejalos",
    "actualiza",
    "actualizala",
    "actualizalas",
    "actualizalos",
    "mete",
    "metela",
    "metelas",
    "metelos",
    "move",
    "mark",
];
const NOT_VERBS: &[&str] = &[
    "pasame",
    "pasanos",
    "pasamelos",
    "pasamelas",
    "cambiame",
    "pasado",
    "pasada",
];

/// Words that name a pipeline stage by themselves (folded stems).
const STAGE_WORDS: &[&str] = &[
    "prospeccion",
    "contactad",
    "conversacion",
    "propuesta",
    "negociacion",
    "ganad",
    "perdid",
    "calificad",
    "cerrad",
];

const STOP: &[&str] = &[
    "y", "porfa", "por", "ya", "plis", "please", "que", "para", "con",
];

fn is_verb(w: &str) -> bool {
    !NOT_VERBS.contains(&w)
        && VERBS.iter().any(|v| match v.strip_suffix('*') {
            Some(prefix) => w.starts_with(prefix),
            None => w == *v,
        })
}

fn is_stage_word(w: &str) -> bool {
    STAGE_WORDS.iter().any(|s| w.starts_with(s))
}

/// The stage written after the last `marker` («pásala a Ganado» → «ganado»).
fn after(text: &str, marker: &str) -> Option<String> {
    let (_, rest) = format!(" {text} ")
        .rsplit_once(marker)
        .map(|(a, b)| (a.to_owned(), b.to_owned()))?;
    let stage: Vec<&str> = rest
        .split(' ')
        .filter(|w| !w.is_empty())
        .skip_while(|w| ["la", "etapa", "de", "el"].contains(w))
        .take_while(|w| !is_verb(w) && !STOP.contains(w))
        .take(3)
        .collect();
    (!stage.is_empty()).then(|| stage.join(" "))
}

/// Reads a stage move from the folded message and its words.
pub fn read(text: &str, words: &[&str]) -> Option<StageMove> {
    let padded = format!(" {text} ");
    let verb = words.iter().copied().find(|w| is_verb(w));
    let rest = [
        " el resto ",
        " los demas ",
        " las demas ",
        " los otros ",
        " las otras ",
    ]
    .iter()
    .any(|m| padded.contains(m));
    let top = number_before(
        words,
        &["mejor", "primer", "prioritari", "empresa", "arriba"],
    )
    .or_else(|| number_after(words, &["mejor", "primer", "top"]));
    let one = if top.is_none() {
        one_company(text, words)
    } else {
        None
    };
    let plural_clitic = verb.is_some_and(|v| v.ends_with("los") || v.ends_with("las"));
    let all_words = words.iter().any(|w| ["todos", "todas", "all"].contains(w));
    let priorities = text.contains("prioritari");
    let explicit = rest || top.is_some() || one.is_some() || all_words || priorities;
    if !(explicit || plural_clitic) {
        return None;
    }
    // The first marker, in this order, that is followed by a stage rather than by
    // the companies («a la tercera…»).
    let stage = [" a ", " como ", " etapa ", " to ", " en "]
        .iter()
        .filter_map(|m| {
            let stage = after(text, m)?;
            // «en» also says where companies are from or when: only a stage word.
            (*m != " en " || stage.split(' ').any(is_stage_word)).then_some(stage)
        })
        .find(|s| {
            s.split(' ').next().is_some_and(|w| {
                !["los", "las", "la", "el", "un", "una"].contains(&w)
                    && ordinal(w).is_none()
                    && w.parse::<u32>().is_err()
            })
        })
        .filter(|s| verb.is_some() || s.split(' ').any(is_stage_word))
        .or_else(|| {
            words
                .iter()
                .find(|w| is_stage_word(w))
                .map(|w| (*w).to_owned())
        })?;
    // Without a verb only an explicit set of companies and a stage word («todas a
    // contactado»), in a short message.
    if verb.is_none() && !(explicit && words.len() <= 8 && stage.split(' ').any(is_stage_word)) {
        return None;
    }
    Some(if rest {
        StageMove {
            stage,
            rest: true,
            ..StageMove::default()
        }
    } else if let Some(n) = one {
        StageMove {
            stage,
            nth: Some(n),
            top: Some(1).filter(|_| n == 1),
            ..StageMove::default()
        }
    } else {
        StageMove {
            stage,
            top,
            all: (plural_clitic || all_words) && top.is_none(),
            ..StageMove::default()
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::agent::director::grammar::parse;
    use crate::agent::director::vocab::CatalogVocabulary;

    use super::StageMove;

    fn mv(m: &str) -> Option<StageMove> {
        parse(m, &CatalogVocabulary).stage_move
    }

    /// A move to `stage` of: `top` N, `all`, the `rest`, or the `nth`.
    fn to(stage: &str, top: Option<u32>, all: bool, rest: bool, nth: Option<u32>) -> StageMove {
        StageMove {
            stage: stage.to_owned(),
            top,
            all,
            rest,
            nth,
        }
    }

    #[test]
    fn stage_moves_of_the_selection_are_understood() {
        let cases = [
            (
                "Mueve los 5 mejores a Contactado",
                to("contactado", Some(5), false, false, None),
            ),
            (
                "pasa los prioritarios a la etapa En conversación.",
                to("en conversacion", None, false, false, None),
            ),
            (
                "mueve la mejor a Propuesta",
                to("propuesta", Some(1), false, false, Some(1)),
            ),
            (
                "muévelos todos a Propuesta",
                to("propuesta", None, true, false, None),
            ),
            (
                "y el resto a contactado",
                to("contactado", None, false, true, None),
            ),
            (
                "los demás pásalos a Contactado",
                to("contactado", None, false, true, None),
            ),
            (
                "y las demás déjalas en Contactado",
                to("contactado", None, false, true, None),
            ),
            (
                "la segunda se cayó, márcala como perdida",
                to("perdida", None, false, false, Some(2)),
            ),
            (
                "cerramos con la primera!!! ponla como ganada",
                to("ganada", Some(1), false, false, Some(1)),
            ),
            (
                "la de hasta arriba ya va en propuesta, cámbiala",
                to("propuesta", Some(1), false, false, Some(1)),
            ),
            (
                "a la tercera ya le mandé propuesta, actualízala",
                to("propuesta", None, false, false, Some(3)),
            ),
            (
                "todas a contactado plis",
                to("contactado", None, true, false, None),
            ),
            (
                "las 7 de arriba ya les marqué, pásalas a contactado",
                to("contactado", Some(7), false, false, None),
            ),
            (
                "las primeras 6 ya están en pláticas, muévelas a En conversación",
                to("en conversacion", Some(6), false, false, None),
            ),
        ];
        for (m, expected) in cases {
            assert_eq!(mv(m), Some(expected), "{m}");
        }
        // Not a move of the selection: a named company, a search, contacts, a remark.
        for m in [
            "pasa a Envases Azteca a Propuesta",
            "Quiero 40 fabricantes de empaque en Jalisco",
            "consígueme el correo de los 10 mejores",
            "el resto de la lista está bien",
            "busca todas las constructoras en Jalisco",
            "deja una nota: la primera licitación del año sale en marzo",
        ] {
            assert_eq!(mv(m), None, "{m}");
        }
    }
}
