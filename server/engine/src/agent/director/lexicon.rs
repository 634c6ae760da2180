//! Stage 3b of the director's interpreter: the giro gazetteer and the free-text query.
//! A giro is found when a token sequence matches one of its catalogue synonyms
//! (`Giro::synonyms`), each word equal, with the same Snowball stem, or with a typo
//! (`words::near`). When no giro is named but the person asks for a kind of company
//! («proveedores de tornillos», «empresas que venden tornillos»), the words after it
//! become a free-text `query`, said so in the answer, never silently dropped.
//!
//! To add a word for a giro: add its folded form to `Giro::synonyms`
//! (`base/catalog/scian.rs`); plurals, feminine forms and typos then follow.

use crate::base::catalog::scian::Giro;

use super::words::{matches_word, Token};

/// Words that share a stem with a giro synonym but mean something else («saludos» and
/// «salud», «seguro» and «seguridad»).
const NOT_A_GIRO: &[&str] = &[
    "saludos", "saludo", "saluda", "saludar", "seguro", "segura", "seguros", "cargo", "cargos",
];

/// Nouns that name a kind of company: the words after «de» are what they do.
const COMPANY_NOUNS: &[&str] = &[
    "proveedor",
    "proveedores",
    "fabricante",
    "fabricantes",
    "empresa",
    "empresas",
    "distribuidor",
    "distribuidores",
    "distribuidora",
    "distribuidoras",
    "productor",
    "productores",
    "vendedor",
    "vendedores",
    "comercializadora",
    "comercializadoras",
    "compania",
    "companias",
    "negocios",
    "talleres",
    "despachos",
    "firmas",
];

/// Words that end a free-text query.
const QUERY_STOP: &[&str] = &[
    "en",
    "que",
    "con",
    "para",
    "por",
    "y",
    "o",
    "a",
    "al",
    "los",
    "las",
    "el",
    "la",
    "del",
    "sin",
    "mas",
    "menos",
    "cerca",
    "zona",
    "porfa",
    "por favor",
    "pls",
    "gracias",
    "este",
    "esta",
    "desde",
    "hasta",
    "ya",
    "le",
    "les",
    "tengan",
    "hayan",
    "top",
    "mejores",
];

/// The giro named earliest in the message: (key, label).
pub fn find_giro(tokens: &[Token], skip: &[(usize, usize)]) -> Option<Giro> {
    find_giros(tokens, skip).into_iter().next()
}

/// Every giro named outside the place spans, in the order they are written («diferencia
/// entre limpieza y seguridad» → limpieza, seguridad).
pub fn find_giros(tokens: &[Token], skip: &[(usize, usize)]) -> Vec<Giro> {
    let in_place = |i: usize| skip.iter().any(|(a, b)| (*a..*b).contains(&i));
    let mut found: Vec<(usize, Giro)> = Vec::new();
    for giro in Giro::ALL {
        for syn in giro.synonyms() {
            let parts: Vec<&str> = syn.split(' ').collect();
            let Some(at) = tokens.windows(parts.len()).position(|w| {
                w.iter().zip(&parts).all(|(t, p)| {
                    !NOT_A_GIRO.contains(&t.word.as_str()) && word_is(t, p, parts.len())
                })
            }) else {
                continue;
            };
            if in_place(at) {
                continue;
            }
            match found.iter_mut().find(|(_, g)| *g == giro) {
                Some(entry) => entry.0 = entry.0.min(at),
                None => found.push((at, giro)),
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, g)| g).collect()
}

/// A synonym word: function words and short words must be equal; content words may be
/// another form or carry a typo.
fn word_is(token: &Token, part: &str, phrase_len: usize) -> bool {
    if part.len() <= 3 || phrase_len > 1 && ["de", "del", "la", "las", "los"].contains(&part) {
        return token.word == part;
    }
    matches_word(token, part)
}

/// «proveedores de tornillos en Jalisco» → «tornillos»; «empresas que venden
/// tornillos y tuercas» → «tornillos». `None` when nothing follows the noun or verb.
pub fn free_query(tokens: &[Token], skip: &[(usize, usize)]) -> Option<String> {
    let in_place = |i: usize| skip.iter().any(|(a, b)| (*a..*b).contains(&i));
    let start = tokens.iter().enumerate().find_map(|(i, t)| {
        let next = tokens.get(i + 1).map(|n| n.word.as_str());
        if COMPANY_NOUNS.contains(&t.word.as_str()) && matches!(next, Some("de" | "del")) {
            Some(i + 2)
        } else if t.word.starts_with("vend") || t.word.starts_with("fabrican") {
            Some(i + 1)
        } else {
            None
        }
    })?;
    let words: Vec<&str> = tokens
        .iter()
        .enumerate()
        .skip(start)
        .take_while(|(i, t)| {
            !in_place(*i)
                && !QUERY_STOP.contains(&t.word.as_str())
                && t.word.parse::<u32>().is_err()
        })
        .map(|(_, t)| t.word.as_str())
        .take(4)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::director::words::tokens;

    fn giro(text: &str) -> Option<&'static str> {
        find_giro(&tokens(text), &[]).map(|g| g.key())
    }

    #[test]
    fn giros_in_other_forms_and_with_typos() {
        assert_eq!(giro("empresas de empaques en jalisco"), Some("empaque"));
        assert_eq!(giro("constructora en NL"), Some("construccion"));
        // Two edits at the start make another word: «tendencia» is no «intendencia».
        assert_eq!(
            giro("la tendencia de lo que gasta en software"),
            Some("servicios_ti")
        );
        assert_eq!(giro("proveedores de limpiesa"), Some("limpieza"));
        assert_eq!(giro("uniforme escolar"), Some("uniformes"));
        assert_eq!(giro("insumo médico"), Some("insumos_medicos"));
        // A greeting is not the health giro.
        assert_eq!(giro("saludos, gracias"), None);
        // «como» shares the three-letter stem «com» with «comida»: a stem that short
        // names nothing, so the question word is not the food giro.
        assert_eq!(
            giro("como ha ido año con año lo de uniformes"),
            Some("uniformes")
        );
        assert_eq!(giro("como esta empaque en jalisco"), Some("empaque"));
        assert_eq!(giro("como le va a las comidas"), Some("alimentos"));
    }

    #[test]
    fn a_long_word_two_letters_from_a_product_word_is_not_that_giro() {
        // Words of nine letters or more allow two typos: a product word must not be two
        // letters from a word people write for something else.
        for m in [
            "proveedores de tornillos",
            "usa los templates de correo",
            "cuantas veces lo revisamos",
        ] {
            assert_eq!(find_giro(&tokens(m), &[]), None, "{m}");
        }
    }

    #[test]
    fn an_unknown_giro_becomes_a_query() {
        let t = tokens("proveedores de tornillos en Jalisco");
        assert_eq!(find_giro(&t, &[]), None);
        assert_eq!(free_query(&t, &[(4, 5)]).as_deref(), Some("tornillos"));
        let t = tokens("empresas que venden válvulas industriales");
        assert_eq!(
            free_query(&t, &[]).as_deref(),
            Some("valvulas industriales")
        );
        assert_eq!(free_query(&tokens("hola, buenos días"), &[]), None);
    }
}
