//! Stage 4b of the director's interpreter: which kind of answer a request wants and the
//! constraints on it, read from the folded message.
//!
//! - **Kind of record.** Licitaciones (tenders: «licitaciones», «convocatorias»,
//!   «concursos», «oportunidades») and Adjudicaciones («adjudicaciones», «contratos»,
//!   «le compró», «le adjudicó») are answered with those records, never with a
//!   selection of companies; a message that names companies («proveedores que ganaron
//!   licitaciones») stays a supplier search.
//! - **Rankings.** «¿quién le vende más…?», «¿qué dependencias compran más…?», «¿en
//!   qué estados se adjudica más…?», «año con año» group Adjudicaciones by supplier,
//!   buyer, state or year (`market_aggregate`).
//! - **Constraints** (read in `bounds`). Amounts («de más de 10 millones», «10 mdp para arriba», «entre 1
//!   y 3 millones», «medio millón o menos»), time windows («en 2024», «desde 2023»,
//!   «este año», «el año pasado», «este mes»), company size («medianas», «micro»),
//!   open tenders («abiertas», «vigentes», «puedo entrar»), the procedure («licitación
//!   pública», «adjudicación directa») and «top N» / «los N mejores».
//!
//! To add a word: put it in the list of its kind below; everything reads whole folded
//! words or word stems, so forms and accents follow.

use super::bounds::{amounts, number, size, spell_out, starts_any, window};
use super::words::phrase;
use crate::base::catalog::text::fold;

/// The kind of record a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordKind {
    #[default]
    Suppliers,
    Awards,
    Opportunities,
    /// Marcas de riesgo: the SAT's 69-B list and the other risk lists.
    Risks,
}

impl RecordKind {
    pub fn key(self) -> &'static str {
        match self {
            RecordKind::Suppliers => "suppliers",
            RecordKind::Awards => "awards",
            RecordKind::Opportunities => "opportunities",
            RecordKind::Risks => "risks",
        }
    }
}

/// What the message asks for beyond the giro, the place and the buyer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ask {
    pub kind: RecordKind,
    /// A ranking of Adjudicaciones grouped by `supplier`, `buyer`, `state` or `year`.
    pub rank: Option<&'static str>,
    /// Tenders still open.
    pub active: bool,
    /// `open`, `limited` or `direct`.
    pub procedure: Option<&'static str>,
    pub amount_min: Option<f64>,
    pub amount_max: Option<f64>,
    /// `YYYY` or `YYYY-MM`, inclusive.
    pub date_from: Option<String>,
    pub date_to: Option<String>,
    /// `micro`, `pequena`, `mediana` or `grande`.
    pub size_band: Option<&'static str>,
    /// «top 10», «los 5 mejores».
    pub top: Option<u32>,
    /// Marcas de riesgo of one kind (`sat_69b_presunto`…).
    pub mark_kind: Option<&'static str>,
}

impl Ask {
    /// Whether the message states a constraint of its own (size, amounts, dates).
    pub fn has_constraint(&self) -> bool {
        self.size_band.is_some()
            || self.amount_min.is_some()
            || self.amount_max.is_some()
            || self.date_from.is_some()
    }

    /// Whether the answer is not a list of companies: a ranking or records.
    pub fn is_records(&self) -> bool {
        self.rank.is_some() || self.kind != RecordKind::Suppliers
    }

    /// This (earlier) ask refined by a follow-up: the follow-up's constraints replace
    /// this one's, the kind of answer stays («¿y del año pasado?» after a ranking).
    pub fn refined_by(&self, later: &Ask) -> Ask {
        let mut out = self.clone();
        out.procedure = later.procedure.or(out.procedure);
        out.amount_min = later.amount_min.or(out.amount_min);
        out.amount_max = later.amount_max.or(out.amount_max);
        if later.date_from.is_some() || later.date_to.is_some() {
            out.date_from.clone_from(&later.date_from);
            out.date_to.clone_from(&later.date_to);
        }
        out.size_band = later.size_band.or(out.size_band);
        out.top = later.top.or(out.top);
        out.mark_kind = later.mark_kind.or(out.mark_kind);
        out.active |= later.active;
        out
    }
}

/// Words for companies (stems); a number right before one is a quantity.
pub(super) const COMPANY_NOUNS: &[&str] = &[
    "proveedor",
    "empresa",
    "fabricante",
    "distribuidor",
    "compania",
    "constructora",
    "despacho",
    "negocio",
    "agencia",
    "firma",
    "supplier",
    "vendor",
    "compan",
];
const TENDER_WORDS: &[&str] = &[
    "licitacion",
    "convocatoria",
    "concurso",
    "oportunidad",
    "tender",
    "bid",
    // The verb: «¿qué está licitando el IMSS?».
    "licitando",
    "licita",
    // «¿tiene algo publicado?».
    "publicad",
];
const AWARD_WORDS: &[&str] = &[
    "adjudicacion",
    "contrato",
    "compro",
    "adjudico",
    // «lo que le ha adjudicado», «contratos otorgados», «lo que ha comprado».
    "adjudicad",
    "otorgad",
    "otorgo",
    "comprad",
    "compras",
    "award",
    "contract",
];
/// Verbs of selling, buying or winning, as whole words (not «adjudicaciones»).
const SELL_VERBS: &[&str] = &[
    "vende",
    "venden",
    "vendio",
    "vendieron",
    "vendido",
    "vendan",
    "compra",
    "compran",
    "compro",
    "compraron",
    "adjudica",
    "adjudican",
    "adjudico",
    "gana",
    "ganan",
    "gano",
    "ganaron",
    "sell",
    "sells",
    "sold",
    "buy",
    "buys",
    "wins",
    "win",
    "facturan",
    "factura",
    "facturo",
    "venda",
    "gane",
    "vendiendo",
    "ganando",
    // Spending is buying, seen from the buyer («qué dependencia gasta más»).
    "gasta",
    "gastan",
    "gastado",
    "invierte",
    "invierten",
    "spend",
    "spends",
    "spent",
];
const MORE_WORDS: &[&str] = &["mas", "most", "mayor", "mayores"];
/// What a supplier wins, by which a ranking orders («más contratos», «más monto»).
const RANKED_BY: &[&str] = &[
    "contrato",
    "adjudicacion",
    "monto",
    "dinero",
    "lana",
    "factur",
];
/// Superlatives that, next to who is ranked, name a ranking («top proveedores»,
/// «biggest buyers», «principales dependencias»).
const SUPERLATIVES: &[&str] = &[
    "top",
    "biggest",
    "largest",
    "mayores",
    "principales",
    "lideres",
    "leading",
    "main",
];
/// Who a ranking orders: suppliers, buyers or states.
const RANKED_WHO: &[&str] = &[
    "proveedor",
    "supplier",
    "vendor",
    "seller",
    "vendedor",
    "empresa",
    "dependencia",
    "comprador",
    "buyer",
    "institucion",
    "estado",
    "state",
    "entidad",
    "contratista",
    "contractor",
];
/// A ranking named as such.
const RANKING_PHRASES: &[&str] = &[
    "ranking",
    "principales proveedores",
    "mayores proveedores",
    "proveedores lideres",
    "lideres del mercado",
    "quien lidera",
    "quienes lideran",
    "top de proveedores",
];

fn has(words: &[&str], list: &[&str]) -> bool {
    words.iter().any(|w| list.contains(w))
}

/// «¿hay algo abierto para meter propuesta?»: something open to bid on is a tender,
/// even when no word for tenders is said.
fn open_to_bid(folded: &str, words: &[&str]) -> bool {
    let open = starts_any(words, &["abiert", "vigente"])
        || has(words, &["viva", "vivas", "open", "todavia", "aun", "still"]);
    let bid = starts_any(
        words,
        &["propuesta", "cotiz", "particip", "concurs", "postul"],
    ) || phrase(folded, "meter propuesta");
    open && bid
}

/// Reads the message (`today`: the current year and month, for «este año»…).
pub fn read(message: &str, today: (i32, u32)) -> Ask {
    let folded = fold(&spell_out(&super::restate::restated(message)));
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    // «que ya hayan tenido contratos», «con contratos»: contracts as what companies
    // have, so the answer is still companies.
    let has_contracts = [
        "tenido", "tengan", "tienen", "tenga", "tiene", "con", "have", "with", "ganado", "ganaron",
        "ganen", "gano", "won",
    ]
    .iter()
    .any(|v| {
        phrase(&folded, &format!("{v} contratos"))
            || phrase(&folded, &format!("{v} adjudicaciones"))
    });
    // The head noun decides: «contratos … que le dio a constructoras» asks for
    // contracts; «constructoras que ganaron contratos» for companies.
    let first_of = |list: &[&str]| {
        words
            .iter()
            .position(|w| list.iter().any(|s| w.starts_with(s)))
    };
    let records_first = [AWARD_WORDS, TENDER_WORDS]
        .iter()
        .filter_map(|l| first_of(l))
        .min()
        .is_some_and(|at| first_of(COMPANY_NOUNS).is_none_or(|c| at < c));
    let names_companies = has_contracts || (starts_any(&words, COMPANY_NOUNS) && !records_first);
    let mut ask = Ask {
        kind: if risk_list(&folded, &words) {
            RecordKind::Risks
        } else if let Some(counted) = counted_kind(&words) {
            counted
        } else if names_companies {
            RecordKind::Suppliers
        } else if starts_any(&words, TENDER_WORDS)
            || open_to_bid(&folded, &words)
            // «¿hay algo abierto pa obra?»: something open is a tender.
            || (has(&words, &["algo", "something"])
                && starts_any(&words, &["abiert", "vigente", "activ", "open"]))
        {
            RecordKind::Opportunities
        } else if starts_any(&words, AWARD_WORDS) {
            RecordKind::Awards
        } else {
            RecordKind::Suppliers
        },
        ..Ask::default()
    };
    ask.rank = rank(&folded, &words);
    ask.active = ask.kind == RecordKind::Opportunities
        && (starts_any(
            &words,
            &["abiert", "vigente", "activa", "activo", "particip"],
        ) || phrase(&folded, "puedo entrar")
            || phrase(&folded, "en curso")
            || phrase(&folded, "en este momento")
            || phrase(&folded, "ahora mismo")
            || has(
                &words,
                &[
                    "ahorita",
                    "open",
                    "licitando",
                    "viva",
                    "vivas",
                    "vivo",
                    "vivos",
                ],
            ));
    ask.procedure =
        if phrase(&folded, "licitaciones publicas") || phrase(&folded, "licitacion publica") {
            Some("open")
        } else if starts_any(&words, &["invitacion"]) {
            Some("limited")
        } else if (phrase(&folded, "adjudicacion directa")
            || phrase(&folded, "adjudicaciones directas"))
            && !phrase(&folded, "no adjudicacion directa")
            && !phrase(&folded, "no adjudicaciones directas")
        {
            Some("direct")
        } else {
            None
        };
    (ask.amount_min, ask.amount_max) = amounts(&words);
    (ask.date_from, ask.date_to) = window(&folded, &words, today);
    ask.size_band = size(&words);
    ask.top = top(&words);
    if ask.kind == RecordKind::Risks {
        ask.mark_kind = mark_kind(&words);
    }
    ask
}

/// The SAT's 69-B list (or the risk lists) asked about as a list of its own — «¿cuántas
/// empresas tiene el SAT como definitivas en el 69-B?», «dame las presuntas del 69-B» —
/// not a check of companies already found («revisa si alguna de esas está en el 69-B»
/// is a screen of the selection).
fn risk_list(folded: &str, words: &[&str]) -> bool {
    let list = phrase(folded, "69-b")
        || phrase(folded, "69 b")
        || has(words, &["69b", "efos"])
        || phrase(folded, "lista negra")
        || phrase(folded, "marcas de riesgo");
    let listed = starts_any(
        words,
        &[
            "cuant", "dame", "lista", "listado", "cuales", "quienes", "muestra", "ensena", "busca",
            "empresas", "padron", "how", "which", "show",
        ],
    );
    let selection = starts_any(
        words,
        &[
            "esta", "esa", "esto", "eso", "alguna", "alguno", "ninguna", "ninguno", "ellas",
            "ellos", "selecc", "mis", "nuestr", "revis", "chec", "filtr", "valid", "pasal",
        ],
    );
    list && listed && !selection
}

/// «presuntas», «definitivos», «desvirtuadas», «sentencia favorable».
fn mark_kind(words: &[&str]) -> Option<&'static str> {
    if starts_any(words, &["presunt"]) {
        Some("sat_69b_presunto")
    } else if starts_any(words, &["definitiv"]) {
        Some("sat_69b_definitivo")
    } else if starts_any(words, &["desvirtuad"]) {
        Some("sat_69b_desvirtuado")
    } else if starts_any(words, &["sentencia"]) {
        Some("sat_69b_sentencia_favorable")
    } else {
        None
    }
}

/// What a count counts: the noun right after «cuántos», «número (total) de», «how
/// many» («¿cuántos contratos le dio la SEDENA a empresas de uniformes?» counts
/// Adjudicaciones, whatever else is named).
/// The kind a question asks for: the noun right after «¿cuántos…?», «¿qué…?»,
/// «¿cuáles…?» («¿qué contratos le dio el ISSSTE a empresas de…?» asks for
/// contracts, whatever companies it names later).
fn counted_kind(words: &[&str]) -> Option<RecordKind> {
    let at = words.iter().position(|w| {
        [
            "cuantos", "cuantas", "numero", "many", "cantidad", "que", "q", "cuales", "which",
            "what",
        ]
        .contains(w)
    })?;
    words[at + 1..]
        .iter()
        .filter(|w| {
            ![
                "de", "total", "el", "la", "los", "las", "hay", "tantos", "tantas", "le", "les",
                "ha", "han",
            ]
            .contains(w)
        })
        .take(1)
        .find_map(|w| {
            let is = |list: &[&str]| list.iter().any(|s| w.starts_with(s));
            if is(COMPANY_NOUNS) {
                Some(RecordKind::Suppliers)
            } else if is(TENDER_WORDS) || w.starts_with("tender") {
                Some(RecordKind::Opportunities)
            } else if is(AWARD_WORDS) || w.starts_with("contract") || w.starts_with("award") {
                Some(RecordKind::Awards)
            } else {
                None
            }
        })
}

fn rank(folded: &str, words: &[&str]) -> Option<&'static str> {
    // «año con año», «año x año», «año tras año», «year over year», «por año».
    let year_by_year = words.windows(3).any(|w| {
        ["ano", "year"].contains(&w[0])
            && ["con", "x", "por", "tras", "a", "over", "by"].contains(&w[1])
            && w[2] == w[0]
    });
    // «la tendencia», «cómo ha evolucionado», «¿sube o baja?»: over the years.
    let trend = starts_any(words, &["tendencia", "evoluci", "trend"])
        || phrase(folded, "sube o baja")
        || phrase(folded, "crece o baja")
        || phrase(folded, "ha crecido");
    if year_by_year || trend || phrase(folded, "por ano") || phrase(folded, "cada ano") {
        return Some("year");
    }
    // «más» as a comparison, not an amount bound («de más de 10 millones»).
    let more = words.iter().enumerate().any(|(i, w)| {
        MORE_WORDS.contains(w)
            && !(words.get(i + 1).is_some_and(|n| ["de", "que"].contains(n))
                && words.get(i + 2).is_some_and(|n| number(n).is_some()))
    }) || phrase(folded, "top proveedores");
    // Who sells most, in verbs («quién le vende más») or in what they win («los que
    // tienen más contratos», «más monto»); or a ranking named as such.
    let sells = has(words, SELL_VERBS) || starts_any(words, RANKED_BY);
    // Next to each other, or with the giro between («biggest cleaning contractors»).
    let who_at = |i: usize| {
        words
            .get(i)
            .is_some_and(|w| RANKED_WHO.iter().any(|r| w.starts_with(r)))
    };
    let superlative_of_who = words.iter().enumerate().any(|(i, w)| {
        (SUPERLATIVES.contains(w) && (who_at(i + 1) || who_at(i + 2)))
            || (who_at(i) && words.get(i + 1).is_some_and(|n| SUPERLATIVES.contains(n)))
    });
    // «el proveedor más grande de la CFE», «las dependencias más activas»: «más» and
    // an adjective of size next to who is ranked.
    let biggest_who = words.windows(4).any(|w| {
        RANKED_WHO.iter().any(|r| w[0].starts_with(r))
            && w[1..].windows(2).any(|p| {
                p[0] == "mas"
                    && ["grande", "fuert", "important", "relevant", "activ"]
                        .iter()
                        .any(|a| p[1].starts_with(a))
            })
    });
    // «top 5 por monto», «x monto adjudicado», «by amount»: an order by what is won.
    let ordered_by = words.windows(2).any(|pair| {
        ["por", "x", "by", "segun"].contains(&pair[0])
            && (RANKED_BY.iter().any(|r| pair[1].starts_with(r))
                || ["amount", "value", "numero"].contains(&pair[1]))
    });
    // «¿quién se lleva la lana…?», «quiénes ganan los contratos de…»: who wins what is
    // won, asked as such.
    let who_wins = has(words, &["quien", "quienes", "who"])
        && starts_any(words, &["lleva", "gana", "factur", "takes", "wins", "gets"])
        && starts_any(words, RANKED_BY);
    // «¿quién es el rey de…?», «quién manda ahí», «los 5 más pesados», «los meros
    // meros», «los pesos pesados», «los peces gordos»: who leads, in the ways people
    // say it. («las dos de arriba» is the top
    // of the selection, not a ranking.)
    let leads = (has(words, &["quien", "quienes", "who"])
        && (has(words, &["rey", "reyes", "reina", "reinas"])
            || starts_any(words, &["manda", "domin", "lider", "gallo"])))
        || words.windows(2).any(|p| {
            MORE_WORDS.contains(&p[0])
                && ["pesad", "fuert", "chingon"]
                    .iter()
                    .any(|a| p[1].starts_with(a))
        })
        || phrase(folded, "meros meros")
        || phrase(folded, "pesos pesados")
        || phrase(folded, "peces gordos")
        || phrase(folded, "heavy hitters");
    let named = superlative_of_who
        || leads
        || biggest_who
        || ordered_by
        || who_wins
        || RANKING_PHRASES.iter().any(|p| phrase(folded, p));
    if !(named || (more && sells)) {
        return None;
    }
    if starts_any(words, &["dependencia", "comprador", "institucion", "buyer"]) {
        Some("buyer")
    } else if starts_any(words, &["estado", "entidad", "state"])
        || has(words, &["edos"])
        || phrase(folded, "que edo")
        || phrase(folded, "q edo")
    {
        Some("state")
    } else {
        Some("supplier")
    }
}

fn top(words: &[&str]) -> Option<u32> {
    // Digits or a number word («los siete que más…»), never «un»/«una» (an article).
    let n = |w: &str| {
        super::words::number(w)
            .filter(|n| (1..=50).contains(n))
            .filter(|_| !["un", "una", "uno"].contains(&w))
    };
    for (i, w) in words.iter().enumerate() {
        if *w == "top" {
            if let Some(v) = words.get(i + 1).and_then(|w| n(w)) {
                return Some(v);
            }
        }
        // «los 8 vendedores», «3 dependencias»: a number of who is ranked.
        if RANKED_WHO.iter().any(|r| w.starts_with(r)) {
            if let Some(v) = i.checked_sub(1).and_then(|p| n(words[p])) {
                return Some(v);
            }
        }
        // «los 3 que más facturan», «las 4 q más venden».
        if ["los", "las", "the"].contains(w)
            && words
                .get(i + 2)
                .is_some_and(|q| ["que", "q", "who", "that"].contains(q))
            && words.get(i + 3).is_some_and(|m| MORE_WORDS.contains(m))
        {
            if let Some(v) = words.get(i + 1).and_then(|w| n(w)) {
                return Some(v);
            }
        }
        // «los 10 más pesados», «las 4 más grandes».
        if ["los", "las", "the"].contains(w)
            && words.get(i + 2).is_some_and(|m| MORE_WORDS.contains(m))
        {
            if let Some(v) = words.get(i + 1).and_then(|w| n(w)) {
                return Some(v);
            }
        }
        // «top 5» said as a cap: «12 max», «un máximo de 10».
        if let Some(v) = super::words::cap_at(words, i).filter(|v| *v <= 50) {
            return Some(v);
        }
        // «los 3 pesos pesados», «los 5 peces gordos».
        if ["pesos", "peces"].contains(w)
            && words
                .get(i + 1)
                .is_some_and(|n| ["pesados", "gordos"].contains(n))
        {
            if let Some(v) = i.checked_sub(1).and_then(|p| n(words[p])) {
                return Some(v);
            }
        }
        // «los 5 mejores», «los 10 primeros», «los mejores 5», «las primeras 8».
        let ranked = ["mejor", "primer", "first", "best"]
            .iter()
            .any(|p| w.starts_with(p));
        if ranked {
            if let Some(v) = i.checked_sub(1).and_then(|p| n(words[p])) {
                return Some(v);
            }
            if let Some(v) = words.get(i + 1).and_then(|w| n(w)) {
                return Some(v);
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "kinds_tests.rs"]
mod tests;
