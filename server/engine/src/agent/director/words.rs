//! Stage 1 and 2 of the director's interpreter: normalise a message (fold accents and
//! case with the one shared `fold`) and cut it into tokens, each with its Spanish
//! Snowball stem (`rust-stemmers`), so «empaques», «empaque» and «empacadoras» meet on
//! one form. Typos are matched with Damerau–Levenshtein (`strsim`), the distance
//! allowed scaled to the word's length and never on words shorter than five letters.

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;

use crate::base::catalog::text::fold;

/// One word of a message: folded, and its stem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub word: String,
    pub stem: String,
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::Spanish))
}

/// The Snowball stem of one folded word («empaques» → «empaqu»).
pub fn stem(word: &str) -> String {
    stemmer().stem(word).into_owned()
}

/// Chat shorthand people type, written out (one word for one word, so token
/// positions still match the message's words): «q» → «que», «pa» → «para».
const SHORTHAND: &[(&str, &str)] = &[
    ("q", "que"),
    ("k", "que"),
    ("xq", "porque"),
    ("pq", "porque"),
    ("x", "por"),
    ("pa", "para"),
    ("tmb", "tambien"),
    ("tb", "tambien"),
    ("d", "de"),
    ("xfa", "porfa"),
    ("plis", "porfa"),
    ("pls", "porfa"),
];

/// A folded word with chat shorthand written out.
pub fn expand(word: &str) -> &str {
    SHORTHAND
        .iter()
        .find(|(short, _)| *short == word)
        .map_or(word, |(_, long)| long)
}

/// Whether the folded text holds the folded phrase `p` as whole words.
pub fn phrase(folded: &str, p: &str) -> bool {
    format!(" {folded} ").contains(&format!(" {p} "))
}

/// Folds `message` and cuts it into tokens (shorthand written out, quantities said
/// in words written as numbers).
pub fn tokens(message: &str) -> Vec<Token> {
    let mut out: Vec<Token> = fold(message)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = expand(w);
            Token {
                word: w.to_owned(),
                stem: stem(w),
            }
        })
        .collect();
    quantities(&mut out);
    out
}

/// Quantities said with a unit word, written as the number on the word that carries it
/// (one word for one word, so positions still match): «una docena» → «12 docena»,
/// «media docena» → «6 docena», «dos docenas» → «24 docenas», «docena» alone → «12»,
/// «un par de» → «2 par de».
fn quantities(tokens: &mut [Token]) {
    let set = |t: &mut Token, n: u32| {
        t.word = n.to_string();
        t.stem = t.word.clone();
    };
    for i in 0..tokens.len() {
        let unit = match tokens[i].word.as_str() {
            "docena" | "docenas" => 12,
            "par" | "pares" => 2,
            _ => continue,
        };
        let before = i.checked_sub(1).map(|p| tokens[p].word.clone());
        if unit == 12 && before.as_deref() == Some("media") {
            set(&mut tokens[i - 1], 6);
        } else if let Some(n) = before.as_deref().and_then(number) {
            set(&mut tokens[i - 1], n.saturating_mul(unit));
        } else if unit == 12 {
            set(&mut tokens[i], 12);
        }
    }
}

const NUMBER_WORDS: &[(&str, u32)] = &[
    ("un", 1),
    ("una", 1),
    ("uno", 1),
    ("dos", 2),
    ("tres", 3),
    ("cuatro", 4),
    ("cinco", 5),
    ("seis", 6),
    ("siete", 7),
    ("ocho", 8),
    ("nueve", 9),
    ("diez", 10),
    ("once", 11),
    ("doce", 12),
    ("trece", 13),
    ("catorce", 14),
    ("quince", 15),
    ("dieciseis", 16),
    ("diecisiete", 17),
    ("dieciocho", 18),
    ("diecinueve", 19),
    ("veinte", 20),
    ("veinticinco", 25),
    ("treinta", 30),
    ("cuarenta", 40),
    ("cincuenta", 50),
    ("sesenta", 60),
    ("setenta", 70),
    ("ochenta", 80),
    ("noventa", 90),
    ("cien", 100),
];

/// A whole number in digits or in words («10», «diez»).
pub fn number(word: &str) -> Option<u32> {
    word.parse::<u32>().ok().or_else(|| {
        NUMBER_WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, n)| *n)
    })
}

/// The cap said around `words[i]` when it is a cap word: «12 max», «máximo 15», «un
/// máximo de 20», «tops 8», «a lo mucho 10». An article before the cap word («un»,
/// «una») is not a number; a cap outside 1–200 is not a cap.
pub fn cap_at(words: &[&str], i: usize) -> Option<u32> {
    let w = *words.get(i)?;
    let is_cap = ["max", "maximo", "maximum", "tops"].contains(&w)
        || (w == "mucho" && i > 0 && words[i - 1] == "lo");
    if !is_cap {
        return None;
    }
    let count = |w: &str| number(w).filter(|_| !["un", "una", "uno"].contains(&w));
    let before = i.checked_sub(1).and_then(|p| count(words[p]));
    let after = || {
        let next = if words.get(i + 1) == Some(&"de") {
            i + 2
        } else {
            i + 1
        };
        words.get(next).and_then(|w| count(w))
    };
    before.or_else(after).filter(|n| (1..=200).contains(n))
}

/// The first cap the words say (see [`cap_at`]).
pub fn cap(words: &[&str]) -> Option<u32> {
    (0..words.len()).find_map(|i| cap_at(words, i))
}

/// A bare number that ends the message («mejor que sean 20»), or the new one of «30 en
/// vez de 20», when the grammar found
/// no quantity before a company noun. A number before another noun («2 correos») counts
/// something else.
pub fn bare_number(folded: &str) -> Option<u32> {
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    // «pásame 30 en vez de 20», «mejor 15 en lugar de 10»: the first is the new one.
    if let Some(at) = words
        .windows(3)
        .position(|w| w[0] == "en" && ["vez", "lugar"].contains(&w[1]) && w[2] == "de")
    {
        if let Some(n) = at
            .checked_sub(1)
            .and_then(|p| words[p].parse::<u32>().ok())
            .filter(|n| (1..=500).contains(n))
        {
            return Some(n);
        }
    }
    let last = words.iter().rposition(|w| w.parse::<u32>().is_ok())?;
    let after = &words[last + 1..];
    let tail_ok = after.is_empty()
        || after.iter().all(|w| {
            [
                "empresas",
                "proveedores",
                "companias",
                "nada",
                "mas",
                "nomas",
                "porfa",
                "por",
                "favor",
                "de",
                "esos",
                "esas",
                "estos",
                "estas",
                "mejores",
                "primeros",
                "primeras",
                "mejor",
                "plis",
                "pls",
                "please",
                "entonces",
                "ahora",
            ]
            .contains(w)
        });
    tail_ok
        .then(|| words[last].parse::<u32>().ok())
        .flatten()
        .filter(|n| (1..=500).contains(n))
}

/// Singular ordinals and their place.
const ORDINALS: &[(&str, u32)] = &[
    ("primera", 1),
    ("primero", 1),
    ("segunda", 2),
    ("segundo", 2),
    ("tercera", 3),
    ("tercero", 3),
    ("cuarta", 4),
    ("cuarto", 4),
    ("quinta", 5),
    ("quinto", 5),
    ("sexta", 6),
    ("sexto", 6),
    ("septima", 7),
    ("septimo", 7),
    ("octava", 8),
    ("octavo", 8),
    ("novena", 9),
    ("noveno", 9),
    ("decima", 10),
    ("decimo", 10),
];

/// The place a singular ordinal names («tercera» → 3).
pub fn ordinal(word: &str) -> Option<u32> {
    ORDINALS.iter().find(|(o, _)| *o == word).map(|(_, n)| *n)
}

/// The one company of the selection an ordinal points at: «la tercera», «el segundo»,
/// «la número uno», «la no. 2», «la de hasta arriba», «la mejor» (not «las primeras 6»,
/// which is a top N). `text` is the folded message and `words` its words.
pub fn one_company(text: &str, words: &[&str]) -> Option<u32> {
    let padded = format!(" {text} ");
    if [
        " la de hasta arriba",
        " la de arriba",
        " el de hasta arriba",
        " el de arriba",
        " la mejor ",
        " el mejor ",
        " la top ",
    ]
    .iter()
    .any(|p| padded.contains(p))
    {
        return Some(1);
    }
    let article = |w: &str| ["la", "el", "a"].contains(&w);
    words.iter().enumerate().find_map(|(i, w)| {
        if !article(w) {
            return None;
        }
        let next = words.get(i + 1)?;
        // A number only after «número»: a bare «la 2» is too often a count («a 2
        // empresas»).
        ordinal(next).or_else(|| {
            ["numero", "num", "no"]
                .contains(next)
                .then(|| words.get(i + 2).and_then(|n| number(n)))
                .flatten()
                .filter(|n| (1..=50).contains(n))
        })
    })
}

/// Edits allowed between a written word and a catalogue word of `len` letters: none
/// under five letters (too many short words are one edit apart), one up to eight,
/// two from nine.
pub fn allowed_edits(len: usize) -> usize {
    match len {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    }
}

/// Whether `written` is `known` with a typo: a Damerau–Levenshtein distance within
/// what the shorter word's length allows (0 edits = equal), and the same first letter
/// (people rarely mistype it, and two edits at the start turn one word into another:
/// «tendencia» is not «intendencia»).
pub fn near(written: &str, known: &str) -> bool {
    if written == known {
        return true;
    }
    let (a, b) = (written.chars().count(), known.chars().count());
    let allowed = allowed_edits(a.min(b));
    // Each edit changes the length by at most one: a longer gap cannot be a typo.
    allowed > 0
        && a.abs_diff(b) <= allowed
        && written.chars().next() == known.chars().next()
        && strsim::damerau_levenshtein(written, known) <= allowed
}

/// Shortest stem that names a word: Snowball cuts «comida» and «como» alike to «com»,
/// so a stem under four letters says nothing about which word was written.
pub const MIN_STEM: usize = 4;

/// Whether a written token is the catalogue word `known` in another form (same stem,
/// when the stem is long enough to tell words apart) or with a typo.
pub fn matches_word(token: &Token, known: &str) -> bool {
    token.word == known || near(&token.word, known) || stem_names(known, &token.stem)
}

/// Most catalogue words one thread keeps the stem of (the cue lists and the catalogues
/// hold a few thousand); past it the memo starts again, so odd words cannot grow it.
const STEM_MEMO: usize = 20_000;

thread_local! {
    /// Each thread's catalogue stems, by catalogue word ([`stem_names`]).
    static STEMS: std::cell::RefCell<std::collections::HashMap<Box<str>, Box<str>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Whether the catalogue word `known` has the stem `stem_of_token`, long enough to
/// tell words apart ([`MIN_STEM`]). Every token of a message is compared with every cue
/// and catalogue word, and stemming those again at each comparison was two thirds of a
/// parse (2.9 ms of a turn, docs/BENCH.md): each thread stems a catalogue word once.
/// A hit looks the word up by `&str`, so it allocates nothing.
fn stem_names(known: &str, stem_of_token: &str) -> bool {
    let names = |known_stem: &str| known_stem.len() >= MIN_STEM && known_stem == stem_of_token;
    STEMS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(known_stem) = memo.get(known) {
            return names(known_stem);
        }
        if memo.len() >= STEM_MEMO {
            memo.clear();
        }
        let known_stem = stem(known);
        let same = names(&known_stem);
        memo.insert(known.into(), known_stem.into());
        same
    })
}

/// Where the cue `phrase` occurs in `tokens` (start, end past it). Each word of the
/// phrase matches a token as in [`matches_word`]; a word ending in `*` matches any token
/// that starts with it («investig*»); a word starting with `=` matches only itself
/// (brand names and words whose stem is too broad: «=contacto» is not «contactado»).
pub fn find(tokens: &[Token], phrase: &str) -> Option<(usize, usize)> {
    let cue: Vec<&str> = phrase.split(' ').filter(|w| !w.is_empty()).collect();
    if cue.is_empty() || cue.len() > tokens.len() {
        return None;
    }
    let hit = |t: &Token, c: &str| {
        if let Some(exact) = c.strip_prefix('=') {
            t.word == exact
        } else if let Some(prefix) = c.strip_suffix('*') {
            t.word.starts_with(prefix)
        } else {
            matches_word(t, c)
        }
    };
    (0..=tokens.len() - cue.len())
        .find(|&i| cue.iter().enumerate().all(|(k, c)| hit(&tokens[i + k], c)))
        .map(|i| (i, i + cue.len()))
}

/// Whether any cue of the list is in `tokens`.
pub fn any(tokens: &[Token], cues: &[&str]) -> bool {
    cues.iter().any(|c| find(tokens, c).is_some())
}

/// The first cue found and where it ends (token index past it).
pub fn first_end(tokens: &[Token], cues: &[&str]) -> Option<(usize, usize)> {
    cues.iter()
        .filter_map(|c| find(tokens, c))
        .min_by_key(|(start, end)| (*start, usize::MAX - end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_stem_answers_as_a_fresh_one() {
        // Pins the answers the memo and the length check must not change: the first
        // comparison stems «constructoras», the next ones read the memo.
        for _ in 0..3 {
            assert!(matches_word(&tokens("constructora")[0], "constructoras"));
            assert!(!matches_word(&tokens("comida")[0], "como"));
        }
        // One edit apart is a typo; a length gap wider than the edits allowed is not.
        assert!(near("fabricantes", "fabricante"));
        assert!(!near("fabricantes", "fabric"));
    }

    #[test]
    fn the_stem_memo_stays_bounded_whatever_words_arrive() {
        let token = &tokens("constructora")[0];
        for n in 0..STEM_MEMO + 10 {
            matches_word(token, &format!("palabra{n}"));
        }
        assert!(STEMS.with(|memo| memo.borrow().len()) <= STEM_MEMO);
        // Past the cap the memo starts again and still answers.
        assert!(matches_word(token, "constructoras"));
    }

    #[test]
    fn plural_and_feminine_forms_share_a_stem() {
        let t = tokens("Empaques, CONSTRUCTORAS y Constructora");
        assert_eq!(t[0].stem, stem("empaque"));
        assert_eq!(t[1].stem, t[3].stem);
        assert!(matches_word(&t[0], "empaque"));
        assert!(matches_word(&tokens("uniforme")[0], "uniformes"));
    }

    #[test]
    fn typos_match_long_words_only() {
        assert!(near("limpiesa", "limpieza"));
        assert!(near("construcion", "construccion"));
        assert!(near("trasnporte", "transporte"));
        // Short words never match fuzzily: «ropa» is not «rosa».
        assert!(!near("rosa", "ropa"));
        assert!(!near("obra", "ora"));
        // Too many edits for the length.
        assert!(!near("limpio", "limpieza"));
    }

    #[test]
    fn quantities_said_with_a_unit_become_numbers_in_place() {
        let words = |m: &str| -> Vec<String> { tokens(m).into_iter().map(|t| t.word).collect() };
        assert_eq!(
            words("una docena de despachos"),
            ["12", "docena", "de", "despachos"]
        );
        assert_eq!(
            words("media docena de fleteras"),
            ["6", "docena", "de", "fleteras"]
        );
        assert_eq!(words("dos docenas"), ["24", "docenas"]);
        assert_eq!(words("docena de imprentas"), ["12", "de", "imprentas"]);
        assert_eq!(
            words("un par de constructoras"),
            ["2", "par", "de", "constructoras"]
        );
        // A pair of something is not a count of companies unless it says so.
        assert_eq!(words("par de zapatos")[0], "par");
    }
}
