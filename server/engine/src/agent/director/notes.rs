//! Stage 4a of the director's interpreter, notes: a note for the team in the person's
//! own words, however it is introduced — a marker that opens the message («anota
//! que…», «recuerda que…», «guarda una nota:»), a line addressed to the team
//! («para que lo sepa todo el equipo: …») or a closing clause that keeps what came
//! before («…, déjalo como nota»). Read through [`super::words`] like every cue, so
//! forms and typos follow. To add a way of asking: add its words to a list below.

use super::words::{any, first_end, tokens, tokens as tokens_of, Token};

/// Phrases that introduce a note for the team; the note is what follows.
const NOTE_MARKERS: &[&str] = &[
    "deja una nota",
    "dejar una nota",
    "deja nota",
    "dejale una nota",
    "toma nota",
    "tomen nota",
    "nota para el equipo",
    "anot*",
    "apunt*",
    "recuerda que",
    "recuerden que",
    "acuerdate",
    "acuerdense",
    "acuerdese",
    "no olvides que",
    "no olviden que",
    "ten en cuenta que",
    "tengan en cuenta que",
    "toma en cuenta que",
    "remember that",
    "keep in mind that",
    "recordatorio",
    "que el equipo sepa",
    "que sepa el equipo",
    "que todos sepan",
    "agrega a cerebro",
    "agrega al cerebro",
    "agregalo a cerebro",
    "guarda en cerebro",
    "guarda en el cerebro",
    // «registra en cerebro que…», «súbelo al cerebro:»: a verb of keeping comes first.
    "en cerebro",
    "en el cerebro",
    "al cerebro",
    "a cerebro",
    "note that",
    "no se nos olvide",
    "no se olvide",
    "no se les olvide",
    "quede asentado",
    "quede registrado",
    "para el record",
    "pal record",
    "tenlo en cuenta",
    "tenganlo en cuenta",
    "ten en cuenta",
    "=fyi",
    "heads up",
    "nota",
];

/// Verbs that make or keep a note when they come right before «nota».
const NOTE_VERBS: &[&str] = &[
    "guard*", "haz*", "crea*", "escrib*", "agreg*", "pon*", "dej*", "sube*", "registr*", "add",
    "save", "write", "make",
];

/// Who a note is for: said next to a verb of keeping or telling («guarda esto para el
/// equipo:», «para que lo sepa todo el equipo:», «compártelo con el equipo ->»), what
/// follows the separator is a note.
const TEAM_WORDS: &[&str] = &["equipo", "team", "cerebro", "todos"];
const KEEP_VERBS: &[&str] = &[
    "guard*", "sep*", "sab*", "compart*", "avis*", "agreg*", "registr*", "dej*", "keep", "save",
    "enter*",
];

fn team_note(message: &str) -> Option<String> {
    for sep in ["->", ":", "—", " - "] {
        let Some((head, tail)) = message.split_once(sep) else {
            continue;
        };
        let head = tokens(head);
        let tail = tail.trim();
        if head.len() <= 10
            && any(&head, TEAM_WORDS)
            && any(&head, KEEP_VERBS)
            && tail.split_whitespace().count() >= 3
        {
            return Some(tail.to_owned());
        }
    }
    None
}

/// A closing clause that keeps what came before as a note: «…, déjalo como nota»,
/// «…. anótalo», «… ponlo en una nota».
fn trailing_note(message: &str) -> Option<String> {
    let cut = message
        .trim_end()
        .trim_end_matches(['.', '!'])
        .rfind(['.', ',', ';'])?;
    let (head, tail) = message.split_at(cut);
    let tail = tokens(tail);
    // «…, que lo sepa todo el equipo»: told to the team.
    let told = tail.len() <= 7 && any(&tail, TEAM_WORDS) && any(&tail, &["sep*", "enter*"]);
    let closes = told
        || (tail.len() <= 5
            && (any(&tail, &["=anotalo", "=apuntalo", "=anotala", "=apuntala"])
                || (any(&tail, &["=nota", "=notas", "=note"])
                    && any(
                        &tail,
                        &["dej*", "guard*", "pon*", "sube*", "agreg*", "save", "keep"],
                    ))));
    let head = head
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_start_matches("ojo")
        .trim_start_matches("Ojo")
        .trim_start_matches([',', ':', ' ']);
    (closes && head.split_whitespace().count() >= 3).then(|| head.to_owned())
}

/// The note's text in the person's own words (case and accents kept): the words of
/// `message` after the marker, without a leading «que», «:» or «,»; else a note to
/// the team after a separator, or one kept by a closing clause.
pub(super) fn read(message: &str, tokens: &[Token]) -> Option<String> {
    let Some((start, end)) = first_end(tokens, NOTE_MARKERS) else {
        return team_note(message).or_else(|| trailing_note(message));
    };
    // A note marker opens its clause: «toma nota», not «la nota de ayer». A verb of
    // making or keeping may come first: «guarda una nota:», «hazme una nota:».
    let before = &tokens[..start];
    let filler = |t: &Token| {
        [
            "ojo", "oye", "luna", "porfa", "por", "favor", "y", "una", "un", "esta", "la", "pa",
            "para", "q", "que",
        ]
        .contains(&t.word.as_str())
    };
    let opens = before.iter().all(filler)
        || (before.len() <= 3
            && any(before, NOTE_VERBS)
            && before
                .iter()
                .all(|t| filler(t) || any(std::slice::from_ref(t), NOTE_VERBS)));
    if !opens {
        return trailing_note(message);
    }
    let mut skip = end;
    while tokens.get(skip).is_some_and(|t| {
        [
            "que",
            "q",
            "de",
            "esto",
            "lo",
            "siguiente",
            "equipo",
            "team",
            "todos",
        ]
        .contains(&t.word.as_str())
    }) {
        skip += 1;
    }
    let rest = original_from(message, skip)?;
    let mut rest = rest.trim_start_matches([':', ',', ';', '-', ' ']).trim();
    // Who it is for may sit between the marker and the colon: «tenlo en cuenta pa
    // todo el equipo: …».
    if let Some((head, tail)) = rest.split_once(':') {
        let addressed = tokens_of(head);
        if addressed.len() <= 5 && any(&addressed, &["equipo", "team", "todos", "raza", "gente"]) {
            rest = tail.trim();
        }
    }
    (rest.split_whitespace().count() >= 2).then(|| rest.to_owned())
}

/// The original text from folded token `index` on: each whitespace word of the
/// message folds into zero or more tokens.
fn original_from(message: &str, index: usize) -> Option<String> {
    let mut seen = 0;
    let words: Vec<&str> = message.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let n = crate::base::catalog::text::fold(w)
            .split(' ')
            .filter(|s| !s.is_empty())
            .count();
        if seen + n > index {
            return Some(words[i..].join(" "));
        }
        seen += n;
    }
    None
}
