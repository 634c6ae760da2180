//! Unit tests of `grammar`: whole requests parsed into their fields.

use super::*;
use crate::agent::director::vocab::CatalogVocabulary;

struct Fake;
impl Vocabulary for Fake {
    fn find_state(&self, text: &str) -> Option<(String, String)> {
        text.contains("jalisco")
            .then(|| ("JAL".into(), "Jalisco".into()))
    }
    fn find_giro(&self, text: &str) -> Option<(String, String)> {
        text.contains("empaque")
            .then(|| ("3222".into(), "Empaque".into()))
    }
    fn find_buyers(&self, text: &str) -> Vec<String> {
        if text.contains("imss") {
            vec!["IMSS".into()]
        } else {
            vec![]
        }
    }
}

#[test]
fn english_mixed_in_and_other_forms_of_giros_and_places() {
    for (m, giro, state) in [
        (
            "construction companies near Ciudad Juárez",
            "construccion",
            "Chihuahua",
        ),
        (
            "Could you find me IT providers in Querétaro that already sell to government?",
            "servicios_ti",
            "Querétaro",
        ),
        ("limpiadoras en guanajuato", "limpieza", "Guanajuato"),
    ] {
        let r = parse(m, &CatalogVocabulary);
        assert_eq!(r.giro.map(|g| g.0).as_deref(), Some(giro), "{m}");
        assert_eq!(r.state.map(|s| s.0).as_deref(), Some(state), "{m}");
    }
    assert!(
        parse(
            "Could you find me IT providers in Querétaro that already sell to government?",
            &CatalogVocabulary
        )
        .sold_to_government
    );
}

#[test]
fn a_comparative_over_alternatives_is_a_comparison() {
    for m in [
        "a quién le conviene más venderle seguridad, a CFE o a PEMEX?",
        "which is bigger for consultoria, qro or gto?",
        "para el IMSS qué es más grande: limpieza, seguridad o eventos",
        "limpieza: ¿qué paga más, el ISSSTE o la CFE?",
        "cual es mas rentable en puebla, seguridad o limpieza",
    ] {
        assert!(parse(m, &CatalogVocabulary).compare, "{m}");
    }
    // Alternatives without a comparative are a search of both.
    for m in [
        "proveedores de limpieza en Jalisco o Nuevo León",
        "los mejores proveedores de limpieza en Jalisco",
    ] {
        assert!(!parse(m, &CatalogVocabulary).compare, "{m}");
    }
}

#[test]
fn what_a_buyer_spent_is_not_a_credits_question_and_the_first_n_are_read() {
    let r = parse(
        "cuanto ha gastado el issste en limpieza cada año?",
        &CatalogVocabulary,
    );
    assert!(!r.asks_usage && r.usage_focus.is_none(), "{r:?}");
    assert!(parse("cuanto he gastado este mes?", &CatalogVocabulary).asks_usage);
    assert_eq!(
        parse(
            "las dos primeras pasalas x el filtro de riesgo",
            &CatalogVocabulary
        )
        .first,
        Some(2)
    );
    assert_eq!(
        parse(
            "jalate 5 agencias de guardias de la cdmx",
            &CatalogVocabulary
        )
        .quantity,
        Some(5)
    );
}

#[test]
fn a_number_before_a_giro_word_is_the_quantity() {
    for (m, n) in [
        ("busca 5 constructoras en Querétaro", Some(5)),
        ("dame 20 farmacéuticas de Jalisco", Some(20)),
        ("arma 3 correos para las constructoras", None),
        ("constructoras con más de 10 contratos", None),
    ] {
        assert_eq!(parse(m, &CatalogVocabulary).quantity, n, "{m}");
    }
}

#[test]
fn the_scene_of_the_seed_is_understood_in_full() {
    let r = parse(
        "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.",
        &Fake,
    );
    assert_eq!(r.quantity, Some(40));
    assert_eq!(r.giro.as_ref().map(|g| g.1.as_str()), Some("Empaque"));
    assert_eq!(r.state.as_ref().map(|s| s.0.as_str()), Some("Jalisco"));
    assert!(r.sold_to_government && r.save);
    assert_eq!(r.contacts_top, Some(10));
    assert_eq!(r.sequence_steps, Some(3));
    let seq = parse("ármame una secuencia de tres correos", &Fake);
    assert_eq!((seq.contacts_top, seq.sequence_steps), (None, Some(3)));
    // Contacts asked in English; a sequence whose audience is «esos contactos».
    for (m, top) in [
        ("get me the emails of the top 4 please", 4),
        ("get the emails for the first 3", 3),
    ] {
        assert_eq!(parse(m, &Fake).contacts_top, Some(top), "{m}");
    }
    let seq = parse(
        "redacta 5 correos de seguimiento para esos contactos",
        &Fake,
    );
    assert_eq!((seq.contacts_top, seq.sequence_steps), (None, Some(5)));
    assert!(!r.asks_count && !r.asks_usage && r.connector.is_none());
}

#[test]
fn questions_notes_buyers_and_connectors() {
    let r = parse("¿Cuántos créditos me quedan?", &Fake);
    assert!(r.asks_usage && !r.asks_count);
    let r = parse("¿cuantos proveedores de empaque hay en jalisco?", &Fake);
    assert!(r.asks_count && r.has_criterion());
    let r = parse(
        "Deja una nota: los de empaque en Jalisco rara vez publican RFC",
        &Fake,
    );
    assert_eq!(
        r.note.as_deref(),
        Some("los de empaque en Jalisco rara vez publican RFC")
    );
    let r = parse(
        "los que le hayan vendido al IMSS, y mándalos a HubSpot",
        &Fake,
    );
    assert_eq!(r.buyers, vec!["IMSS".to_string()]);
    assert_eq!(r.connector.as_deref(), Some("HubSpot"));
    let r = parse("hola, ¿qué puedes hacer?", &Fake);
    assert!(!r.has_criterion() && r.quantity.is_none() && !r.research);
    let r = parse(
        "Investiga el mercado de empaque en Jalisco y dime quién domina",
        &Fake,
    );
    assert!(r.research && r.has_criterion());
}

#[test]
fn companies_with_contracts_a_risk_check_in_slang_and_a_count_of_firms() {
    let p = |m: &str| parse(m, &CatalogVocabulary);
    assert!(p("consultoras en Puebla con adjudicaciones").sold_to_government);
    assert_eq!(p("pásame 15 despachos de limpieza").quantity, Some(15));
    for m in [
        "¿alguna trae broncas con el SAT?",
        "revísalas con Hacienda antes de llamarles",
        "que ninguna sea empresa fantasma",
    ] {
        assert!(p(m).risk_screen, "{m}");
    }
    // Checking without the tax authority, or the SAT named alone, is no screen.
    assert!(!p("revisa las de Jalisco").risk_screen);
    assert!(!p("¿qué le compra el SAT a empresas de TI?").risk_screen);
    // A check is not a stage move.
    assert_eq!(p("pásalas todas por el filtro del SAT").stage_move, None);
}

#[test]
fn totals_removals_and_who_buys_more_between_alternatives() {
    let p = |m: &str| parse(m, &CatalogVocabulary);
    assert!(p("¿qué tantas imprentas hay en Colima?").asks_count);
    assert!(p("dame el total de constructoras por estado").asks_count);
    assert!(p("pero sin Colima").removes_places);
    assert!(p("menos Sonora").removes_places);
    assert!(!p("empresas sin adeudos en Sonora").removes_places);
    assert!(p("¿quién vende más uniformes, la SEDENA o la SEMAR?").compare);
    assert!(p("¿alguna con problemas fiscales?").risk_screen);
}

#[test]
fn a_cap_is_a_quantity_and_a_restated_number_wins() {
    let quantity = |m: &str| parse(m, &CatalogVocabulary).quantity;
    assert_eq!(quantity("despachos contables en puebla, 8 max"), Some(8));
    assert_eq!(quantity("imprentas de toluca, a lo mucho 6"), Some(6));
    // An article before the cap word is not a number: «un máximo de 20» caps at 20.
    assert_eq!(quantity("talleres en León, un máximo de 20"), Some(20));
    assert_eq!(quantity("talleres en León, máximo de 9"), Some(9));
    assert_eq!(
        quantity("dame 12 constructoras, digo 15 constructoras"),
        Some(15)
    );
}
