//! Unit tests of the director's `memory`: follow-ups read against the session's ledger.

use super::*;
use crate::agent::director::grammar::parse;
use crate::agent::director::vocab::CatalogVocabulary;

fn session(messages: &[&str]) -> FactLedger {
    messages
        .iter()
        .enumerate()
        .fold(FactLedger::default(), |l, (i, m)| {
            said_over(&l, &parse(m, &CatalogVocabulary), i as u32 + 1)
        })
}

fn recall_of(earlier: &[&str], message: &str) -> Option<Request> {
    let req = parse(message, &CatalogVocabulary);
    let mut all = earlier.to_vec();
    all.push(message);
    recall(&req, &session(&all), message, false)
}

const FIRST: &str = "40 fabricantes de empaque en Jalisco que ya le vendieron a gobierno";

#[test]
fn a_new_place_keeps_the_giro_the_buyer_and_the_quantity() {
    let r = recall_of(&[FIRST], "ahora en Nuevo León").expect("a refinement");
    assert_eq!(r.giro.map(|g| g.0).as_deref(), Some("empaque"));
    assert_eq!(r.state.map(|s| s.0).as_deref(), Some("Nuevo León"));
    assert!(r.sold_to_government);
    assert_eq!(r.quantity, Some(40));
    // Without a cue too: a place alone cannot be a request of its own.
    let r = recall_of(&[FIRST], "¿y en Querétaro?").expect("a refinement");
    assert_eq!(r.state.map(|s| s.0).as_deref(), Some("Querétaro"));
}

#[test]
fn a_removal_that_names_what_stays_keeps_only_that() {
    let first = "imprentas en jalisco y nuevo leon";
    let m = "ya no quiero las de jalisco, solo nuevo leon";
    let r = recall_of(&[first], m).expect("a refinement");
    assert_eq!(r.states.len(), 1, "{:?}", r.states);
    assert_eq!(r.state.map(|s| s.0).as_deref(), Some("Nuevo León"));
    let ledger = session(&[first, m]);
    assert_eq!(value(&ledger, FactField::Estado), Some("Nuevo León"));
}

#[test]
fn a_bare_number_asks_for_that_many_of_the_same() {
    for m in [
        "dame 25 mejor",
        "muestrame 25 porfa",
        "mejor que sean 25",
        "órale, enséñame 25",
        "ok pues dame 25",
        "pasame 25 en vez de 20",
    ] {
        let r = recall_of(&["seguridad en puebla"], m).expect(m);
        assert_eq!(r.quantity, Some(25), "{m}");
        assert_eq!(r.giro.map(|g| g.0).as_deref(), Some("seguridad"), "{m}");
    }
}

#[test]
fn a_removed_place_leaves_the_others() {
    let first = "limpieza en jalisco y cdmx";
    let r = recall_of(&[first], "quita los de cdmx").expect("a refinement");
    assert_eq!(r.giro.map(|g| g.0).as_deref(), Some("limpieza"));
    assert_eq!(
        r.states.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
        vec!["Jalisco"]
    );
    // Removing every place asks instead of searching nationwide.
    assert!(recall_of(&["limpieza en Jalisco"], "quita los de Jalisco").is_none());
    // A swap: out one, in another.
    let r = recall_of(
        &["envases en nuevo leon y coahuila"],
        "quita coahuila y pon tamaulipas",
    )
    .expect("a swap");
    assert_eq!(
        r.states.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
        vec!["Nuevo León", "Tamaulipas"]
    );
    // A place taken out in other words: a verb, a word after it, «sin» before it; and
    // a removal whose places put in after «déjalo en» are the only ones left.
    let first = "constructoras en jalisco, colima y nayarit";
    for m in [
        "olvida nayarit",
        "excluye nayarit",
        "nayarit sobra",
        "nayarit no me sirve",
        "todo menos nayarit",
        "nayarit sobra, dejalo en jalisco y colima",
    ] {
        let r = recall_of(&[first], m).expect(m);
        assert_eq!(
            r.states.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
            vec!["Jalisco", "Colima"],
            "{m}"
        );
    }
    let r = recall_of(&[first], "ya no quiero las de nayarit, nomas jalisco").expect("only");
    assert_eq!(
        r.states.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
        vec!["Jalisco"]
    );
}

#[test]
fn a_new_quantity_or_buyer_changes_only_that() {
    let r = recall_of(&[FIRST], "mejor que sean 15").expect("a refinement");
    assert_eq!(r.quantity, Some(15));
    assert_eq!(r.state.map(|s| s.0).as_deref(), Some("Jalisco"));
    let r = recall_of(&[FIRST], "solo los que le vendieron al IMSS").expect("a refinement");
    assert_eq!(r.buyers, vec!["IMSS".to_owned()]);
    assert_eq!(r.giro.map(|g| g.0).as_deref(), Some("empaque"));
}

#[test]
fn a_back_reference_takes_the_whole_criterion() {
    let r = recall_of(&[FIRST], "¿y cuántas son en total?").expect("a count of the same");
    assert!(r.asks_count);
    assert_eq!(r.giro.map(|g| g.0).as_deref(), Some("empaque"));
    assert_eq!(r.state.map(|s| s.0).as_deref(), Some("Jalisco"));
    let r = recall_of(&[FIRST], "ok búscame 15 de esos").expect("a search of the same");
    assert_eq!(r.quantity, Some(15));
    let r = recall_of(&[FIRST], "los 10 mejores").expect("the best of the same");
    assert_eq!((r.quantity, r.sold_to_government), (Some(10), true));
    // A ranking that points back keeps the giro.
    let req = parse(
        "¿y quién le vende más al gobierno de esos?",
        &CatalogVocabulary,
    );
    let all = [FIRST, "¿y quién le vende más al gobierno de esos?"];
    let r = complete(&req, &session(&all), all[1]);
    assert_eq!(r.giro.map(|g| g.0).as_deref(), Some("empaque"));
}

#[test]
fn another_kind_of_request_is_not_a_refinement() {
    for message in [
        "y quién le vende más al gobierno de esos?",
        "¿hay licitaciones abiertas para eso?",
        "prepárame un seguimiento por correo, 2 correos nada más",
        "consígueme el correo de los 10 mejores",
    ] {
        assert!(recall_of(&[FIRST], message).is_none(), "{message}");
    }
}

#[test]
fn a_new_request_and_a_first_message_recall_nothing() {
    assert!(recall_of(&[FIRST], "fabricantes de muebles en Puebla").is_none());
    assert!(recall_of(&[], "en Nuevo León").is_none());
    assert!(recall_of(&[FIRST], "gracias").is_none());
    // A new giro with a cue keeps the rest.
    let r = recall_of(&[FIRST], "ahora de limpieza").expect("a refinement");
    assert_eq!(r.state.map(|s| s.0).as_deref(), Some("Jalisco"));
    assert_ne!(r.giro.map(|g| g.0).as_deref(), Some("empaque"));
}

#[test]
fn places_set_against_the_session_join_its_own() {
    let facts = session(&["imprentas en Zacatecas"]);
    let with = |m: &str| {
        against_session(&parse(m, &CatalogVocabulary), &facts, m)
            .states
            .into_iter()
            .map(|s| s.0)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with("compáralo contra Durango y Sinaloa"),
        ["Zacatecas", "Durango", "Sinaloa"]
    );
    // Places compared with each other leave the session's out.
    assert_eq!(with("compara Durango con Sinaloa"), ["Durango", "Sinaloa"]);
}

#[test]
fn a_records_question_that_goes_on_is_about_the_sessions_market() {
    let facts = session(&["agencias de eventos en Yucatán"]);
    let giro_of = |m: &str| {
        complete(&parse(m, &CatalogVocabulary), &facts, m)
            .giro
            .map(|g| g.0)
    };
    assert_eq!(
        giro_of("órale, y ¿quiénes venden más?").as_deref(),
        Some("eventos")
    );
    assert_eq!(giro_of("¿quiénes venden más?"), None);
}
