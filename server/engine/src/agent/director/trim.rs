//! Cutting the selection down to its first companies: «deja nomás las top 5 y tira el
//! resto», «con las 6 mejores basta», «recórtala a 8», «quédate con las primeras 3».
//! The board's own companies stay, in their order, and the rest leave it: no new
//! search, nothing charged.
//!
//! A cut needs a word of keeping or cutting (`CUT_WORDS`, «el resto», «las demás»,
//! or «solo»/«nomás» in a short message of their own), no question, and a number tied
//! to the companies — before or after «primeras», «mejores», «top», a company noun,
//! or right after the cutting word («déjala en 5», «nomás 7», «recórtala a 8»). A
//! number said about something else («deja lo pienso, tengo 2 juntas») is not a cut,
//! so small talk never empties the board. The planner runs a cut only when the
//! message names no criterion, no constraint and no other action, and only when it
//! leaves fewer companies than the board holds; anything else goes on as before (a
//! larger number is a new search).

use super::grammar::{number_after, number_before};
use super::words::number;

/// Verbs and phrases that say to keep some companies and drop the others (folded, by
/// prefix).
const CUT_WORDS: &[&str] = &[
    "deja",
    "quedat",
    "quedarm",
    "quedo",
    "quedamos",
    "quedemos",
    "basta",
    "suficiente",
    "recort",
    "reduc",
    "limita",
    "tira",
    "borra",
    "quita",
    "elimina",
    "descarta",
    "corta",
    "menos",
    "keep",
];

/// Restrictive words that say a cut only in a short message of their own («solo las
/// primeras 4», «nomás 7»): in a longer one they restrict something else («solo dime
/// el precio de las 3 de hasta arriba»).
const ONLY_WORDS: &[&str] = &["solo", "nomas", "unicamente", "solamente", "only"];

/// Most words a message of «solo …» may have to be a cut.
const SHORT: usize = 6;

/// Words of a question: a message that asks something is not an order to cut.
const QUESTION_WORDS: &[&str] = &["cuant", "precio", "cuesta", "cobr", "cual"];

/// Words of the first companies of a list, after which or before which a number is
/// how many stay.
const FIRST_WORDS: &[&str] = &["primer", "mejor", "top", "arriba", "first", "best"];

/// Company nouns a number may count («deja 5 empresas»).
const NOUNS: &[&str] = &["empresa", "proveedor", "compan", "opcion"];

/// How many of the selection's first companies a message keeps, when it is a cut.
/// `text` is the folded message.
pub fn keep_first(text: &str) -> Option<u32> {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    let padded = format!(" {text} ");
    let short = words.len() <= SHORT;
    let cut_word =
        |w: &str| CUT_WORDS.iter().any(|c| w.starts_with(c)) || (short && ONLY_WORDS.contains(&w));
    let rest = [
        " el resto",
        " las demas",
        " los demas",
        " las otras",
        " los otros",
    ]
    .iter()
    .any(|r| padded.contains(r));
    if !(rest || words.iter().any(|w| cut_word(w))) {
        return None;
    }
    // «las 3 últimas» counts the last ones: not a cut of the first.
    if words
        .iter()
        .any(|w| w.starts_with("ultim") || QUESTION_WORDS.iter().any(|q| w.starts_with(q)))
    {
        return None;
    }
    let after_cut = words
        .windows(2)
        .find_map(|w| cut_word(w[0]).then(|| number(w[1])).flatten());
    // «recórtala a 8», «déjala en 5»: the number after «a»/«en» that follows the verb.
    let after_to = words.windows(3).find_map(|w| {
        (cut_word(w[0]) && ["a", "en", "con"].contains(&w[1]))
            .then(|| number(w[2]))
            .flatten()
    });
    number_before(&words, FIRST_WORDS)
        .or_else(|| number_after(&words, FIRST_WORDS))
        .or_else(|| number_before(&words, NOUNS))
        .or(after_cut)
        .or(after_to)
        .filter(|n| (1..=200).contains(n))
}

#[cfg(test)]
mod tests {
    use super::keep_first;
    use crate::base::catalog::text::fold;

    #[test]
    fn a_cut_keeps_the_number_tied_to_the_first_companies() {
        for (message, n) in [
            ("deja nomas las top 5 y tira el resto", 5),
            ("con las 6 mejores basta", 6),
            ("recórtala a 8", 8),
            ("quédate solo con las primeras 3", 3),
            ("borra todas menos las primeras 2", 2),
            ("déjala en cinco", 5),
            ("nomás 7 empresas porfa", 7),
            ("keep only the top 4", 4),
            ("solo las primeras 4", 4),
        ] {
            assert_eq!(keep_first(&fold(message)), Some(n), "{message}");
        }
    }

    #[test]
    fn a_number_about_something_else_or_no_cutting_word_is_not_a_cut() {
        for message in [
            "deja lo pienso, tengo 2 juntas hoy",
            "dame 25",
            "las 5 mejores de monterrey",
            "quita las 3 últimas",
            "gracias, luego te digo",
            "mejor que sean 30",
            "solo las grandes",
            "cuanto me cobrarias x los datos del director de las 3 de hasta arriba? solo dime el precio",
            "solo dime cuales de las 3 primeras le venden al imss",
        ] {
            assert_eq!(keep_first(&fold(message)), None, "{message}");
        }
    }
}
