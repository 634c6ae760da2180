//! The 32 federal entities as a closed enum, with INEGI codes and names, ISO 3166-2,
//! CompraNet abbreviations, and the single normaliser every input goes through.
//!
//! Rules (CONTRACT §4, data/mx README): `"CDMX"`/`"Distrito Federal"` → Ciudad de México,
//! `"Edomex"` → México; a bare `"México"` is the State of Mexico only when the field is
//! known to be a state field coming from a registry (importers); in a user or model
//! filter it is ambiguous with the country and is rejected with a hint. Two states in
//! one field are rejected with `allowed_values`.

use std::collections::HashMap;
use std::sync::OnceLock;

use luna_protocol::error::{ErrorBody, ErrorCode};
use serde::{Deserialize, Serialize};

use super::text::fold;
use crate::base::error::EngineError;

/// The embedded INEGI/ISO/CompraNet catalogue (copied from `data/mx/catalogs`).
pub const ENTIDADES_CSV: &str = include_str!("../../../data/entidades_federativas.csv");

macro_rules! states {
    ($( $variant:ident = $code:literal, $name:literal, $short:literal, $compranet:literal, $iso:literal; )*) => {
        /// A Mexican federal entity. Serialised as its INEGI code string `"14"` is not
        /// used on the wire: the wire form is the Spanish short name (see `name`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum State { $( $variant ),* }

        impl State {
            pub const ALL: [State; 32] = [ $( State::$variant ),* ];

            /// INEGI code, 1..=32.
            pub fn code(self) -> u8 { match self { $( State::$variant => $code ),* } }
            /// Official INEGI name, e.g. "Veracruz de Ignacio de la Llave".
            pub fn official_name(self) -> &'static str { match self { $( State::$variant => $name ),* } }
            /// Everyday Spanish name used in labels, e.g. "Veracruz".
            pub fn name(self) -> &'static str { match self { $( State::$variant => $short ),* } }
            /// Abbreviation observed in CompraNet exports.
            pub fn compranet(self) -> &'static str { match self { $( State::$variant => $compranet ),* } }
            /// ISO 3166-2 subdivision code.
            pub fn iso(self) -> &'static str { match self { $( State::$variant => $iso ),* } }
        }
    };
}

states! {
    Aguascalientes = 1, "Aguascalientes", "Aguascalientes", "AGS", "MX-AGU";
    BajaCalifornia = 2, "Baja California", "Baja California", "BC", "MX-BCN";
    BajaCaliforniaSur = 3, "Baja California Sur", "Baja California Sur", "BCS", "MX-BCS";
    Campeche = 4, "Campeche", "Campeche", "CAMP", "MX-CAM";
    Coahuila = 5, "Coahuila de Zaragoza", "Coahuila", "COAH", "MX-COA";
    Colima = 6, "Colima", "Colima", "COL", "MX-COL";
    Chiapas = 7, "Chiapas", "Chiapas", "CHIS", "MX-CHP";
    Chihuahua = 8, "Chihuahua", "Chihuahua", "CHIH", "MX-CHH";
    CiudadDeMexico = 9, "Ciudad de México", "Ciudad de México", "CDMX", "MX-CMX";
    Durango = 10, "Durango", "Durango", "DGO", "MX-DUR";
    Guanajuato = 11, "Guanajuato", "Guanajuato", "GTO", "MX-GUA";
    Guerrero = 12, "Guerrero", "Guerrero", "GRO", "MX-GRO";
    Hidalgo = 13, "Hidalgo", "Hidalgo", "HGO", "MX-HID";
    Jalisco = 14, "Jalisco", "Jalisco", "JAL", "MX-JAL";
    Mexico = 15, "México", "Estado de México", "MEX", "MX-MEX";
    Michoacan = 16, "Michoacán de Ocampo", "Michoacán", "MICH", "MX-MIC";
    Morelos = 17, "Morelos", "Morelos", "MOR", "MX-MOR";
    Nayarit = 18, "Nayarit", "Nayarit", "NAY", "MX-NAY";
    NuevoLeon = 19, "Nuevo León", "Nuevo León", "NL", "MX-NLE";
    Oaxaca = 20, "Oaxaca", "Oaxaca", "OAX", "MX-OAX";
    Puebla = 21, "Puebla", "Puebla", "PUE", "MX-PUE";
    Queretaro = 22, "Querétaro", "Querétaro", "QRO", "MX-QUE";
    QuintanaRoo = 23, "Quintana Roo", "Quintana Roo", "Q ROO", "MX-ROO";
    SanLuisPotosi = 24, "San Luis Potosí", "San Luis Potosí", "SLP", "MX-SLP";
    Sinaloa = 25, "Sinaloa", "Sinaloa", "SIN", "MX-SIN";
    Sonora = 26, "Sonora", "Sonora", "SON", "MX-SON";
    Tabasco = 27, "Tabasco", "Tabasco", "TAB", "MX-TAB";
    Tamaulipas = 28, "Tamaulipas", "Tamaulipas", "TAMPS", "MX-TAM";
    Tlaxcala = 29, "Tlaxcala", "Tlaxcala", "TLAX", "MX-TLA";
    Veracruz = 30, "Veracruz de Ignacio de la Llave", "Veracruz", "VER", "MX-VER";
    Yucatan = 31, "Yucatán", "Yucatán", "YUC", "MX-YUC";
    Zacatecas = 32, "Zacatecas", "Zacatecas", "ZAC", "MX-ZAC";
}

/// Where a state string comes from; decides what a bare "México" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateContext {
    /// A filter written by a person or the model: "México" may be the country → rejected.
    Filter,
    /// A field a registry documents as a state (OCDS `address.region`, CompraNet
    /// `ENTIDAD_FEDERATIVA`): "México" is Estado de México.
    StateField,
}

impl Serialize for State {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for State {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        State::normalize(&raw, StateContext::Filter)
            .map_err(|e| serde::de::Error::custom(e.body().message))
    }
}

impl schemars::JsonSchema for State {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Estado".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = State::ALL.iter().map(|s| s.name()).collect();
        schemars::json_schema!({
            "type": "string",
            "description": "Una de las 32 entidades federativas (se aceptan variantes como CDMX o Edomex).",
            "examples": names,
        })
    }
}

fn variants() -> &'static HashMap<String, State> {
    static MAP: OnceLock<HashMap<String, State>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map = HashMap::new();
        for state in State::ALL {
            for name in [
                state.official_name(),
                state.name(),
                state.compranet(),
                state.iso(),
            ] {
                map.insert(fold(name), state);
            }
        }
        // Variants listed in the embedded catalogue (column 7, `|`-separated).
        for line in ENTIDADES_CSV.lines().skip(1) {
            let mut cols = line.splitn(7, ',');
            let code: u8 = match cols.next().and_then(|c| c.parse().ok()) {
                Some(c) => c,
                None => continue,
            };
            let Some(state) = State::from_code(code) else {
                continue;
            };
            let cols: Vec<&str> = cols.collect();
            for (i, col) in cols.iter().enumerate() {
                let pieces: Vec<&str> = if i == 5 {
                    col.split('|').collect()
                } else {
                    vec![col]
                };
                for piece in pieces {
                    // "Mexico (ONLY when …)" is the documented ambiguity; handled in code.
                    if piece.contains('(') {
                        continue;
                    }
                    let key = fold(piece);
                    if key.is_empty() || key == "mexico" || key == "mex" {
                        continue;
                    }
                    map.insert(key, state);
                }
            }
        }
        // «Estado» (or «edo») with México is the state, never the country.
        for alias in [
            "edo mex",
            "edo de mex",
            "edo mexico",
            "edo de mexico",
            "estado de mex",
            "estado de mexico",
        ] {
            map.insert(alias.into(), State::Mexico);
        }
        map.remove("mexico");
        map.remove("mex");
        map
    })
}

fn invalid(message: String, hint: &str, allowed: bool) -> EngineError {
    let mut body = ErrorBody::new(ErrorCode::InvalidArgument, message, hint);
    if allowed {
        body = body.with_allowed_values(State::ALL.iter().map(|s| s.name().to_string()));
    }
    EngineError::Typed(body)
}

impl State {
    pub fn from_code(code: u8) -> Option<State> {
        State::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }

    /// Looks a folded string up without any error reporting.
    fn lookup(folded: &str, ctx: StateContext) -> Option<State> {
        if let Some(s) = variants().get(folded) {
            return Some(*s);
        }
        if matches!(folded, "mexico" | "mex") {
            return (ctx == StateContext::StateField).then_some(State::Mexico);
        }
        let stripped = folded
            .strip_prefix("estado de ")
            .or_else(|| folded.strip_prefix("edo de "))
            .or_else(|| folded.strip_prefix("estado libre y soberano de "));
        stripped.and_then(|rest| variants().get(rest).copied())
    }

    /// The one normaliser for state input. Errors are typed `INVALID_ARGUMENT`.
    pub fn normalize(input: &str, ctx: StateContext) -> Result<State, EngineError> {
        let folded = fold(input);
        if folded.is_empty() {
            return Err(invalid(
                "El estado está vacío.".into(),
                "Escribe el nombre de una entidad federativa, por ejemplo «Jalisco».",
                true,
            ));
        }
        if let Some(state) = State::lookup(&folded, ctx) {
            return Ok(state);
        }
        if folded == "mexico" || folded == "mex" {
            return Err(invalid(
                "«México» es ambiguo: puede ser el país o el Estado de México.".into(),
                "Si te refieres al estado escribe «Estado de México» o «Edomex»; para todo el país omite el filtro de estado.",
                true,
            ));
        }
        // Two (or more) states in one field.
        let parts: Vec<&str> = input
            .split([',', ';', '/', '|', '+'])
            .flat_map(|p| p.split(" y "))
            .flat_map(|p| p.split(" e "))
            .flat_map(|p| p.split(" o "))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() > 1 {
            let found: Vec<State> = parts
                .iter()
                .filter_map(|p| {
                    let f = fold(p);
                    State::lookup(&f, StateContext::StateField)
                })
                .collect();
            if found.len() > 1 {
                let names: Vec<&str> = found.iter().map(|s| s.name()).collect();
                return Err(invalid(
                    format!(
                        "Este campo admite un solo estado y recibió {}: {}.",
                        found.len(),
                        names.join(", ")
                    ),
                    "Usa un solo estado por campo; para contar varios estados usa `states` (hasta 5) en market_count.",
                    true,
                ));
            }
        }
        Err(invalid(
            format!(
                "«{}» no es una entidad federativa reconocida.",
                input.trim()
            ),
            "Usa uno de los 32 estados (se aceptan variantes como CDMX, Edomex o NL).",
            true,
        ))
    }

    /// Lenient variant for importers: unknown or ambiguous values become `None`.
    pub fn from_registry(input: &str) -> Option<State> {
        let folded = fold(input);
        State::lookup(&folded, StateContext::StateField)
    }
}

/// Main municipalities per state with their share of the state's companies (used by
/// the generator). States not listed use their capital only.
pub fn municipalities(state: State) -> &'static [(&'static str, u32)] {
    use State::*;
    match state {
        Jalisco => &[
            ("Guadalajara", 34),
            ("Zapopan", 30),
            ("San Pedro Tlaquepaque", 12),
            ("Tlajomulco de Zúñiga", 9),
            ("El Salto", 8),
            ("Tonalá", 5),
            ("Lagos de Moreno", 2),
        ],
        CiudadDeMexico => &[
            ("Cuauhtémoc", 22),
            ("Miguel Hidalgo", 20),
            ("Benito Juárez", 18),
            ("Azcapotzalco", 12),
            ("Iztapalapa", 10),
            ("Álvaro Obregón", 10),
            ("Coyoacán", 8),
        ],
        Mexico => &[
            ("Naucalpan de Juárez", 25),
            ("Tlalnepantla de Baz", 22),
            ("Ecatepec de Morelos", 15),
            ("Toluca", 18),
            ("Cuautitlán Izcalli", 12),
            ("Huixquilucan", 8),
        ],
        NuevoLeon => &[
            ("Monterrey", 40),
            ("San Pedro Garza García", 18),
            ("Apodaca", 14),
            ("Guadalupe", 12),
            ("San Nicolás de los Garza", 10),
            ("Santa Catarina", 6),
        ],
        Guanajuato => &[
            ("León", 45),
            ("Irapuato", 20),
            ("Celaya", 20),
            ("Guanajuato", 15),
        ],
        Puebla => &[("Puebla", 75), ("San Andrés Cholula", 15), ("Tehuacán", 10)],
        Queretaro => &[("Querétaro", 70), ("El Marqués", 18), ("Corregidora", 12)],
        BajaCalifornia => &[("Tijuana", 55), ("Mexicali", 35), ("Ensenada", 10)],
        Chihuahua => &[("Ciudad Juárez", 55), ("Chihuahua", 45)],
        Coahuila => &[("Saltillo", 50), ("Torreón", 35), ("Monclova", 15)],
        Veracruz => &[("Veracruz", 40), ("Xalapa", 35), ("Coatzacoalcos", 25)],
        Sonora => &[("Hermosillo", 70), ("Cajeme", 30)],
        Yucatan => &[("Mérida", 100)],
        _ => &[],
    }
}

/// The capital, used when a state has no municipality table.
pub fn capital(state: State) -> &'static str {
    use State::*;
    match state {
        Aguascalientes => "Aguascalientes",
        BajaCalifornia => "Mexicali",
        BajaCaliforniaSur => "La Paz",
        Campeche => "Campeche",
        Coahuila => "Saltillo",
        Colima => "Colima",
        Chiapas => "Tuxtla Gutiérrez",
        Chihuahua => "Chihuahua",
        CiudadDeMexico => "Cuauhtémoc",
        Durango => "Durango",
        Guanajuato => "Guanajuato",
        Guerrero => "Chilpancingo de los Bravo",
        Hidalgo => "Pachuca de Soto",
        Jalisco => "Guadalajara",
        Mexico => "Toluca",
        Michoacan => "Morelia",
        Morelos => "Cuernavaca",
        Nayarit => "Tepic",
        NuevoLeon => "Monterrey",
        Oaxaca => "Oaxaca de Juárez",
        Puebla => "Puebla",
        Queretaro => "Querétaro",
        QuintanaRoo => "Chetumal",
        SanLuisPotosi => "San Luis Potosí",
        Sinaloa => "Culiacán",
        Sonora => "Hermosillo",
        Tabasco => "Centro",
        Tamaulipas => "Ciudad Victoria",
        Tlaxcala => "Tlaxcala",
        Veracruz => "Xalapa",
        Yucatan => "Mérida",
        Zacatecas => "Zacatecas",
    }
}

/// The JSON Schema of a state argument: a closed set of the 32 names (CONTRACT §4).
/// Aliases («CDMX», «Edomex», «jalisco») are still accepted: [`canonicalize_args`]
/// turns them into these names before the schema is checked.
pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = State::ALL.iter().map(|s| s.name()).collect();
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// A list of at most 5 states, each of the closed set.
pub fn list_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = State::ALL.iter().map(|s| s.name()).collect();
    schemars::json_schema!({
        "type": "array",
        "maxItems": 5,
        "items": { "type": "string", "enum": names }
    })
}

/// Rewrites every `state` (a string) and `states` (a list of strings) in `args`, at
/// any depth, to the catalogue's name, so a tool's closed-set schema accepts what
/// people and models write. A value that names no state (or two, or the bare
/// country) is refused here with the normaliser's own typed error and the 32 names as
/// `allowed_values`; values of other types are left for the schema to refuse.
pub fn canonicalize_args(args: &mut serde_json::Value) -> Result<(), EngineError> {
    canonicalize(args, true)
}

/// [`canonicalize_args`] for a tool that reports each state of a list on its own
/// (`market_count`): list items that name no state are left for the tool's per-state
/// error; a lone `state` is still refused.
pub fn canonicalize_args_per_item(args: &mut serde_json::Value) -> Result<(), EngineError> {
    canonicalize(args, false)
}

fn canonicalize(args: &mut serde_json::Value, strict_lists: bool) -> Result<(), EngineError> {
    use serde_json::Value;
    let canonical = |v: &mut Value| -> Result<(), EngineError> {
        if let Value::String(s) = v {
            *s = State::normalize(s, StateContext::Filter)?.name().to_owned();
        }
        Ok(())
    };
    let lenient = |v: &mut Value| {
        if let Value::String(s) = v {
            if let Ok(state) = State::normalize(s, StateContext::Filter) {
                *s = state.name().to_owned();
            }
        }
    };
    match args {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), &mut *value) {
                    ("state", v @ Value::String(_)) => canonical(v)?,
                    ("states", Value::Array(items)) => {
                        for item in items.iter_mut() {
                            if strict_lists {
                                canonical(item)?;
                            } else {
                                lenient(item);
                            }
                        }
                    }
                    (_, v) => canonicalize(v, strict_lists)?,
                }
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                canonicalize(item, strict_lists)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(err: EngineError) -> (ErrorCode, Option<Vec<String>>, String) {
        let b = err.body();
        (b.code, b.allowed_values, b.hint)
    }

    #[test]
    fn catalogue_and_enum_agree() {
        let mut seen = 0;
        for line in ENTIDADES_CSV.lines().skip(1) {
            let cols: Vec<&str> = line.split(',').collect();
            let code: u8 = cols[0].parse().unwrap();
            let state = State::from_code(code).unwrap();
            assert_eq!(state.official_name(), cols[1]);
            assert_eq!(state.iso(), cols[3]);
            assert_eq!(state.compranet(), cols[5]);
            seen += 1;
        }
        assert_eq!(seen, 32);
    }

    #[test]
    fn normalises_common_variants() {
        let f = StateContext::Filter;
        assert_eq!(State::normalize("CDMX", f).unwrap(), State::CiudadDeMexico);
        assert_eq!(
            State::normalize("Distrito Federal", f).unwrap(),
            State::CiudadDeMexico
        );
        assert_eq!(State::normalize("D.F.", f).unwrap(), State::CiudadDeMexico);
        assert_eq!(State::normalize("Edomex", f).unwrap(), State::Mexico);
        assert_eq!(
            State::normalize("estado de méxico", f).unwrap(),
            State::Mexico
        );
        assert_eq!(State::normalize("JALISCO", f).unwrap(), State::Jalisco);
        assert_eq!(State::normalize("Jal.", f).unwrap(), State::Jalisco);
        assert_eq!(State::normalize("nuevo leon", f).unwrap(), State::NuevoLeon);
        assert_eq!(State::normalize("Q. Roo", f).unwrap(), State::QuintanaRoo);
        assert_eq!(State::normalize("Veracruz", f).unwrap(), State::Veracruz);
        assert_eq!(State::normalize("Michoacan", f).unwrap(), State::Michoacan);
        assert_eq!(
            State::normalize("Estado de Jalisco", f).unwrap(),
            State::Jalisco
        );
    }

    #[test]
    fn bare_mexico_is_rejected_in_filters_but_is_a_state_in_registries() {
        let (code, allowed, hint) =
            code_of(State::normalize("México", StateContext::Filter).unwrap_err());
        assert_eq!(code, ErrorCode::InvalidArgument);
        assert!(hint.contains("Estado de México"));
        assert_eq!(allowed.unwrap().len(), 32);
        assert_eq!(
            State::normalize("México", StateContext::StateField).unwrap(),
            State::Mexico
        );
        assert_eq!(State::from_registry("MEXICO"), Some(State::Mexico));
        assert_eq!(
            State::from_registry("DISTRITO FEDERAL"),
            Some(State::CiudadDeMexico)
        );
    }

    #[test]
    fn two_states_in_one_field_is_an_error_with_allowed_values() {
        for input in ["Jalisco y Nuevo León", "CDMX, Edomex", "Jalisco/Colima"] {
            let (code, allowed, _) =
                code_of(State::normalize(input, StateContext::Filter).unwrap_err());
            assert_eq!(code, ErrorCode::InvalidArgument, "{input}");
            assert_eq!(allowed.unwrap().len(), 32);
        }
        assert!(State::normalize("Narnia", StateContext::Filter).is_err());
    }

    #[test]
    fn aliases_become_the_closed_set_before_the_schema_sees_them() {
        let mut args = serde_json::json!({
            "filters": {"state": "cdmx"},
            "states": ["jalisco", "Edomex"],
            "segments": [{"filters": {"state": "nuevo leon"}}]
        });
        canonicalize_args(&mut args).unwrap();
        assert_eq!(args["filters"]["state"], State::CiudadDeMexico.name());
        assert_eq!(args["states"][0], "Jalisco");
        assert_eq!(args["states"][1], State::Mexico.name());
        assert_eq!(args["segments"][0]["filters"]["state"], "Nuevo León");
        let mut bad = serde_json::json!({"filters": {"state": "Atlántida"}});
        match canonicalize_args(&mut bad) {
            Err(EngineError::Typed(body)) => {
                assert_eq!(body.allowed_values.map(|v| v.len()), Some(32))
            }
            other => panic!("{other:?}"),
        }
    }
}
