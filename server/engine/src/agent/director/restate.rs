//! Stage 0 of the director's interpreter: a correction said mid-message replaces what
//! it corrects before anything else reads the message — «desde 2023.. no, desde 2024»
//! → «desde 2024», «top 5.. mejor top 3» → «top 3», «12 empresas, digo 15» → «15». A
//! correction word (or a run of them: «mmm nel,») followed by the same slot word that
//! opened a clause just before it (a number, or a cue like «desde», «top», «más de»)
//! drops that earlier clause. Corrections between places are read by `places` itself
//! (it keeps every place word consumed). To add a way of correcting: a word in
//! `TAKE_BACK` (or `FILLERS`, for a word that is one only beside another); a slot: a
//! word in `CUES`.

use crate::base::catalog::text::fold;

/// Words that take back what was just said («mejor», «digo», «jk»). `places` reads
/// the places after one of them.
pub const TAKE_BACK: &[&str] = &[
    "mejor", "digo", "perdon", "jk", "corrijo", "actually", "rather", "espera", "wait", "bueno",
    "nel", "nop", "nope",
];

/// Words that sit in a run of take-backs («no, mm, mejor 20») but on their own are
/// no take-back between places («no» also negates: «en Jalisco, no en Colima»).
const FILLERS: &[&str] = &["no", "mm", "mmm", "ah", "sorry"];

fn is_marker(word: &str) -> bool {
    TAKE_BACK.contains(&word) || FILLERS.contains(&word)
}

/// Words that open a slot a correction may restate.
const CUES: &[&str] = &[
    "top", "desde", "hasta", "antes", "despues", "arriba", "mas", "menos", "minimo", "maximo",
    "max", "min", "since", "from", "after", "before",
];

/// How far back (in words) the corrected clause may start.
const REACH: usize = 4;

fn is_number(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// The message with each corrected clause dropped (the original words otherwise).
pub fn restated(message: &str) -> String {
    let words: Vec<&str> = message.split_whitespace().collect();
    let folded: Vec<String> = words
        .iter()
        .map(|w| {
            fold(w)
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_owned()
        })
        .collect();
    let mut keep = vec![true; words.len()];
    let mut i = 0;
    while i < words.len() {
        if !is_marker(&folded[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < words.len() && is_marker(&folded[i]) {
            i += 1;
        }
        let Some(next) = folded.get(i) else { break };
        // «no más de 10», «no menos de 3»: a bound, not a correction.
        if i - start == 1 && folded[start] == "no" && ["mas", "menos"].contains(&next.as_str()) {
            continue;
        }
        let same = |w: &str| {
            if is_number(next) {
                is_number(w)
            } else {
                CUES.contains(&next.as_str()) && w == next
            }
        };
        let earlier = (start.saturating_sub(REACH)..start)
            .rev()
            .find(|&j| keep[j] && same(&folded[j]));
        if let Some(j) = earlier {
            keep[j..i].iter_mut().for_each(|k| *k = false);
        }
    }
    if keep.iter().all(|k| *k) {
        return message.to_owned();
    }
    words
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(w, _)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::restated;

    #[test]
    fn a_correction_replaces_the_clause_it_restates() {
        for (said, meant) in [
            (
                "licitaciones desde 2023.. no, desde 2024 mejor",
                "licitaciones desde 2024 mejor",
            ),
            (
                "los que mas venden, top 5.. mejor top 3",
                "los que mas venden, top 3",
            ),
            ("dame 12 empresas, digo 15 empresas", "dame 15 empresas"),
            ("de más de 5 millones, perdón, más de 8", "de más de 8"),
        ] {
            assert_eq!(restated(said), meant, "{said}");
        }
    }

    #[test]
    fn words_that_only_look_like_corrections_change_nothing() {
        for said in [
            "los 10 mejores de Jalisco",
            "no quiero los de CDMX, desde 2023",
            "el mejor proveedor desde 2020",
            "top 5 no me sirve",
            "puebla.. mmm nel, en queretaro",
            "de más de 5 millones, no más de 10",
            "contratos de 2 millones, no menos",
        ] {
            assert_eq!(restated(said), said);
        }
    }
}
