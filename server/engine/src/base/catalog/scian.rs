//! SCIAN (Sistema de Clasificación Industrial de América del Norte) classes used by
//! the market domain, with everyday Spanish names for giros ("empaque", "insumos
//! médicos", "construcción", …) and their synonyms. A giro resolves to a set of SCIAN
//! codes; a filter on a giro is a filter on those codes.

use std::sync::OnceLock;

use luna_protocol::error::{ErrorBody, ErrorCode};
use serde::{Deserialize, Serialize};

use super::text::fold;
use crate::base::error::EngineError;

/// 6-digit classes with their giro (embedded; see `source_confidence` column).
pub const SCIAN_CLASES_CSV: &str = include_str!("../../../data/scian_clases.csv");
/// Sector list copied from `data/mx/catalogs/scian_reference.csv`.
pub const SCIAN_REFERENCE_CSV: &str = include_str!("../../../data/scian_reference.csv");

/// A giro (line of business) as a salesperson says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Giro {
    Empaque,
    InsumosMedicos,
    Construccion,
    ServiciosTi,
    Alimentos,
    Limpieza,
    Seguridad,
    Uniformes,
    Impresion,
    Consultoria,
    Eventos,
    Transporte,
}

impl Giro {
    pub const ALL: [Giro; 12] = [
        Giro::Empaque,
        Giro::InsumosMedicos,
        Giro::Construccion,
        Giro::ServiciosTi,
        Giro::Alimentos,
        Giro::Limpieza,
        Giro::Seguridad,
        Giro::Uniformes,
        Giro::Impresion,
        Giro::Consultoria,
        Giro::Eventos,
        Giro::Transporte,
    ];

    /// The wire key (`"insumos_medicos"`).
    pub fn key(self) -> &'static str {
        match self {
            Giro::Empaque => "empaque",
            Giro::InsumosMedicos => "insumos_medicos",
            Giro::Construccion => "construccion",
            Giro::ServiciosTi => "servicios_ti",
            Giro::Alimentos => "alimentos",
            Giro::Limpieza => "limpieza",
            Giro::Seguridad => "seguridad",
            Giro::Uniformes => "uniformes",
            Giro::Impresion => "impresion",
            Giro::Consultoria => "consultoria",
            Giro::Eventos => "eventos",
            Giro::Transporte => "transporte",
        }
    }

    /// Spanish label for narration.
    pub fn label(self) -> &'static str {
        match self {
            Giro::Empaque => "empaque y envases",
            Giro::InsumosMedicos => "insumos médicos",
            Giro::Construccion => "construcción",
            Giro::ServiciosTi => "servicios de TI",
            Giro::Alimentos => "alimentos",
            Giro::Limpieza => "limpieza",
            Giro::Seguridad => "seguridad privada",
            Giro::Uniformes => "uniformes",
            Giro::Impresion => "impresión",
            Giro::Consultoria => "consultoría",
            Giro::Eventos => "eventos",
            Giro::Transporte => "transporte",
        }
    }

    /// Folded synonyms a person may write for this giro.
    pub fn synonyms(self) -> &'static [&'static str] {
        match self {
            Giro::Empaque => &[
                "empaque",
                "empaques",
                "embalaje",
                "envase",
                "envases",
                "empaquetado",
                "empacadora",
                "empacador",
                "envasadora",
                "carton",
                "cajas de carton",
                "bolsas",
                "packaging",
                "contenedores",
                "corrugado",
                "corrugados",
                "corrugadora",
                "carton corrugado",
                "cartonera",
                "embalajes",
                "empaque flexible",
                "pelicula stretch",
                "botellas",
                "tarimas de carton",
                "cajas de empaque",
                "bolsas de plastico",
                "emplaye",
                "envases pet",
                "frascos",
            ],
            Giro::InsumosMedicos => &[
                "insumos medicos",
                "material de curacion",
                "equipo medico",
                "material medico",
                "medicamentos",
                "farmaceutica",
                "farmaceuticos",
                "dispositivos medicos",
                "salud",
                "medical supplies",
                "medical equipment",
                "medical devices",
                "pharmaceutical",
                "pharma",
                "jeringas",
                "guantes de latex",
                "guantes quirurgicos",
                "cateteres",
                "suturas",
                "reactivos",
                "material quirurgico",
                "quirurgico",
                "instrumental medico",
                "insumos hospitalarios",
                "hospitalario",
                "equipo hospitalario",
                "medicamento",
                "farmacos",
                "farmacia",
                "farmacias",
                "cubrebocas",
                "dental",
                "ortopedia",
                "oxigeno medicinal",
                "laboratorio clinico",
                "equipo de laboratorio",
                "material de laboratorio",
                "sillas de ruedas",
                "camas de hospital",
                "vacunas",
                "camillas",
                "equipo de hospital",
                "material de hospital",
                "insumos de hospital",
                "monitores de signos vitales",
                "desfibriladores",
                "estetoscopios",
                "termometros",
                "antisepticos",
                "gasas esteriles",
                "vendajes",
                "glucometros",
                "tiras reactivas",
                "batas quirurgicas",
            ],
            Giro::Construccion => &[
                "construccion",
                "obra publica",
                "obra",
                "constructora",
                "constructoras",
                "edificacion",
                "infraestructura",
                "construction",
                "constructores",
                "obra civil",
                "pavimentacion",
                "urbanizacion",
                "carreteras",
                "remodelacion",
                "materiales de construccion",
                "obra electrica",
                "instalaciones electricas",
                "obra hidraulica",
                "drenaje",
                "mantenimiento de edificios",
                "impermeabilizacion",
                "demolicion",
                "concreto premezclado",
                "cemento",
                "varilla",
                "herreria",
                "albanileria",
                "naves industriales",
                "impermeabilizantes",
            ],
            Giro::ServiciosTi => &[
                "servicios de ti",
                "ti",
                "tecnologia",
                "tecnologias de la informacion",
                "software",
                "sistemas",
                "computo",
                "informatica",
                "it providers",
                "it services",
                "it companies",
                "proveedores de it",
                "empresas de it",
                "servicios it",
                "it vendors",
                "it suppliers",
                "it firms",
                "tech companies",
                "licencias de software",
                "antivirus",
                "conectividad",
                "desarrollo de software",
                "soporte tecnico",
                "telecomunicaciones",
                "ciberseguridad",
                "nube",
                "cloud",
                "hardware",
                "equipo de computo",
                "computadoras",
                "centro de datos",
                "desarrollo a la medida",
                "software a la medida",
                "aplicaciones moviles",
                "paginas web",
                "sitios web",
                "cableado estructurado",
                "mesa de ayuda",
                "licenciamiento",
            ],
            Giro::Alimentos => &[
                "alimentos",
                "alimentacion",
                "comida",
                "comedor",
                "comedores",
                "viveres",
                "abarrotes",
                "food",
                "catering",
                "box lunch",
                "alimentos preparados",
                "panificadora",
                "panaderia",
                "despensas",
                "lacteos",
                "carnicos",
                "frutas y verduras",
                "bebidas",
                "agua embotellada",
                "cocina industrial",
                "desayunos escolares",
                "leche",
                "leche en polvo",
                "harina",
                "harina de maiz",
                "cereales",
                "aceite comestible",
                "cafe",
                "azucar",
                "enlatados",
                "carne",
                "huevo",
                "productos lacteos",
                "carne de res",
                "verduras",
                "galletas",
                "botanas",
                "refrescos",
            ],
            Giro::Limpieza => &[
                "limpieza",
                "aseo",
                "productos de limpieza",
                "intendencia",
                "higiene",
                "limpiadora",
                "limpiadoras",
                "cleaning",
                "janitorial",
                "sanitizacion",
                "sanitizante",
                "sanitizantes",
                "desinfeccion",
                "fumigacion",
                "control de plagas",
                "jarceria",
                "quimicos de limpieza",
                "lavanderia",
                "recoleccion de basura",
                "manejo de residuos",
                "conserjeria",
                "jabon",
                "jabones",
                "jabon liquido",
                "desinfectante",
                "desinfectantes",
                "detergente",
                "detergentes",
                "limpiadores",
                "papel higienico",
                "papel sanitario",
                "toallas de papel",
                "trapeadores",
                "mechudos",
                "aromatizantes",
                "limpiavidrios",
            ],
            Giro::Seguridad => &[
                "seguridad",
                "vigilancia",
                "seguridad privada",
                "custodia",
                "guardias",
                "guardias de seguridad",
                "security guards",
                "private security",
                "guard services",
                "security services",
                "security companies",
                "escoltas",
                "videovigilancia",
                "camaras de seguridad",
                "cctv",
                "traslado de valores",
                "custodios",
                "alarmas",
                "vigilantes",
                "monitoreo de alarmas",
                "control de acceso",
                "seguridad intramuros",
            ],
            Giro::Uniformes => &[
                "uniformes",
                "ropa",
                "vestuario",
                "textil",
                "uniforms",
                "apparel",
                "textiles",
                "textilera",
                "confeccion",
                "confeccionistas",
                "maquila de ropa",
                "calzado",
                "zapatos",
                "ropa de trabajo",
                "ropa industrial",
                "overoles",
                "playeras",
                "botas industriales",
                "botas de trabajo",
                "camisolas",
                "chamarras",
                "bordados",
            ],
            Giro::Impresion => &[
                "impresion",
                "imprenta",
                "impresos",
                "formas impresas",
                "printing",
                "libros de texto",
                "imprentas",
                "editorial",
                "editoriales",
                "serigrafia",
                "rotulacion",
                "litografia",
                "offset",
                "gran formato",
                "folletos",
                "volantes",
                "tarjetas de presentacion",
                "lonas impresas",
                "papeleria impresa",
                "credenciales",
                "etiquetas impresas",
            ],
            Giro::Consultoria => &[
                "consultoria",
                "asesoria",
                "consultores",
                "consulting",
                "asesores",
                "consultora",
                "consultoras",
                "auditoria",
                "auditores",
                "despachos contables",
                "contadores",
                "capacitacion",
                "asesoria fiscal",
                "asesoria legal",
                "despacho juridico",
                "despachos juridicos",
                "abogados",
                "outsourcing",
                "reclutamiento",
            ],
            Giro::Eventos => &[
                "eventos",
                "congresos",
                "convenciones",
                "logistica de eventos",
                "events",
                "expos",
                "exposiciones",
                "ferias",
                "organizacion de eventos",
                "audio e iluminacion",
                "renta de mobiliario",
                "mamparas",
                "edecanes",
                "renta de sillas",
                "pantallas led",
            ],
            Giro::Transporte => &[
                "transporte",
                "fletes",
                "fleteros",
                "transportistas",
                "paqueteria",
                "mudanzas",
                "logistica",
                "carga",
                "transportation",
                "freight",
                "trucking",
                "logistics",
                "autotransporte",
                "fletera",
                "camiones de carga",
                "carga pesada",
                "ultima milla",
                "mensajeria",
                "transporte de personal",
                "autobuses",
                "traslados",
                "almacenaje",
                "courier",
                "pipas de agua",
            ],
        }
    }

    /// Resolves a giro written in free Spanish. Unknown → typed error with the giros.
    pub fn parse(input: &str) -> Result<Giro, EngineError> {
        let folded = fold(input).replace('_', " ");
        let normalized = folded.replace(' ', "_");
        for giro in Giro::ALL {
            if giro.key() == normalized || giro.synonyms().contains(&folded.as_str()) {
                return Ok(giro);
            }
        }
        // "fabricantes de empaque", "empresas de limpieza": look for a synonym inside.
        let padded = format!(" {folded} ");
        for giro in Giro::ALL {
            if giro
                .synonyms()
                .iter()
                .any(|s| s.len() > 3 && padded.contains(&format!(" {s} ")))
            {
                return Ok(giro);
            }
        }
        Err(EngineError::Typed(
            ErrorBody::new(
                ErrorCode::InvalidArgument,
                format!("No reconocemos el giro «{}».", input.trim()),
                "Usa uno de los giros disponibles o filtra por código SCIAN con `scian`.",
            )
            .with_allowed_values(Giro::ALL.iter().map(|g| g.key().to_string())),
        ))
    }

    /// SCIAN classes of this giro.
    pub fn classes(self) -> Vec<&'static ScianClass> {
        classes().iter().filter(|c| c.giro == Some(self)).collect()
    }

    /// SCIAN codes of this giro.
    pub fn codes(self) -> Vec<&'static str> {
        self.classes().iter().map(|c| c.code.as_str()).collect()
    }
}

/// One SCIAN class (6 digits) or sector.
#[derive(Debug, Clone, Serialize)]
pub struct ScianClass {
    pub code: String,
    pub name: String,
    #[serde(skip)]
    pub giro: Option<Giro>,
}

fn classes() -> &'static [ScianClass] {
    static CLASSES: OnceLock<Vec<ScianClass>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut out = Vec::new();
        for row in super::csv::parse(SCIAN_CLASES_CSV).into_iter().skip(1) {
            if row.len() < 3 {
                continue;
            }
            let giro = Giro::ALL.into_iter().find(|g| g.key() == row[2]);
            out.push(ScianClass {
                code: row[0].clone(),
                name: row[1].clone(),
                giro,
            });
        }
        for row in super::csv::parse(SCIAN_REFERENCE_CSV).into_iter().skip(1) {
            if row.len() < 3 || row[1] != "sector" {
                continue;
            }
            out.push(ScianClass {
                code: row[0].clone(),
                name: row[2].clone(),
                giro: None,
            });
        }
        out
    })
}

/// All embedded classes and sectors.
pub fn all() -> &'static [ScianClass] {
    classes()
}

/// Spanish name for a SCIAN code: the class if known, else its sector.
pub fn name_of(code: &str) -> Option<&'static str> {
    let all = classes();
    if let Some(c) = all.iter().find(|c| c.code == code) {
        return Some(&c.name);
    }
    let sector = code.get(..2)?;
    all.iter()
        .find(|c| {
            c.code == sector
                || c.code
                    .split_once('-')
                    .is_some_and(|(a, b)| (a..=b).contains(&sector))
        })
        .map(|c| c.name.as_str())
}

/// Validates a SCIAN code prefix filter (2 to 6 digits).
pub fn parse_prefix(input: &str) -> Result<String, EngineError> {
    let t = input.trim();
    if (2..=6).contains(&t.len()) && t.chars().all(|c| c.is_ascii_digit()) {
        return Ok(t.to_string());
    }
    Err(EngineError::typed(
        ErrorCode::InvalidArgument,
        format!("«{t}» no es un código SCIAN válido."),
        "Escribe de 2 a 6 dígitos, por ejemplo «3222» (cartón y papel) o «326110»; para un giro en palabras usa `giro`.",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn giros_resolve_from_everyday_spanish() {
        assert_eq!(Giro::parse("Empaque").unwrap(), Giro::Empaque);
        assert_eq!(
            Giro::parse("fabricantes de empaque").unwrap(),
            Giro::Empaque
        );
        assert_eq!(
            Giro::parse("Insumos Médicos").unwrap(),
            Giro::InsumosMedicos
        );
        assert_eq!(
            Giro::parse("insumos_medicos").unwrap(),
            Giro::InsumosMedicos
        );
        assert_eq!(Giro::parse("construcción").unwrap(), Giro::Construccion);
        assert_eq!(Giro::parse("servicios de TI").unwrap(), Giro::ServiciosTi);
        let err = Giro::parse("astronautas").unwrap_err().body();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err
            .allowed_values
            .unwrap()
            .contains(&"limpieza".to_string()));
    }

    #[test]
    fn every_giro_has_classes_and_names_resolve() {
        for g in Giro::ALL {
            assert!(!g.codes().is_empty(), "{g:?}");
        }
        assert!(Giro::Empaque.codes().contains(&"322210"));
        assert_eq!(name_of("322210"), Some("Fabricación de envases de cartón"));
        assert_eq!(name_of("311999"), Some("Industrias manufactureras"));
        assert!(parse_prefix("3222").is_ok());
        assert!(parse_prefix("abc").is_err());
    }
}
