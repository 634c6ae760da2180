//! Spanish text folding shared by the normalisers and the search layer: lower case,
//! accents and diaeresis removed, `ñ` folded to `n`, punctuation turned into spaces
//! and whitespace collapsed. The same folding SQLite FTS5 applies with
//! `unicode61 remove_diacritics 2`, so a folded query matches a folded index.

/// Folds `input` for comparison: `"Cd. de México"` → `"cd de mexico"`.
pub fn fold(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut pending_space = false;
    for ch in input.chars() {
        let mapped = fold_char(ch);
        match mapped {
            Some(c) if c.is_alphanumeric() || c == '&' => {
                if pending_space && !out.is_empty() {
                    out.push(' ');
                }
                pending_space = false;
                out.push(c);
            }
            _ => pending_space = true,
        }
    }
    out
}

/// Folds letters only: lower case, accents and diaeresis removed, `ñ` → `n`; spaces and
/// punctuation stay (`"Salud/IMSS Núñez"` → `"salud/imss nunez"`). For slugs, stored
/// keys and word lists that split the text themselves.
pub fn fold_letters(input: &str) -> String {
    input.chars().filter_map(fold_char).collect()
}

fn fold_char(ch: char) -> Option<char> {
    let c = match ch {
        'á' | 'à' | 'ä' | 'â' | 'Á' | 'À' | 'Ä' | 'Â' => 'a',
        'é' | 'è' | 'ë' | 'ê' | 'É' | 'È' | 'Ë' | 'Ê' => 'e',
        'í' | 'ì' | 'ï' | 'î' | 'Í' | 'Ì' | 'Ï' | 'Î' => 'i',
        'ó' | 'ò' | 'ö' | 'ô' | 'Ó' | 'Ò' | 'Ö' | 'Ô' => 'o',
        'ú' | 'ù' | 'ü' | 'û' | 'Ú' | 'Ù' | 'Ü' | 'Û' => 'u',
        'ñ' | 'Ñ' => 'n',
        'ç' | 'Ç' => 'c',
        other => {
            let mut lower = other.to_lowercase();
            let first = lower.next()?;
            return Some(first);
        }
    };
    Some(c)
}

/// Spanish function words a search skips ("material de curación" searches
/// "material" and "curacion"): they are in most names and titles, and as prefixes
/// ("de"*) they expand to thousands of index terms, the slowest query there was.
const FUNCTION_WORDS: &[&str] = &[
    "a", "al", "con", "de", "del", "e", "el", "en", "la", "las", "lo", "los", "o", "para", "por",
    "u", "un", "una", "y",
];

/// Splits a free-text query into folded search terms (at most `max` of them), without
/// function words unless the query has nothing else.
pub fn terms(input: &str, max: usize) -> Vec<String> {
    let folded = fold(input);
    let all: Vec<&str> = folded.split(' ').filter(|t| !t.is_empty()).collect();
    let content: Vec<&str> = all
        .iter()
        .copied()
        .filter(|t| !FUNCTION_WORDS.contains(t))
        .collect();
    let chosen = if content.is_empty() { all } else { content };
    chosen.into_iter().take(max).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_letters_keeps_spaces_and_punctuation() {
        assert_eq!(
            fold_letters("Salud/IMSS Núñez Ibáñez"),
            "salud/imss nunez ibanez"
        );
        assert_eq!(fold_letters("Ç-Ü"), "c-u");
    }

    #[test]
    fn folds_accents_case_enye_and_punctuation() {
        assert_eq!(fold("Cd. de México"), "cd de mexico");
        assert_eq!(fold("  NUEVO  León "), "nuevo leon");
        assert_eq!(fold("Compañía Piñata"), "compania pinata");
        assert_eq!(fold("B&D S.A. de C.V."), "b&d s a de c v");
        assert_eq!(terms("Insumos   MÉDICOS", 8), vec!["insumos", "medicos"]);
    }

    #[test]
    fn search_terms_skip_function_words_unless_nothing_else_is_left() {
        assert_eq!(
            terms("Material de Curación y equipo", 8),
            vec!["material", "curacion", "equipo"]
        );
        assert_eq!(terms("de la", 8), vec!["de", "la"]);
        assert_eq!(terms("B&D S.A. de C.V.", 8), vec!["b&d", "s", "c", "v"]);
    }
}
