//! The product lexicon guard (CONTRACT §5 rule 6): words that must never appear in a
//! description, label or message the registry emits. Matching is on whole words,
//! case- and accent-insensitive.

/// Forbidden word stems and whole words, after folding.
const FORBIDDEN_WORDS: &[&str] = &[
    "universo",
    "universos",
    "mercado",
    "mercados",
    "analisis",
    "dataset",
    "datasets",
    "warehouse",
    "warehouses",
    "interno",
    "interna",
    "internos",
    "internas",
    "externo",
    "externa",
    "externos",
    "externas",
];

/// The forbidden words found in `text`. "candidato" is allowed only in "candidato por
/// nombre" (a name match), the one sense the lexicon keeps.
pub fn violations(text: &str) -> Vec<String> {
    let folded = crate::base::catalog::text::fold_letters(text);
    let words: Vec<&str> = folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if FORBIDDEN_WORDS.contains(w) {
            out.push((*w).to_owned());
        } else if w.starts_with("candidat") {
            let name_match =
                words.get(i + 1) == Some(&"por") && words.get(i + 2) == Some(&"nombre");
            if !name_match {
                out.push((*w).to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_words_are_caught_across_case_and_accents() {
        assert_eq!(
            violations("Un ANÁLISIS del Mercado"),
            vec!["analisis", "mercado"]
        );
        assert_eq!(violations("el dataset interno"), vec!["dataset", "interno"]);
        assert_eq!(
            violations("Candidatos para el universo"),
            vec!["candidatos", "universo"]
        );
    }

    #[test]
    fn product_words_and_name_matches_pass() {
        assert!(
            violations("Proveedores, Licitaciones y marcas de riesgo con evidencia").is_empty()
        );
        assert!(violations("un candidato por nombre en el directorio de Empresas").is_empty());
        // Substrings of other words are not matches.
        assert!(violations("supermercados internacionales").is_empty());
    }
}
