//! How a follow-up edits the session's places: takes some out («quita Nayarit»,
//! «Nayarit sobra», «sin los de Jalisco», «olvida Colima»), puts some in («agrega
//! Oaxaca también»), or both («quita Coahuila y pon Tamaulipas», «Nayarit sobra,
//! déjalo en Jalisco y Colima»).
//!
//! A removal is read from three kinds of words, not from whole phrases:
//! - a verb of taking out anywhere (`TAKE_OUT`, by prefix, or an exact form of
//!   «sacar»/«tirar» — not «sácame», which asks for contacts);
//! - a word that takes out what follows it (`BEFORE_PLACE`: «sin», «menos»,
//!   «excepto», «no quiero», «ya no»), only with a place right after it (past
//!   articles, before «en»/«con»), so «sin adeudos en Sonora» keeps Sonora;
//! - a word that takes out what precedes it (`AFTER_PLACE`: «sobra», «fuera», «no me
//!   sirve»), only with a place within the three words before it.
//!
//! The grammar applies a removal only when the message names places.

use super::words::Token;

/// Verbs of taking out, by prefix.
const TAKE_OUT: &[&str] = &[
    "quit", "elimin", "descart", "exclu", "borr", "olvid", "remov", "drop",
];

/// Exact forms of «sacar» and «tirar» that take something out.
const TAKE_OUT_EXACT: &[&str] = &[
    "saca", "sacale", "sacala", "sacalo", "sacalas", "sacalos", "tira", "tiralo", "tirala",
    "tiralas", "tiralos",
];

/// Words that take out the place right after them («sin Nayarit», «menos los de
/// Colima»); a two-word one is written with a space.
const BEFORE_PLACE: &[&str] = &[
    "sin",
    "menos",
    "excepto",
    "salvo",
    "except",
    "without",
    "no quiero",
    "ya no",
];

/// Words that take out the place right before them («Nayarit sobra», «Colima no me
/// sirve», «Nayarit fuera»).
const AFTER_PLACE: &[&str] = &[
    "sobra",
    "sobran",
    "fuera",
    "no me sirve",
    "no sirve",
    "no me sirven",
    "no sirven",
    "no me interesa",
    "no me interesan",
    "out",
];

/// Words of putting places in, after which the places named join in a removal.
const PUT: &[&str] = &[
    "pon", "ponle", "agrega", "agregale", "mete", "metele", "cambialo", "add",
];

/// Words after which the places named are the only ones that stay («Nayarit sobra,
/// déjalo en Jalisco y Colima», «ya no quiero las del Edomex, nomás CDMX»).
const RESTRICT: &[&str] = &[
    "deja",
    "dejalo",
    "dejala",
    "dejalos",
    "dejalas",
    "nomas",
    "solo",
    "solamente",
    "unicamente",
    "quedate",
    "only",
];

/// Where the last word of putting places in is, and whether it restricts.
fn last_put(tokens: &[Token]) -> Option<(usize, bool)> {
    tokens.iter().enumerate().rev().find_map(|(i, t)| {
        let w = t.word.as_str();
        if RESTRICT.contains(&w) {
            Some((i, true))
        } else {
            PUT.contains(&w).then_some((i, false))
        }
    })
}

/// Whether some words starting at `from` (at most `span`) name a place.
fn place_in(tokens: &[Token], from: usize, span: usize) -> bool {
    let to = (from + span).min(tokens.len());
    from < to && !super::places::find(&tokens[from..to]).states.is_empty()
}

/// Whether the words from `from` name a place before any other phrase starts: articles
/// are skipped («sin los de Jalisco»), and the place must come before «en», «con» or
/// «que», so «sin adeudos en Sonora» takes nothing out.
fn names_place_next(tokens: &[Token], from: usize) -> bool {
    const ARTICLES: &[&str] = &["los", "las", "el", "la", "de", "del", "a", "al"];
    const BREAKS: &[&str] = &["en", "con", "que", "q", "y"];
    let start = tokens[from.min(tokens.len())..]
        .iter()
        .position(|t| !ARTICLES.contains(&t.word.as_str()))
        .map_or(tokens.len(), |skip| from + skip);
    let span = tokens[start.min(tokens.len())..]
        .iter()
        .take(3)
        .take_while(|t| !BREAKS.contains(&t.word.as_str()))
        .count();
    place_in(tokens, start, span)
}

/// Where a phrase of words starts in `tokens`, each position it starts at.
fn starts<'a>(tokens: &'a [Token], phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
    let words: Vec<&str> = phrase.split(' ').collect();
    (0..tokens.len()).filter(move |&i| {
        words
            .iter()
            .enumerate()
            .all(|(k, w)| tokens.get(i + k).is_some_and(|t| t.word == *w))
    })
}

/// Whether the follow-up takes places out of the session's criteria. `text` is the
/// folded message and `tokens` its tokens.
pub(super) fn removes(text: &str, tokens: &[Token]) -> bool {
    let verb = tokens.iter().any(|t| {
        TAKE_OUT.iter().any(|v| t.word.starts_with(v)) || TAKE_OUT_EXACT.contains(&t.word.as_str())
    });
    let before = BEFORE_PLACE.iter().any(|p| {
        let len = p.split(' ').count();
        starts(tokens, p).any(|i| names_place_next(tokens, i + len))
    });
    let after = AFTER_PLACE
        .iter()
        .any(|p| starts(tokens, p).any(|i| place_in(tokens, i.saturating_sub(3), i.min(3))));
    // «pero sin Colima»: a short reply that only takes places out (the place may be a
    // region or a city the token scan reads).
    let short_sin = {
        let words: Vec<&str> = text
            .split(' ')
            .filter(|w| !w.is_empty())
            .skip_while(|w| ["pero", "y", "ahora", "ya", "mejor"].contains(w))
            .collect();
        words.len() <= 4
            && words
                .first()
                .is_some_and(|w| ["sin", "menos", "excepto", "without"].contains(w))
    };
    verb || before || after || short_sin
}

/// The places named after a word of putting in, in a removal («quita Coahuila y pon
/// Tamaulipas» → 1, «Nayarit sobra, déjalo en Jalisco y Colima» → 2).
pub(super) fn swapped_in(tokens: &[Token]) -> usize {
    last_put(tokens).map_or(0, |(at, _)| {
        super::places::find(&tokens[at + 1..]).states.len()
    })
}

/// Whether, in a removal, the places put in are the only ones that stay: the last word
/// of putting in restricts («nomás», «déjalo en») and places follow it.
pub(super) fn restricts(tokens: &[Token]) -> bool {
    last_put(tokens).is_some_and(|(at, only)| only && place_in(tokens, at + 1, tokens.len()))
}

/// «agrega Oaxaca también», «inclúyeme Puebla», «y además Tlaxcala»: the places
/// named are added to the session's places.
pub(super) fn adds(text: &str) -> bool {
    let padded = format!(" {text} ");
    [
        " tambien ",
        " ademas ",
        " agrega ",
        " agregale ",
        " agregame ",
        " incluye ",
        " incluyeme ",
        " incluyendo ",
        " suma ",
        " sumale ",
        " anade ",
        " too ",
        " also ",
        " add ",
    ]
    .iter()
    .any(|cue| padded.contains(cue))
}

#[cfg(test)]
mod tests {
    use super::removes;
    use crate::agent::director::words::tokens;
    use crate::base::catalog::text::fold;

    fn said(m: &str) -> bool {
        removes(&fold(m), &tokens(m))
    }

    #[test]
    fn places_are_taken_out_by_verbs_and_words_around_them() {
        for m in [
            "quita nayarit",
            "olvida nayarit",
            "excluye nayarit",
            "saca a nayarit",
            "nayarit sobra, dejalo en jalisco y colima",
            "nayarit no me sirve",
            "nayarit fuera",
            "todo menos nayarit",
            "ya no quiero nayarit",
            "sin los de jalisco",
            "pero sin colima",
        ] {
            assert!(said(m), "{m}");
        }
    }

    #[test]
    fn a_place_next_to_other_words_is_not_taken_out() {
        for m in [
            "constructoras en jalisco sin marcas de riesgo",
            "empresas sin adeudos en Sonora",
            "sacame el correo de las de nayarit",
            "y en nayarit?",
            "agrega colima",
            "no se, jalisco esta bien",
        ] {
            assert!(!said(m), "{m}");
        }
    }
}
