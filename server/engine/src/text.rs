//! Spanish text folding: lower case, accents removed (ñ kept as n), punctuation to
//! spaces. Used wherever user words are matched against vocabularies.

/// Folds `s` for matching: "Guárdamelos, ¿CUÁNTOS?" → "guardamelos cuantos".
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        let mapped = match c {
            'á' | 'à' | 'ä' | 'â' => 'a',
            'é' | 'è' | 'ë' | 'ê' => 'e',
            'í' | 'ì' | 'ï' | 'î' => 'i',
            'ó' | 'ò' | 'ö' | 'ô' => 'o',
            'ú' | 'ù' | 'ü' | 'û' => 'u',
            'ñ' => 'n',
            c if c.is_alphanumeric() || c == '-' => c,
            _ => ' ',
        };
        out.push(mapped);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folding_removes_accents_case_and_punctuation() {
        assert_eq!(fold("Guárdamelos, ¿CUÁNTOS?"), "guardamelos cuantos");
        assert_eq!(fold("  Año   69-B "), "ano 69-b");
    }
}
