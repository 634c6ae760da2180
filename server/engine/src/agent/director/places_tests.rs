//! The place gazetteers on the ways people name places: states, typos, demonyms,
//! cities, regions and corrections.

use super::*;
use crate::agent::director::words::tokens;

fn states(text: &str) -> Vec<&'static str> {
    find(&tokens(text))
        .states
        .iter()
        .map(|s| s.name())
        .collect()
}

#[test]
fn a_demonym_names_its_state_in_any_number_and_gender() {
    assert_eq!(states("unas constructoras poblanas"), ["Puebla"]);
    assert_eq!(
        states("imprentas regias o tapatías"),
        ["Nuevo León", "Jalisco"]
    );
    assert_eq!(
        states("proveedores sonorenses y sinaloenses"),
        ["Sonora", "Sinaloa"]
    );
    assert_eq!(states("empresas neoleonesas"), ["Nuevo León"]);
    assert_eq!(states("un despacho mexiquense"), ["Estado de México"]);
    assert_eq!(states("algo en el edo de mex"), ["Estado de México"]);
    // Quintana Roo's written short form, with or without its dot.
    assert_eq!(
        states("obra en yucatan, q roo y campeche"),
        ["Yucatán", "Quintana Roo", "Campeche"]
    );
    assert_eq!(states("hoteles en Q. Roo"), ["Quintana Roo"]);
    // The country is no state.
    assert_eq!(states("empresas mexicanas de limpieza"), Vec::<&str>::new());
}

#[test]
fn a_correction_keeps_the_places_after_it() {
    assert_eq!(
        states("en Guadalajara… perdón, digo en Zacatecas"),
        ["Zacatecas"]
    );
    assert_eq!(states("Puebla o mejor Tlaxcala"), ["Tlaxcala"]);
    // «mejor» with no place before it corrects nothing.
    assert_eq!(states("mejor en Sonora y Sinaloa"), ["Sonora", "Sinaloa"]);
}

#[test]
fn a_city_resolves_to_its_state() {
    assert_eq!(
        states("proveedores de limpieza en Monterrey"),
        ["Nuevo León"]
    );
    assert_eq!(states("empaque en Zapopan"), ["Jalisco"]);
    assert_eq!(states("algo en Mérida porfa"), ["Yucatán"]);
    assert_eq!(states("constructoras de Cancún"), ["Quintana Roo"]);
    assert_eq!(states("en naucalpan"), ["Estado de México"]);
    // A list of cities goes on after the first place word, and a city in several
    // states resolves against the others.
    assert_eq!(
        states("consultoria en cdmx, mty y gdl"),
        ["Ciudad de México", "Nuevo León", "Jalisco"]
    );
    assert_eq!(
        states("constructoras en toluca, naucalpan y tlalnepantla"),
        ["Estado de México"]
    );
    // A big city with a typo, after a place word.
    assert_eq!(states("equipo medico en guadalajra"), ["Jalisco"]);
    assert_eq!(states("contratistas de obra en monterey"), ["Nuevo León"]);
    // …but not a common word one letter from a city.
    assert!(states("algo para el pueblo").is_empty());
    // A common word is not a municipality: «madera» is not Madera, Chihuahua.
    assert!(states("proveedores de madera").is_empty());
}

#[test]
fn an_ambiguous_city_is_reported_not_guessed() {
    let p = find(&tokens("proveedores de limpieza en Guadalupe"));
    assert!(p.states.is_empty());
    let (city, candidates) = p.ambiguous.expect("ambiguous");
    assert_eq!(city, "guadalupe");
    assert!(candidates.contains(&State::NuevoLeon) && candidates.contains(&State::Zacatecas));
    // Naming the state settles it.
    let p = find(&tokens("en Guadalupe, Nuevo León"));
    assert_eq!(p.states, vec![State::NuevoLeon]);
    assert!(p.ambiguous.is_none());
}

#[test]
fn regions_are_sets_of_states() {
    assert_eq!(
        states("eventos en la península"),
        ["Yucatán", "Quintana Roo", "Campeche"]
    );
    let sureste = states("transporte en el sureste");
    assert!(["Yucatán", "Quintana Roo", "Campeche"]
        .iter()
        .all(|s| sureste.contains(s)));
    let bajio = states("empaque en el Bajío");
    assert!(bajio.contains(&"Guanajuato") && bajio.contains(&"Querétaro"));
    let norte = states("constructoras del norte");
    assert!(["Nuevo León", "Chihuahua", "Coahuila"]
        .iter()
        .all(|s| norte.contains(s)));
    let frontera = states("fletes en la frontera");
    assert!(["Baja California", "Chihuahua", "Tamaulipas"]
        .iter()
        .all(|s| frontera.contains(s)));
    assert_eq!(
        states("fleteros x la comarca lagunera, torreon gomez palacio lerdo"),
        ["Coahuila", "Durango"]
    );
    // Corrections with «espera», «bueno no»; the whole country names no state.
    assert_eq!(
        states("mejor en leon... no espera, en aguascalientes"),
        ["Aguascalientes"]
    );
    assert!(states("licitaciones en sonora... bueno no, en todo el pais").is_empty());
    // Places added or taken out by a verb.
    assert_eq!(
        states("suma guadalajara y la cdmx tambien"),
        ["Jalisco", "Ciudad de México"]
    );
    assert_eq!(states("quita monterrey"), ["Nuevo León"]);
    // Places named inside a region narrow it.
    assert_eq!(
        states("seguridad privada en la frontera: tijuana, cd juarez y reynosa"),
        ["Baja California", "Chihuahua", "Tamaulipas"]
    );
}

#[test]
fn two_states_and_typos_in_state_names() {
    assert_eq!(
        states("limpieza en Jalisco y Michoacán"),
        ["Jalisco", "Michoacán"]
    );
    assert_eq!(states("limpieza en jalsico"), ["Jalisco"]);
    assert_eq!(
        states("empaque en NL o en qro"),
        ["Nuevo León", "Querétaro"]
    );
    // Ordinary short words are not abbreviations.
    assert!(states("son las que ver").is_empty());
}

#[test]
fn a_typo_in_a_two_word_state_and_cities_inside_a_region_just_named() {
    assert_eq!(
        states("constructoras en baja califronia"),
        ["Baja California"]
    );
    assert_eq!(states("imprentas en san luis potosi"), ["San Luis Potosí"]);
    assert_eq!(states("transportistas de nuevo leno"), ["Nuevo León"]);
    // «el bajío: León, Qro y Ags»: León is Guanajuato's, named inside the region.
    let mut got = states("limpieza en el bajio, sobre todo leon, qro y ags");
    got.sort_unstable();
    assert_eq!(got, ["Aguascalientes", "Guanajuato", "Querétaro"]);
}
