//! The place names the director's place reading knows (`places`): regions as sets of
//! states, cities known by a name that is not their municipality's, demonyms, the big
//! cities matched with a typo, and the common words that are also municipality names.
//!
//! To add a place: a region goes into `REGIONS` (five states at most, the tools'
//! limit); a city known by another name into `CITY_ALIASES`; a demonym into
//! `DEMONYMS` (plural and feminine forms follow).

use crate::base::catalog::states::State;

/// Regions as documented sets of states (folded names → states). Sources: the usual
/// commercial regions of Mexico; where a region has more than five states the five
/// with the most economic activity are kept.
/// - península (de Yucatán): Yucatán, Quintana Roo, Campeche.
/// - sureste: the península plus Tabasco and Chiapas.
/// - Bajío: Guanajuato, Querétaro, Aguascalientes, San Luis Potosí (the industrial
///   Bajío corridor).
/// - norte: Nuevo León, Chihuahua, Coahuila, Sonora, Tamaulipas.
/// - frontera (norte): Baja California, Sonora, Chihuahua, Coahuila, Tamaulipas
///   (Nuevo León's short border is left out to stay within five).
/// - occidente: Jalisco, Colima, Nayarit, Michoacán. golfo: Veracruz, Tamaulipas,
///   Tabasco. valle de México: Ciudad de México, Estado de México.
/// - comarca (región) lagunera, la Laguna: Coahuila, Durango (Torreón, Gómez Palacio,
///   Lerdo). noreste: Nuevo León, Tamaulipas, Coahuila. noroeste: the Baja
///   Californias, Sonora, Sinaloa. Huasteca: San Luis Potosí, Veracruz, Hidalgo,
///   Tamaulipas. Riviera Maya: Quintana Roo. centro del país: Ciudad de México, Estado
///   de México, Puebla, Querétaro, Hidalgo.
pub(super) const REGIONS: &[(&str, &[State])] = {
    use State::*;
    &[
        ("peninsula", &[Yucatan, QuintanaRoo, Campeche]),
        ("peninsula de yucatan", &[Yucatan, QuintanaRoo, Campeche]),
        ("peninsula yucateca", &[Yucatan, QuintanaRoo, Campeche]),
        (
            "peninsula de baja california",
            &[BajaCalifornia, BajaCaliforniaSur],
        ),
        (
            "sureste",
            &[Yucatan, QuintanaRoo, Campeche, Tabasco, Chiapas],
        ),
        (
            "sudeste",
            &[Yucatan, QuintanaRoo, Campeche, Tabasco, Chiapas],
        ),
        (
            "sur este",
            &[Yucatan, QuintanaRoo, Campeche, Tabasco, Chiapas],
        ),
        (
            "bajio",
            &[Guanajuato, Queretaro, Aguascalientes, SanLuisPotosi],
        ),
        (
            "norte",
            &[NuevoLeon, Chihuahua, Coahuila, Sonora, Tamaulipas],
        ),
        (
            "nortenos",
            &[NuevoLeon, Chihuahua, Coahuila, Sonora, Tamaulipas],
        ),
        (
            "frontera",
            &[BajaCalifornia, Sonora, Chihuahua, Coahuila, Tamaulipas],
        ),
        (
            "frontera norte",
            &[BajaCalifornia, Sonora, Chihuahua, Coahuila, Tamaulipas],
        ),
        (
            "fronterizos",
            &[BajaCalifornia, Sonora, Chihuahua, Coahuila, Tamaulipas],
        ),
        (
            "fronterizas",
            &[BajaCalifornia, Sonora, Chihuahua, Coahuila, Tamaulipas],
        ),
        ("occidente", &[Jalisco, Colima, Nayarit, Michoacan]),
        ("golfo", &[Veracruz, Tamaulipas, Tabasco]),
        ("valle de mexico", &[CiudadDeMexico, Mexico]),
        ("comarca lagunera", &[Coahuila, Durango]),
        ("region lagunera", &[Coahuila, Durango]),
        ("la laguna", &[Coahuila, Durango]),
        ("noreste", &[NuevoLeon, Tamaulipas, Coahuila]),
        (
            "noroeste",
            &[BajaCalifornia, BajaCaliforniaSur, Sonora, Sinaloa],
        ),
        ("huasteca", &[SanLuisPotosi, Veracruz, Hidalgo, Tamaulipas]),
        ("riviera maya", &[QuintanaRoo]),
        // The whole country: a place that names no state («…bueno no, en todo el país»).
        ("todo el pais", &[]),
        ("toda la republica", &[]),
        ("todo mexico", &[]),
        (
            "centro del pais",
            &[CiudadDeMexico, Mexico, Puebla, Queretaro, Hidalgo],
        ),
    ]
};

/// Cities people name by a name that is not their municipality's.
pub(super) const CITY_ALIASES: &[(&str, State)] = {
    use State::*;
    &[
        ("cancun", QuintanaRoo),
        // «Q. Roo», the state's usual written short form (the tokens write the chat
        // shorthand «q» out as «que»).
        ("que roo", QuintanaRoo),
        ("playa del carmen", QuintanaRoo),
        ("chetumal", QuintanaRoo),
        ("ciudad juarez", Chihuahua),
        ("cd juarez", Chihuahua),
        ("juarez chihuahua", Chihuahua),
        ("villahermosa", Tabasco),
        ("ciudad obregon", Sonora),
        ("cd obregon", Sonora),
        ("los cabos", BajaCaliforniaSur),
        ("cabo san lucas", BajaCaliforniaSur),
        ("ciudad victoria", Tamaulipas),
        ("cd victoria", Tamaulipas),
        ("tuxtla", Chiapas),
        ("tlaquepaque", Jalisco),
        ("ciudad del carmen", Campeche),
        ("gdl", Jalisco),
        ("mty", NuevoLeon),
        ("san pedro garza garcia", NuevoLeon),
        ("guadalajara", Jalisco),
        ("monterrey", NuevoLeon),
    ]
};

/// State demonyms, folded, in their masculine singular (or only) form: «constructoras
/// poblanas», «proveedores regios». Plural and feminine forms follow ([`demonym`]).
/// City demonyms that stand for their state (tapatío, regiomontano, jarocho, chilango)
/// are included.
pub(super) const DEMONYMS: &[(&str, State)] = {
    use State::*;
    &[
        ("hidrocalido", Aguascalientes),
        ("aguascalentense", Aguascalientes),
        ("bajacaliforniano", BajaCalifornia),
        ("cachanilla", BajaCalifornia),
        ("sudcaliforniano", BajaCaliforniaSur),
        ("campechano", Campeche),
        ("chiapaneco", Chiapas),
        ("chihuahuense", Chihuahua),
        ("coahuilense", Coahuila),
        ("colimense", Colima),
        ("capitalino", CiudadDeMexico),
        ("chilango", CiudadDeMexico),
        ("defeno", CiudadDeMexico),
        ("duranguense", Durango),
        ("guanajuatense", Guanajuato),
        ("guerrerense", Guerrero),
        ("hidalguense", Hidalgo),
        ("jalisciense", Jalisco),
        ("tapatio", Jalisco),
        ("mexiquense", Mexico),
        ("michoacano", Michoacan),
        ("morelense", Morelos),
        ("nayarita", Nayarit),
        ("neoleones", NuevoLeon),
        ("neoleonesa", NuevoLeon),
        ("regiomontano", NuevoLeon),
        ("regio", NuevoLeon),
        ("oaxaqueno", Oaxaca),
        ("poblano", Puebla),
        ("queretano", Queretaro),
        ("quintanarroense", QuintanaRoo),
        ("potosino", SanLuisPotosi),
        ("sinaloense", Sinaloa),
        ("sonorense", Sonora),
        ("tabasqueno", Tabasco),
        ("tamaulipeco", Tamaulipas),
        ("tlaxcalteca", Tlaxcala),
        ("veracruzano", Veracruz),
        ("jarocho", Veracruz),
        ("yucateco", Yucatan),
        ("zacatecano", Zacatecas),
    ]
};

/// Municipality names that are also ordinary words in a sales chat.
pub(super) const COMMON_WORDS: &[&str] = &[
    "centro",
    "frontera",
    "fronteras",
    "esperanza",
    "isla",
    "libres",
    "madera",
    "mama",
    "china",
    "colon",
    "concordia",
    "carmen",
    "progreso",
    "reforma",
    "soledad",
    "victoria",
    "union",
    "honey",
    "mina",
    "altar",
    "candela",
    "casas",
    "empalme",
    "natividad",
    "magdalena",
    "higueras",
    "lagunillas",
    "buenavista",
    "angostura",
    "ascension",
    "paraiso",
    "rosario",
    "rodeo",
    "sacramento",
    "salinas",
    "santiago",
    "suma",
    "tequila",
    "tula",
    "venado",
    "pinos",
    "palmillas",
    "oriental",
    "nogales",
    "solidaridad",
    "general",
    "garcia",
    "gonzalez",
    "lopez",
    "jimenez",
    "mendez",
    "ruiz",
    "rosales",
    "guerrero",
    "hidalgo",
    "morelos",
    "madero",
    "juarez",
    "allende",
    "zaragoza",
    "obregon",
    "galeana",
    "escobedo",
    "aldama",
    "ocampo",
    "bustamante",
    "iturbide",
    "lerdo",
    "rayon",
    "cardenas",
    "mier",
    "granados",
    "coronado",
    "padilla",
    "naranjal",
    "sabanilla",
    "acula",
    "ario",
    "chila",
    "jala",
    "tala",
    "mama",
    "tila",
    "ucu",
    "dzan",
    "peto",
    "naco",
    "china",
    "inde",
    "la paz",
    "el oro",
    "tres valles",
    "san juan",
    "san pedro",
    "santa maria",
    "el salto",
];

/// Cities people name most (state capitals, big metros, the aliases above): only these
/// are matched with a typo («guadalajra», «monterey»), never the 2,400 municipalities,
/// too many of which are one edit from a common word.
pub(super) const BIG_CITIES: &[&str] = &[
    "tijuana",
    "mexicali",
    "ensenada",
    "hermosillo",
    "culiacan",
    "mazatlan",
    "chihuahua",
    "saltillo",
    "torreon",
    "monterrey",
    "apodaca",
    "escobedo",
    "reynosa",
    "matamoros",
    "tampico",
    "durango",
    "zacatecas",
    "aguascalientes",
    "guadalajara",
    "zapopan",
    "tlaquepaque",
    "tonala",
    "morelia",
    "queretaro",
    "irapuato",
    "celaya",
    "guanajuato",
    "toluca",
    "naucalpan",
    "ecatepec",
    "tlalnepantla",
    "nezahualcoyotl",
    "cuernavaca",
    "pachuca",
    "puebla",
    "tlaxcala",
    "veracruz",
    "xalapa",
    "coatzacoalcos",
    "villahermosa",
    "oaxaca",
    "acapulco",
    "chilpancingo",
    "tuxtla",
    "campeche",
    "merida",
    "cancun",
    "chetumal",
    "colima",
    "manzanillo",
    "tepic",
];
