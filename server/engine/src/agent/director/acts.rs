//! Stage 4a of the director's interpreter: the actions a message asks for (a note, a
//! question about credits, a long research, an outside channel, a sequence, contacts,
//! saving, a risk screen of named RFCs, a correction of team knowledge), read from cue
//! words rather than fixed sentences.
//!
//! A cue is a short phrase whose words are matched through [`words::find`]: equal, the
//! same Snowball stem, a typo of a long word, or a prefix (`investig*`). So «anota»,
//! «anótale», «apúntale» and «anotame» are one cue family, and «créditos», «credits»
//! and «credito» another. Each action is decided from its cue families and, where two
//! actions share words («correo» is both a contact and a sequence step), from what else
//! the message says.
//!
//! To add a way of asking: add its words to the action's cue list below; forms and
//! typos follow. To add an action: a field on [`Acts`], its cues, and its branch in
//! `planner::plan`.

use super::words::{find, Token};

/// What the person asks about their credits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UsageFocus {
    /// Credits in general (intelligence and contact).
    Credits,
    /// «saldo de contactos»: contact credits.
    Contacts,
    /// «búsquedas que me quedan hoy».
    Searches,
    /// «cuánto he gastado»: the period's allowance against what is left.
    Spent,
}

/// The actions read from one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acts {
    pub usage: Option<UsageFocus>,
    /// The note's text, in the person's words.
    pub note: Option<String>,
    pub research: bool,
    /// An outside channel or system Luna cannot reach (its display name).
    pub connector: Option<String>,
    /// A sequence of N steps.
    pub sequence_steps: Option<u32>,
    /// Contacts asked for (the number of companies when one is named).
    pub contacts: bool,
    pub save: bool,
    /// «en la etapa Propuesta»: where a save or a sequence's audience lives (folded).
    pub stage: Option<String>,
    /// RFCs written in the message, upper case, in order.
    pub rfcs: Vec<String>,
    /// A correction of what the team knows («está mal», «corrige», «desactualizado»).
    pub knowledge_edit: bool,
    /// «fusiona esa nota»: a merge into Knowledge.
    pub merge: bool,
}

fn any(tokens: &[Token], cues: &[&str]) -> bool {
    cues.iter().any(|c| find(tokens, c).is_some())
}

/// The first cue found and where it ends (token index past it).
fn first_end(tokens: &[Token], cues: &[&str]) -> Option<(usize, usize)> {
    cues.iter()
        .filter_map(|c| find(tokens, c))
        .min_by_key(|(start, end)| (*start, usize::MAX - end))
}

const CREDIT_WORDS: &[&str] = &["credito", "credits", "credit", "saldo", "balance"];
const LEFT_WORDS: &[&str] = &[
    "me quedan",
    "me queda",
    "nos quedan",
    "nos queda",
    "quedan",
    "restan",
    "left",
    "tengo",
    "tenemos",
    "disponible*",
    "sobra*",
];
const SPENT_WORDS: &[&str] = &["gast*", "consum*", "spent", "used"];
const SEARCH_WORDS: &[&str] = &["busqueda", "consulta", "lectura*", "searches", "reads"];

fn usage(tokens: &[Token]) -> Option<UsageFocus> {
    let credits = any(tokens, CREDIT_WORDS);
    let spent = any(tokens, SPENT_WORDS);
    let searches_left = any(tokens, SEARCH_WORDS) && any(tokens, LEFT_WORDS);
    let plan = any(
        tokens,
        &[
            "cuanto me queda",
            "cuanto nos queda",
            "que plan",
            "mi plan",
            "nuestro plan",
            "cuota",
            "=quota",
            "limite del plan",
        ],
    );
    if !(credits || plan || searches_left || (spent && any(tokens, &["cuanto", "how much"]))) {
        return None;
    }
    Some(if any(tokens, &["contacto", "contacts"]) && credits {
        UsageFocus::Contacts
    } else if searches_left {
        UsageFocus::Searches
    } else if spent {
        UsageFocus::Spent
    } else {
        UsageFocus::Credits
    })
}

/// Phrases that introduce a note for the team; the note is what follows.
const NOTE_MARKERS: &[&str] = &[
    "deja una nota",
    "dejar una nota",
    "deja nota",
    "dejale una nota",
    "toma nota",
    "tomen nota",
    "nota para el equipo",
    "anot*",
    "apunt*",
    "recuerda que",
    "recuerden que",
    "acuerdate",
    "acuerdense",
    "acuerdese",
    "no olvides que",
    "no olviden que",
    "ten en cuenta que",
    "tengan en cuenta que",
    "toma en cuenta que",
    "remember that",
    "keep in mind that",
    "recordatorio",
    "que el equipo sepa",
    "que sepa el equipo",
    "que todos sepan",
    "agrega a cerebro",
    "agrega al cerebro",
    "agregalo a cerebro",
    "guarda en cerebro",
    "guarda en el cerebro",
    "note that",
    "nota",
];

/// Verbs that make or keep a note when they come right before «nota».
const NOTE_VERBS: &[&str] = &[
    "guard*", "haz*", "crea*", "escrib*", "agreg*", "pon*", "dej*", "sube*", "registr*", "add",
    "save", "write", "make",
];

/// The note's text in the person's own words (case and accents kept): the words of
/// `message` after the marker, without a leading «que», «:» or «,».
/// Who a note is for: said next to a verb of keeping or telling («guarda esto para el
/// equipo:», «para que lo sepa todo el equipo:», «compártelo con el equipo ->»), what
/// follows the separator is a note.
const TEAM_WORDS: &[&str] = &["equipo", "team", "cerebro", "todos"];
const KEEP_VERBS: &[&str] = &[
    "guard*", "sep*", "sab*", "compart*", "avis*", "agreg*", "registr*", "dej*", "keep", "save",
    "enter*",
];

fn team_note(message: &str) -> Option<String> {
    for sep in ["->", ":", "—", " - "] {
        let Some((head, tail)) = message.split_once(sep) else {
            continue;
        };
        let head = crate::agent::director::words::tokens(head);
        let tail = tail.trim();
        if head.len() <= 10
            && any(&head, TEAM_WORDS)
            && any(&head, KEEP_VERBS)
            && tail.split_whitespace().count() >= 3
        {
            return Some(tail.to_owned());
        }
    }
    None
}

/// A closing clause that keeps what came before as a note: «…, déjalo como nota»,
/// «…. anótalo», «… ponlo en una nota».
fn trailing_note(message: &str) -> Option<String> {
    let cut = message
        .trim_end()
        .trim_end_matches(['.', '!'])
        .rfind(['.', ',', ';'])?;
    let (head, tail) = message.split_at(cut);
    let tail = crate::agent::director::words::tokens(tail);
    let closes = tail.len() <= 5
        && (any(&tail, &["=anotalo", "=apuntalo", "=anotala", "=apuntala"])
            || (any(&tail, &["=nota", "=notas", "=note"])
                && any(
                    &tail,
                    &["dej*", "guard*", "pon*", "sube*", "agreg*", "save", "keep"],
                )));
    let head = head
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_start_matches("ojo")
        .trim_start_matches("Ojo")
        .trim_start_matches([',', ':', ' ']);
    (closes && head.split_whitespace().count() >= 3).then(|| head.to_owned())
}

fn note(message: &str, tokens: &[Token]) -> Option<String> {
    let Some((start, end)) = first_end(tokens, NOTE_MARKERS) else {
        return team_note(message).or_else(|| trailing_note(message));
    };
    // A note marker opens its clause: «toma nota», not «la nota de ayer». A verb of
    // making or keeping may come first: «guarda una nota:», «hazme una nota:».
    let before = &tokens[..start];
    let filler = |t: &Token| {
        [
            "ojo", "oye", "luna", "porfa", "por", "favor", "y", "una", "un", "esta", "la",
        ]
        .contains(&t.word.as_str())
    };
    let opens = before.iter().all(filler)
        || (before.len() <= 3
            && any(before, NOTE_VERBS)
            && before
                .iter()
                .all(|t| filler(t) || any(std::slice::from_ref(t), NOTE_VERBS)));
    if !opens {
        return trailing_note(message);
    }
    let mut skip = end;
    while tokens
        .get(skip)
        .is_some_and(|t| ["que", "q", "de", "esto", "lo", "siguiente"].contains(&t.word.as_str()))
    {
        skip += 1;
    }
    let rest = original_from(message, skip)?;
    let rest = rest.trim_start_matches([':', ',', ';', '-', ' ']).trim();
    (rest.split_whitespace().count() >= 2).then(|| rest.to_owned())
}

/// The original text from folded token `index` on: each whitespace word of the
/// message folds into zero or more tokens.
fn original_from(message: &str, index: usize) -> Option<String> {
    let mut seen = 0;
    let words: Vec<&str> = message.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let n = crate::base::catalog::text::fold(w)
            .split(' ')
            .filter(|s| !s.is_empty())
            .count();
        if seen + n > index {
            return Some(words[i..].join(" "));
        }
        seen += n;
    }
    None
}

const RESEARCH_CUES: &[&str] = &[
    "investig*",
    "=research",
    "estudio de mercado",
    "estudio del mercado",
    "estudio completo",
    "analisis profundo",
    "analisis a fondo",
    "analisis completo",
    "analisis del mercado",
    "a fondo",
    "a profundidad",
    "deep dive",
    "panorama del mercado",
    "panorama completo",
    "reporte del mercado",
    "informe del mercado",
    "quien domina",
    "quienes dominan",
    "entender el mercado",
    "market research",
    "analisis de mercado",
    "analisis del sector",
    "estudio del sector",
    "estudio de la industria",
    "analisis de la industria",
    "mapa del mercado",
    "radiografia",
    "reporte completo",
    "informe completo",
    "reporte de mercado",
    "informe de mercado",
    "benchmark",
];

/// Outside channels and systems, and the name Luna says back.
const CONNECTORS: &[(&str, &str)] = &[
    ("=whatsapp", "WhatsApp"),
    ("=whats", "WhatsApp"),
    ("=wasap", "WhatsApp"),
    ("=guasap", "WhatsApp"),
    ("=sms", "SMS"),
    ("=mensaje =de =texto", "SMS"),
    ("=linkedin", "LinkedIn"),
    ("=excel", "Excel"),
    ("=hoja =de =calculo", "una hoja de cálculo (Excel)"),
    ("=spreadsheet", "una hoja de cálculo (Excel)"),
    ("=google =sheets", "Google Sheets"),
    ("=sheets", "Google Sheets"),
    ("=csv", "un archivo CSV"),
    ("=hubspot", "HubSpot"),
    ("=salesforce", "Salesforce"),
    ("=pipedrive", "Pipedrive"),
    ("=zoho", "Zoho"),
    ("=monday", "Monday"),
    ("=odoo", "Odoo"),
    ("=bitrix", "Bitrix24"),
    ("=bitrix24", "Bitrix24"),
    ("=dynamics", "Dynamics"),
    ("=notion", "Notion"),
    ("=gmail", "Gmail"),
    ("=outlook", "Outlook"),
    ("=slack", "Slack"),
    ("=google =calendar", "Google Calendar"),
    ("=calendly", "Calendly"),
    ("exporta*", "una exportación de archivos"),
    ("descarga*", "una exportación de archivos"),
    ("=llamales", "llamadas telefónicas"),
    ("=marcales", "llamadas telefónicas"),
];

fn connector(tokens: &[Token]) -> Option<String> {
    // «whats my balance?»: English «what's», not WhatsApp.
    let english = |start: usize| {
        tokens[start].word == "whats"
            && tokens.get(start + 1).is_some_and(|t| {
                ["my", "the", "is", "up", "new", "our", "your", "left"].contains(&t.word.as_str())
            })
    };
    // The most specific channel named: an export to Excel says Excel.
    let mut found: Vec<(usize, &str)> = CONNECTORS
        .iter()
        .filter_map(|(cue, name)| find(tokens, cue).map(|(start, _)| (start, *name)))
        .filter(|(start, _)| !english(*start))
        .collect();
    found.sort_by_key(|(start, name)| (name.starts_with("una exportación"), *start));
    found.first().map(|(_, name)| (*name).to_owned())
}

const SEQUENCE_CUES: &[&str] = &[
    "secuencia",
    "cadencia",
    "sequence",
    "drip",
    "campana de correo",
    "campana de mail",
    "campana de email",
    "seguimiento por correo",
    "seguimiento por mail",
    "correos de seguimiento",
    "mails de seguimiento",
    "seguimiento de correo",
    "seguimiento de mail",
    "serie de correo",
    "serie de mail",
    "flujo de correo",
];
const WRITE_VERBS: &[&str] = &[
    "escrib*", "redact*", "prepar*", "arma*", "hazme", "haz", "write", "draft",
];
const EMAIL_WORDS: &[&str] = &[
    "correo*", "mail*", "email*", "mensaje*", "step*", "paso*", "toque*",
];

/// Words that make the number after them approximate: «como 5», «unos 4».
const ABOUT: &[&str] = &[
    "como",
    "unos",
    "unas",
    "tipo",
    "aprox",
    "aproximadamente",
    "about",
    "around",
];

/// The number of steps of a sequence asked for: «3 correos», «3-step», «de tres
/// mails», «2 correos nada más»; three when none is named.
fn steps(tokens: &[Token]) -> u32 {
    for (i, t) in tokens.iter().enumerate() {
        if let Some(n) = super::grammar::number(&t.word) {
            let after = &tokens[i + 1..(i + 3).min(tokens.len())];
            if (1..=8).contains(&n)
                && after.iter().any(|a| {
                    EMAIL_WORDS
                        .iter()
                        .any(|w| find(std::slice::from_ref(a), w).is_some())
                })
            {
                return n;
            }
        }
    }
    // «un seguimiento de correos, como 5», «de unos 4»: an approximate count said apart.
    tokens
        .windows(2)
        .find_map(|w| {
            ABOUT
                .contains(&w[0].word.as_str())
                .then(|| super::grammar::number(&w[1].word))
                .flatten()
                .filter(|n| (2..=8).contains(n))
        })
        .unwrap_or(3)
}

fn sequence(tokens: &[Token]) -> Option<u32> {
    let asked = any(tokens, SEQUENCE_CUES)
        || (any(tokens, WRITE_VERBS)
            && tokens.iter().any(|t| {
                ["correos", "mails", "emails", "pasos", "steps"].contains(&t.word.as_str())
            })
            && !any(tokens, &["correo de", "correos de", "mails de", "contacto"]));
    asked.then(|| steps(tokens))
}

const CONTACT_CUES: &[&str] = &[
    "=contacto",
    "=contactos",
    "telefono",
    "tel",
    "decision makers",
    "decision maker",
    "tomador de decision",
    "tomadores de decision",
    "decisor",
    "quien decide",
    "quien compra",
    "datos de",
    "correo de",
    "correos de",
    "mail de",
    "mails de",
    "email de",
    "emails de",
    "contacts",
    "hablar con",
    "platicar con",
    "llegarle a",
    "sus datos",
];

/// Who a contact is, by role: with a verb of getting they ask for contacts («sácame
/// al de compras», «quiero al director»).
const ROLE_WORDS: &[&str] = &[
    "el de compras",
    "los de compras",
    "la de compras",
    "jefe de compras",
    "gerente*",
    "=director",
    "=directora",
    "=directores",
    "=directoras",
    "encargad*",
    "responsable de compras",
];

/// Verbs of revealing: the product's own word for getting contacts.
const REVEAL_VERBS: &[&str] = &["revela*", "revelar", "desbloquea*", "reveal*", "unlock*"];

/// Verbs of getting something for the person: with an email or a contact word they
/// ask for contacts.
const GET_VERBS: &[&str] = &[
    "dame",
    "consigue*",
    "saca*",
    "pasame",
    "necesito",
    "quiero",
    "ocupo",
    "busca*",
    "revela*",
    "trae*",
    "jala*",
    "obten*",
    "get",
    "find",
    "give",
    "grab",
    "pull",
    "need",
    "want",
];

fn contacts(tokens: &[Token], sequence: bool) -> bool {
    let wants = any(tokens, GET_VERBS);
    if sequence {
        // In a sequence request the emails and contacts are usually its audience
        // («5 correos para esos contactos»): contacts only when asked for with a verb
        // of getting («consígueme el correo de los 10 mejores y arma una secuencia»).
        return wants
            && any(
                tokens,
                &[
                    "correo de",
                    "correos de",
                    "contacto*",
                    "telefono",
                    "email* of",
                    "email* for",
                ],
            );
    }
    any(tokens, CONTACT_CUES)
        || any(tokens, REVEAL_VERBS)
        || ((any(tokens, &["correo*", "mail*", "email*"]) || any(tokens, ROLE_WORDS)) && wants)
}

/// «guárdame estas», «guárdalas», «guardar»: a form of «guardar» that asks to keep,
/// not «guardados» (what is already kept) nor «guardias» (security guards).
fn keep_verb(tokens: &[Token]) -> bool {
    tokens.iter().any(|t| {
        t.word.starts_with("guarda")
            && !t.word.starts_with("guardad")
            && !t.word.starts_with("guardaesp")
    }) || tokens
        .iter()
        .any(|t| ["guardes", "guarden", "save"].contains(&t.word.as_str()))
}

const SAVE_CUES: &[&str] = &[
    "al crm",
    "en el crm",
    "a mi crm",
    "al pipeline",
    "al embudo",
];

/// «en la etapa Propuesta», «para los que están en Nuevo», «a Propuesta»: the stage
/// named (folded), at most three words.
fn stage(tokens: &[Token]) -> Option<String> {
    let (_, end) = first_end(
        tokens,
        &[
            "en la etapa de",
            "en la etapa",
            "a la etapa de",
            "a la etapa",
            "etapa de",
            "etapa",
            "que estan en",
            "que esten en",
            "en la columna",
        ],
    )?;
    let words: Vec<&str> = tokens[end..]
        .iter()
        .map(|t| t.word.as_str())
        .take_while(|w| !["y", "con", "para", "porfa", "por", "de"].contains(w))
        .take(3)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// RFCs in the message: 3 (company) or 4 (person) letters, six digits of date, three
/// of homoclave. Upper-cased; duplicates dropped.
pub fn rfcs(tokens: &[Token]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tokens {
        let w = t.word.as_bytes();
        let letters = w
            .iter()
            .take_while(|c| c.is_ascii_alphabetic() || **c == b'&')
            .count();
        let shape = (letters == 3 || letters == 4)
            && w.len() == letters + 9
            && w[letters..letters + 6].iter().all(u8::is_ascii_digit)
            && w[letters + 6..].iter().all(u8::is_ascii_alphanumeric);
        let rfc = t.word.to_uppercase();
        if shape && !out.contains(&rfc) {
            out.push(rfc);
        }
    }
    out
}

/// What the team knows, by the names its topics go by: an edit verb next to one of
/// these is a correction of Knowledge, not a search («el ICP ya no aplica, quítale el
/// Edomex», «en lo de objeciones falta una, agrégala»).
const KNOWLEDGE_NOUNS: &[&str] = &[
    "icp",
    "cliente ideal",
    "objecion*",
    "precios de referencia",
    "lista de precios",
    "playbook",
    "guion",
    "pitch",
    "cerebro",
    "lo que sabe el equipo",
    "lo que sabemos",
    // A note named as the one meant: «actualiza esa nota», «cambia la nota».
    "esa nota",
    "esta nota",
    "la nota",
    "mi nota",
];
const EDIT_VERBS: &[&str] = &[
    "edita*",
    "corrige*",
    "agrega*",
    "quita*",
    "cambia*",
    "actualiza*",
    "borra*",
    "pon",
    "ponle",
    "falta",
    "faltan",
    "ya no aplica",
    "ya no es",
    "fix",
    "update",
    "add",
    "remove",
];

const EDIT_CUES: &[&str] = &[
    "corrige*",
    "corregir",
    "esta mal",
    "estan mal",
    "desactualizad*",
    "ya no es",
    "ya no vendemos",
    "ya no usamos",
    "ya usamos",
    "actualiza el tema",
    "actualiza la nota",
    "cambia el tema",
    "edita el tema",
    "edita la nota",
    "esta equivocad*",
    "no es correcto",
    "is wrong",
    "outdated",
];

/// Reads the actions of one message.
pub fn read(message: &str, tokens: &[Token]) -> Acts {
    let sequence_steps = sequence(tokens);
    let note = note(message, tokens);
    // A merge names itself («fusiona», «merge»), or an approving verb names what
    // the team knows as where the note goes («intégrala a lo que ya sabemos»).
    let merge = any(tokens, &["fusiona*", "merge*", "mergea*"])
        || (any(
            tokens,
            &[
                "integra*",
                "aplica*",
                "sube*",
                "aprueba*",
                "pasa*",
                "incorpora*",
            ],
        ) && any(
            tokens,
            &[
                "nota",
                "cerebro",
                "conocimiento",
                "lo que sabemos",
                "lo que sabe el equipo",
            ],
        ));
    Acts {
        usage: usage(tokens),
        research: any(tokens, RESEARCH_CUES),
        connector: connector(tokens),
        // A note about contacting («hay que marcarles, déjalo como nota») is a note.
        contacts: note.is_none() && contacts(tokens, sequence_steps.is_some()),
        sequence_steps,
        // A note is kept as a note («guarda una nota: …»), never as a save.
        save: note.is_none()
            && (keep_verb(tokens)
                || any(tokens, SAVE_CUES)
                || (any(tokens, &["agrega*", "sube*", "mete*", "pon*"])
                    && any(
                        tokens,
                        &[
                            "crm",
                            "pipeline",
                            "embudo",
                            "prospeccion",
                            "coleccion",
                            "cartera",
                        ],
                    ))
                // «agrégalas a mi lista», «mételos a la lista»: the selection, by its
                // pronoun, into the person's list.
                || (any(tokens, &["agregal*", "metel*", "subel*", "anadel*"])
                    && any(tokens, &["=lista", "prospectos"]))
                // «todas pal CRM», «esos al crm»: the selection, by its pronoun, sent
                // to the CRM without a verb.
                || (any(tokens, &["=pal =crm", "=al =crm", "=pa =el =crm", "para el crm", "a mi crm"])
                    && any(
                        tokens,
                        &["=todas", "=todos", "=esas", "=esos", "=estas", "=estos", "=all"],
                    ))),
        stage: stage(tokens),
        rfcs: rfcs(tokens),
        knowledge_edit: note.is_none()
            && !merge
            && (any(tokens, EDIT_CUES)
                || (any(tokens, KNOWLEDGE_NOUNS) && any(tokens, EDIT_VERBS))),
        merge,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::director::words::tokens;

    fn acts(m: &str) -> Acts {
        read(m, &tokens(m))
    }

    #[test]
    fn notes_are_read_from_any_verb_that_introduces_them() {
        for (m, text) in [
            (
                "Deja una nota: los de empaque rara vez publican RFC",
                "los de empaque rara vez publican RFC",
            ),
            (
                "apúntale que el ISSSTE paga a 60 días",
                "el ISSSTE paga a 60 días",
            ),
            (
                "Anótame esto: la SEDENA compra en marzo",
                "la SEDENA compra en marzo",
            ),
            (
                "ojo, recuerda que el IMSS pide muestras",
                "el IMSS pide muestras",
            ),
        ] {
            assert_eq!(acts(m).note.as_deref(), Some(text), "{m}");
        }
        // Said as who it is for, or typed in chat shorthand.
        for (m, text) in [
            (
                "para que lo sepa todo el equipo: DICONSA paga puntual",
                "DICONSA paga puntual",
            ),
            (
                "guarda esto para el equipo -> la SEP compra uniformes en julio",
                "la SEP compra uniformes en julio",
            ),
            (
                "Recuerda q en PEMEX piden fianza del 10%",
                "en PEMEX piden fianza del 10%",
            ),
        ] {
            assert_eq!(acts(m).note.as_deref(), Some(text), "{m}");
        }
        // Kept or made as a note, in English too.
        for (m, text) in [
            (
                "haz una nota: SEDENA pide carta de no adeudo",
                "SEDENA pide carta de no adeudo",
            ),
            (
                "guarda esta nota, el IMSS paga tarde en diciembre",
                "el IMSS paga tarde en diciembre",
            ),
            (
                "remember that CFE asks for ISO 9001",
                "CFE asks for ISO 9001",
            ),
            (
                "ten en cuenta que PEMEX cierra compras en noviembre",
                "PEMEX cierra compras en noviembre",
            ),
        ] {
            let a = acts(m);
            assert_eq!(a.note.as_deref(), Some(text), "{m}");
            assert!(!a.save, "a note is no save: {m}");
        }
        // A note mentioned inside a request is not a note to leave.
        assert_eq!(acts("busca la nota de ayer sobre empaque").note, None);
        assert_eq!(
            acts("proveedores de limpieza para el equipo de compras: Jalisco").note,
            None
        );
        assert_eq!(acts("busca proveedores de empaque en Jalisco").note, None);
    }

    #[test]
    fn credits_questions_name_what_they_ask() {
        assert_eq!(
            acts("¿cuántos créditos me quedan?").usage,
            Some(UsageFocus::Credits)
        );
        assert_eq!(
            acts("cuanto saldo de contactos tengo").usage,
            Some(UsageFocus::Contacts)
        );
        assert_eq!(
            acts("cuántas búsquedas me quedan hoy").usage,
            Some(UsageFocus::Searches)
        );
        assert_eq!(
            acts("cuánto he gastado este mes").usage,
            Some(UsageFocus::Spent)
        );
        assert_eq!(
            acts("how many credits do I have left").usage,
            Some(UsageFocus::Credits)
        );
        assert_eq!(acts("busca empaque en Jalisco").usage, None);
        assert_eq!(
            acts("¿cuánto me queda del plan?").usage,
            Some(UsageFocus::Credits)
        );
    }

    #[test]
    fn channels_and_exports_name_the_missing_connector() {
        assert_eq!(
            acts("mándales un WhatsApp").connector.as_deref(),
            Some("WhatsApp")
        );
        assert_eq!(
            acts("expórtalos a excel").connector.as_deref(),
            Some("Excel")
        );
        assert_eq!(acts("pásalos a Odoo").connector.as_deref(), Some("Odoo"));
        assert_eq!(acts("mándales un correo").connector, None);
        // A word one letter from a brand is not the brand.
        assert_eq!(acts("write a 3-step email sequence").connector, None);
        assert!(!acts("y el resto a contactado").contacts);
    }

    #[test]
    fn sequences_contacts_and_saves_in_other_words() {
        assert_eq!(
            acts("ármale una cadencia de 4 mails").sequence_steps,
            Some(4)
        );
        assert_eq!(
            acts("write a 2 step email sequence").sequence_steps,
            Some(2)
        );
        assert_eq!(
            acts("redáctales 3 correos de seguimiento").sequence_steps,
            Some(3)
        );
        let a = acts("consígueme el correo de los 10 mejores");
        assert!(a.contacts && a.sequence_steps.is_none());
        assert!(acts("dame los teléfonos de los decisores").contacts);
        let a = acts("súbelos al CRM en la etapa Propuesta");
        assert!(a.save);
        assert_eq!(a.stage.as_deref(), Some("propuesta"));
        // A security guard is no save, nor what is already saved.
        assert!(!acts("empresas de guardias de seguridad").save);
        assert!(!acts("de las guardadas, cuáles son de Jalisco").save);
        for m in [
            "guárdame esas porfa",
            "guardame todo",
            "mételas a mi lista",
            "agrégalos a mis prospectos",
        ] {
            assert!(acts(m).save, "{m}");
        }
        // Revealing is getting contacts; so is asking for someone by role.
        for m in [
            "revélame a los de esas empresas",
            "desbloquea los contactos de las 3 primeras",
            "quiero al gerente de compras de las primeras 5",
            "necesito hablar con alguien de esas empresas",
        ] {
            assert!(acts(m).contacts, "{m}");
        }
        assert!(!acts("busca directorios de limpieza en Jalisco").contacts);
        // An approximate number of emails said apart.
        assert_eq!(
            acts("prepárales unos correos de seguimiento, unos 4").sequence_steps,
            Some(4)
        );
        assert_eq!(
            acts("ármales una secuencia para ellos").sequence_steps,
            Some(3)
        );
    }

    #[test]
    fn rfcs_research_and_corrections() {
        assert_eq!(
            acts("revisa estos: emb050315ab1, GOMA8001017Q3 y nada más").rfcs,
            ["EMB050315AB1", "GOMA8001017Q3"]
        );
        assert!(acts("hazme un análisis a fondo del mercado de uniformes").research);
        assert!(acts("el tema del ICP está mal, corrígelo").knowledge_edit);
        assert!(acts("fusiona esa nota").merge);
        assert!(acts("intégrala a lo que ya sabemos en cerebro").merge);
        assert!(acts("aplícala ya, mergéala con el conocimiento del equipo").merge);
        assert!(!acts("busca empresas de mantenimiento integral en Jalisco").merge);
        // A topic of what the team knows, named next to an edit verb, is a correction.
        for m in [
            "el ICP ya no aplica igual, quítale el Edomex y pon Coahuila",
            "en lo de objeciones falta la de 'ya tenemos contrato marco', agrégala",
            "edita lo de precios de referencia: el carton subio 8% no 6%",
        ] {
            let a = acts(m);
            assert!(a.knowledge_edit && a.note.is_none(), "{m}: {a:?}");
        }
        assert!(!acts("quita los de CDMX y pon los de Jalisco").knowledge_edit);
        let a = acts("cambia esa nota: ya no es el 5%, ahora es el 8%");
        assert!(a.knowledge_edit && a.note.is_none() && !a.merge, "{a:?}");
    }

    #[test]
    fn notes_closed_by_a_keep_clause_or_told_to_the_team_and_bare_crm_saves() {
        // «acuérdate que…» opens a note, with «q» for «que».
        let a = acts("acuérdense q pemex paga a 90 dias");
        assert_eq!(a.note.as_deref(), Some("pemex paga a 90 dias"), "{a:?}");
        // A closing clause keeps what came before; its talk of calling is no
        // request for contacts.
        let a = acts("la cfe de sonora solo atiende en la mañana, hay q llamarles temprano. guardalo como nota");
        assert_eq!(
            a.note.as_deref(),
            Some("la cfe de sonora solo atiende en la mañana, hay q llamarles temprano"),
            "{a:?}"
        );
        assert!(!a.contacts && !a.save, "{a:?}");
        let a = acts("el imss pide muestras físicas, anótalo");
        assert_eq!(
            a.note.as_deref(),
            Some("el imss pide muestras físicas"),
            "{a:?}"
        );
        // Told to the team, after a colon.
        let a = acts("que se enteren todos: issste cambió de enlace de compras");
        assert_eq!(
            a.note.as_deref(),
            Some("issste cambió de enlace de compras"),
            "{a:?}"
        );
        // Not a note: a search that merely ends in a clause.
        assert_eq!(
            acts("busca constructoras en Puebla, las medianas").note,
            None
        );
        // «todos pal CRM»: a save without a verb; «pal crm» alone is not.
        assert!(acts("esos pal crm porfa").save);
        assert!(!acts("que es eso de pal crm").save);
        // English «what's» is not WhatsApp.
        assert_eq!(acts("whats the balance of my credits").connector, None);
        assert_eq!(
            acts("pasamelos por whats").connector.as_deref(),
            Some("WhatsApp")
        );
        assert!(acts("need a research on uniform suppliers for SEDENA").research);
    }
}
