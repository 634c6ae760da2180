//! Stage 4 of the director's interpreter: what kind of message it is before anything is
//! planned. Greetings, thanks and small talk get a short answer and change nothing; a
//! message that is not a clear request never searches and never touches the
//! selection, the saved list or a draft: Luna answers with an `encuadre` that repeats
//! what it understood («Entendí: empaque, Jalisco. ¿Qué quieres hacer con ellos?»).
//!
//! A search is clear when the message names a criterion and either asks for companies
//! (a search verb or a company noun: `SEARCH_CUES`) or the board has no selection yet
//! (nothing can be lost). To add an intent: add its cue words here or in `grammar`, and
//! its branch in `planner::plan`, before the search.

use crate::agent::contract::intent::{FactField, Pregunta, TurnIntent, TurnOutput};

use super::grammar::Request;
use super::words::{near, Token};

/// Kinds of message that are not requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SmallTalk {
    Greeting,
    Thanks,
    Help,
}

const GREETINGS: &[&str] = &[
    "hola",
    "buenas",
    "buen dia",
    "buenos dias",
    "buenas tardes",
    "buenas noches",
    "que tal",
    "hey",
    "hi",
    "hello",
    "saludos",
    "que onda",
    "como estas",
];
const THANKS: &[&str] = &[
    "gracias",
    "muchas gracias",
    "mil gracias",
    "thanks",
    "thank you",
    "ok",
    "okey",
    "vale",
    "perfecto",
    "genial",
    "excelente",
    "listo",
    "de acuerdo",
    "sale",
    "va",
    "chido",
    "super",
    "bien",
    "muy bien",
    "entendido",
    "ya vi",
    "adios",
    "bye",
    "hasta luego",
    "nos vemos",
];
const HELP: &[&str] = &[
    "que puedes hacer",
    "que haces",
    "ayuda",
    "como funciona",
    "como te uso",
    "help",
    "quien eres",
    "que sabes hacer",
];

/// Words that ask for companies or records: with a criterion they make a search.
const SEARCH_CUES: &[&str] = &[
    "busca",
    "buscame",
    "buscar",
    "buscas",
    "busqueda",
    "encuentra",
    "encuentrame",
    "quiero",
    "ocupo",
    "necesito",
    "dame",
    "damelos",
    "muestra",
    "muestrame",
    "ensename",
    "lista",
    "listado",
    "arma",
    "armame",
    "hay",
    "top",
    "consigue",
    "consigueme",
    "trae",
    "traeme",
    "saca",
    "sacame",
    "localiza",
    "proveedores",
    "proveedor",
    "empresas",
    "empresa",
    "fabricantes",
    "distribuidores",
    "prospectos",
    "opciones",
    "quienes",
    "cuales",
    "ver",
    "looking",
    "find",
    "search",
    "suppliers",
    "vendan",
    "venden",
];

fn phrase_in(words: &[&str], phrase: &str) -> bool {
    let p: Vec<&str> = phrase.split(' ').collect();
    words.windows(p.len()).any(|w| w == p.as_slice())
}

/// Greeting, thanks or a help question with nothing else in the message.
pub fn small_talk(tokens: &[Token]) -> Option<SmallTalk> {
    let words: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
    if words.is_empty() {
        return Some(SmallTalk::Thanks);
    }
    if HELP.iter().any(|p| phrase_in(&words, p)) {
        return Some(SmallTalk::Help);
    }
    // Small talk is short: every word is part of a courtesy phrase or filler.
    const FILLER: &[&str] = &[
        "luna", "y", "tu", "oye", "pues", "eh", "muy", "todo", "por", "a", "ti",
    ];
    let courtesy = |w: &str| {
        GREETINGS
            .iter()
            .chain(THANKS)
            .any(|p| p.split(' ').any(|x| x == w))
            || FILLER.contains(&w)
    };
    if words.len() > 8 || !words.iter().all(|w| courtesy(w)) {
        return None;
    }
    if GREETINGS.iter().any(|p| phrase_in(&words, p)) {
        Some(SmallTalk::Greeting)
    } else {
        Some(SmallTalk::Thanks)
    }
}

/// Whether the message asks for companies or records.
pub fn search_cue(tokens: &[Token]) -> bool {
    tokens.iter().any(|t| {
        SEARCH_CUES
            .iter()
            .any(|c| t.word == *c || (c.len() >= 7 && near(&t.word, c)))
            || t.word.starts_with("busc")
            || t.word.starts_with("cuant")
            || t.word.starts_with("encuentr")
    })
}

/// «empaque, Jalisco, IMSS»: the criteria understood, in words.
pub fn understood(req: &Request) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some((_, label)) = &req.giro {
        parts.push(label.to_lowercase());
    }
    if let Some(q) = &req.query {
        parts.push(format!("«{q}»"));
    }
    if let Some(region) = &req.region {
        parts.push(format!("la región {region}"));
    }
    parts.extend(req.states.iter().map(|(_, name)| name.clone()));
    if req.states.is_empty() {
        if let Some((_, name)) = &req.state {
            parts.push(name.clone());
        }
    }
    parts.extend(req.buyers.iter().cloned());
    if req.buyers.is_empty() && req.sold_to_government {
        parts.push("que ya le vendieron a gobierno".into());
    }
    parts.join(", ")
}

/// The answer to small talk: short, and nothing changes.
/// `may_ask_giro`: the session does not know the giro yet (a known field is never asked).
pub fn small_talk_answer(kind: SmallTalk, may_ask_giro: bool) -> TurnOutput {
    let narracion = match kind {
        SmallTalk::Greeting => "¡Hola! Dime qué empresas buscas —giro y estado— y te armo la lista.",
        SmallTalk::Thanks => "Con gusto. Aquí sigo si necesitas algo más.",
        SmallTalk::Help => "Busco Proveedores, Licitaciones y Adjudicaciones de gobierno, cuento y comparo segmentos, reviso marcas de riesgo, guardo empresas en tu CRM, consigo contactos y armo secuencias de correo. ¿Qué empresas buscas? Por ejemplo: «fabricantes de empaque en Jalisco que ya le vendieron a gobierno».",
    };
    // A question about Luna ends in a framing question: what to look for.
    let intent = match kind {
        SmallTalk::Help => TurnIntent::Encuadre {
            criterio: String::new(),
            pregunta: may_ask_giro.then(|| Pregunta {
                texto: "¿Qué giro buscas y en qué estado?".into(),
                campo: FactField::Giro,
                opciones: None,
            }),
        },
        SmallTalk::Greeting | SmallTalk::Thanks => TurnIntent::Responder {},
    };
    TurnOutput {
        intent,
        narracion: narracion.into(),
    }
}

/// The answer to a message that is not a clear request: what was understood, and a
/// question; the board is left as it was.
pub fn unclear_answer(req: &Request, has_selection: bool) -> TurnOutput {
    let got = understood(req);
    let question = if has_selection {
        "¿Qué quieres hacer con ellos: buscar de nuevo, guardarlos, conseguir contactos o revisar riesgos?"
    } else {
        "¿Qué quieres hacer: buscar empresas, contarlas o ver Licitaciones abiertas?"
    };
    let narracion = if got.is_empty() {
        format!("No entendí bien qué necesitas; no cambié nada. {question}")
    } else {
        format!("Entendí: {got}. {question}")
    };
    TurnOutput {
        intent: TurnIntent::Encuadre {
            criterio: got,
            pregunta: None,
        },
        narracion,
    }
}

/// «prospectos en Saltillo»: a place and nothing else, with no giro known in the
/// session or the profile: ask which giro, saying what was understood.
pub fn giro_question(req: &Request) -> TurnOutput {
    let got = understood(req);
    let texto = "¿De qué giro? Por ejemplo: construcción, limpieza, empaque o servicios de TI.";
    TurnOutput {
        intent: TurnIntent::Encuadre {
            criterio: got.clone(),
            pregunta: Some(Pregunta {
                texto: texto.into(),
                campo: FactField::Giro,
                opciones: None,
            }),
        },
        narracion: format!("Entendí: {got}. {texto}"),
    }
}

/// A city that exists in several states: ask which one.
pub fn ambiguous_city_answer(
    req: &Request,
    city: &str,
    states: &[String],
    may_ask_state: bool,
) -> TurnOutput {
    let texto = format!("¿En qué estado: {}?", states.join(", "));
    let got = understood(req);
    TurnOutput {
        intent: TurnIntent::Encuadre {
            criterio: got,
            pregunta: may_ask_state.then(|| Pregunta {
                texto: texto.clone(),
                campo: FactField::Estado,
                opciones: Some(states.to_vec()),
            }),
        },
        narracion: format!("Hay un municipio «{city}» en varios estados. {texto}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::director::words::tokens;

    #[test]
    fn courtesy_is_small_talk_and_requests_are_not() {
        assert_eq!(
            small_talk(&tokens("¡Hola Luna!")),
            Some(SmallTalk::Greeting)
        );
        assert_eq!(
            small_talk(&tokens("muchas gracias, perfecto")),
            Some(SmallTalk::Thanks)
        );
        assert_eq!(
            small_talk(&tokens("¿qué puedes hacer?")),
            Some(SmallTalk::Help)
        );
        assert_eq!(small_talk(&tokens("hola, busco empaque en Jalisco")), None);
        assert!(search_cue(&tokens("ocupo empaque en jalisco")));
        assert!(!search_cue(&tokens("mándales ya a todos")));
    }
}
