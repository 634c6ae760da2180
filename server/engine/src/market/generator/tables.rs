//! The fixed tables the generator draws from: state and giro weights, the buyers of
//! each giro and the parts of company names.

use crate::base::catalog::scian::Giro;
use crate::base::catalog::states::State;

/// State weights (share of companies, roughly by economic size).
pub(super) const STATE_WEIGHTS: [u32; 32] = [
    12, 22, 4, 3, 18, 3, 6, 18, 160, 6, 30, 5, 8, 120, 90, 14, 8, 3, 70, 5, 24, 18, 7, 10, 12, 16,
    8, 18, 3, 25, 12, 4,
];

pub(super) fn giro_weights(state: State) -> [(Giro, u32); 12] {
    let empaque = if state == State::Jalisco { 60 } else { 10 };
    [
        (Giro::Empaque, empaque),
        (Giro::InsumosMedicos, 14),
        (Giro::Construccion, 18),
        (Giro::ServiciosTi, 12),
        (Giro::Alimentos, 10),
        (Giro::Limpieza, 9),
        (Giro::Seguridad, 5),
        (Giro::Uniformes, 4),
        (Giro::Impresion, 5),
        (Giro::Consultoria, 6),
        (Giro::Eventos, 3),
        (Giro::Transporte, 6),
    ]
}

pub(super) fn buyers_for(giro: Giro) -> &'static [&'static str] {
    match giro {
        Giro::Empaque => &[
            "IMSS", "DICONSA", "LICONSA", "SEDENA", "SEMAR", "PEMEX", "BIRMEX", "SEP", "ISSSTE",
        ],
        Giro::InsumosMedicos => &[
            "IMSS", "ISSSTE", "SSA", "BIRMEX", "SEDENA", "SEMAR", "PEMEX",
        ],
        Giro::Construccion => &[
            "SCT", "CONAGUA", "CAPUFE", "GACM", "PEMEX", "CFE", "SEDENA", "SEP",
        ],
        Giro::ServiciosTi => &[
            "IMSS", "ISSSTE", "SEP", "CFE", "PEMEX", "SCT", "SSA", "SEMAR",
        ],
        Giro::Alimentos => &["DICONSA", "LICONSA", "SEDENA", "SEMAR", "IMSS", "SEP"],
        Giro::Limpieza => &["IMSS", "ISSSTE", "SEP", "CFE", "GACM", "CAPUFE", "SSA"],
        Giro::Seguridad => &["PEMEX", "CFE", "GACM", "CAPUFE", "IMSS", "SEP"],
        Giro::Uniformes => &["SEDENA", "SEMAR", "IMSS", "PEMEX", "CFE", "CAPUFE"],
        Giro::Impresion => &["SEP", "IMSS", "SCT", "SSA", "ISSSTE"],
        Giro::Consultoria => &["PEMEX", "CFE", "SCT", "CONAGUA", "SEP", "GACM"],
        Giro::Eventos => &["SEP", "SSA", "SCT", "IMSS"],
        Giro::Transporte => &["DICONSA", "LICONSA", "PEMEX", "SEDENA", "BIRMEX"],
    }
}

pub(super) fn name_parts(giro: Giro) -> (&'static [&'static str], &'static [&'static str]) {
    match giro {
        Giro::Empaque => (
            &[
                "Empaques",
                "Envases",
                "Cartones",
                "Corrugados",
                "Plásticos",
                "Embalajes",
                "Bolsas y Películas",
            ],
            &[
                "Cajas de cartón corrugado",
                "Bolsas de polietileno",
                "Envases de plástico para medicamentos",
                "Película estirable",
                "Cajas plegadizas",
                "Contenedores de plástico",
                "Envases de vidrio",
            ],
        ),
        Giro::InsumosMedicos => (
            &[
                "Insumos Médicos",
                "Distribuidora Médica",
                "Material de Curación",
                "Farmacéutica",
                "Equipos Médicos",
            ],
            &[
                "Material de curación",
                "Jeringas desechables",
                "Guantes de látex",
                "Medicamentos genéricos",
                "Equipo de laboratorio",
                "Gasas y vendas",
            ],
        ),
        Giro::Construccion => (
            &[
                "Constructora",
                "Edificaciones",
                "Obras y Proyectos",
                "Infraestructura",
                "Pavimentos",
            ],
            &[
                "Rehabilitación de carretera",
                "Construcción de planta de tratamiento",
                "Mantenimiento de edificio",
                "Obra eléctrica",
                "Pavimentación",
            ],
        ),
        Giro::ServiciosTi => (
            &[
                "Soluciones Tecnológicas",
                "Sistemas",
                "Redes y Cómputo",
                "Software",
                "Datos y Nube",
            ],
            &[
                "Licenciamiento de software",
                "Servicio de cómputo en la nube",
                "Equipo de cómputo",
                "Soporte técnico",
                "Desarrollo de sistemas",
            ],
        ),
        Giro::Alimentos => (
            &[
                "Alimentos",
                "Comercializadora de Víveres",
                "Lácteos",
                "Panificadora",
                "Comedores Industriales",
            ],
            &[
                "Suministro de víveres",
                "Leche en polvo",
                "Servicio de comedor",
                "Despensas",
                "Harina de maíz",
            ],
        ),
        Giro::Limpieza => (
            &[
                "Servicios de Limpieza",
                "Químicos de Limpieza",
                "Mantenimiento Integral",
                "Higiene Institucional",
            ],
            &[
                "Servicio de limpieza de inmuebles",
                "Productos de limpieza",
                "Jabón líquido",
                "Desinfectantes",
            ],
        ),
        Giro::Seguridad => (
            &["Seguridad Privada", "Vigilancia", "Protección Integral"],
            &[
                "Servicio de vigilancia",
                "Custodia de instalaciones",
                "Monitoreo de alarmas",
            ],
        ),
        Giro::Uniformes => (
            &["Uniformes", "Confecciones", "Textiles"],
            &[
                "Uniformes de trabajo",
                "Calzado de seguridad",
                "Ropa quirúrgica",
            ],
        ),
        Giro::Impresion => (
            &["Impresos", "Gráficos", "Litografía"],
            &["Formas impresas", "Libros de texto", "Papelería oficial"],
        ),
        Giro::Consultoria => (
            &["Consultores", "Asesoría Integral", "Consultoría"],
            &[
                "Consultoría en procesos",
                "Estudio de factibilidad",
                "Auditoría externa de procesos",
            ],
        ),
        Giro::Eventos => (
            &["Eventos", "Convenciones", "Producciones"],
            &[
                "Organización de congreso",
                "Logística de evento",
                "Servicio integral de eventos",
            ],
        ),
        Giro::Transporte => (
            &["Transportes", "Logística", "Fletes"],
            &[
                "Servicio de fletes",
                "Distribución de mercancía",
                "Transporte de carga",
            ],
        ),
    }
}

pub(super) const SURNAMES: &[&str] = &[
    "Hernández",
    "García",
    "Martínez",
    "López",
    "González",
    "Rodríguez",
    "Pérez",
    "Sánchez",
    "Ramírez",
    "Torres",
    "Flores",
    "Rivera",
    "Gómez",
    "Díaz",
    "Cruz",
    "Morales",
    "Reyes",
    "Gutiérrez",
    "Ortiz",
    "Chávez",
    "Ruiz",
    "Mendoza",
    "Aguilar",
    "Vázquez",
    "Castillo",
    "Jiménez",
    "Moreno",
    "Romero",
    "Herrera",
    "Medina",
    "Núñez",
    "Peña",
    "Ibarra",
    "Zúñiga",
];
pub(super) const PLACES: &[&str] = &[
    "del Bajío",
    "de Occidente",
    "del Norte",
    "del Pacífico",
    "Nacional",
    "Industrial",
    "del Centro",
    "Azteca",
    "Tapatía",
    "Regiomontana",
    "del Golfo",
    "Integral",
    "Global",
    "de México",
    "Sureste",
    "Continental",
];
pub(super) const SUFFIXES: &[&str] = &[
    "S.A. de C.V.",
    "S.A. de C.V.",
    "S. de R.L. de C.V.",
    "S.A.P.I. de C.V.",
    "S.C.",
];
