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

use super::words::{any, find, Token};

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
    /// «¿qué tenemos documentado sobre…?»: a question about what the team knows.
    pub knowledge_ask: bool,
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
    // «¿cuántos contactos puedo revelar todavía?»: what is left to reveal, not a reveal.
    let reveals_left = any(tokens, &["cuantos", "cuantas", "how many"])
        && any(tokens, &["contacto", "contacts"])
        && any(
            tokens,
            &["puedo", "podemos", "quedan", "queda", "todavia", "can"],
        );
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
    if !(credits
        || plan
        || searches_left
        || reveals_left
        || (spent && any(tokens, &["cuanto", "how much"])))
    {
        return None;
    }
    Some(
        if any(tokens, &["contacto", "contacts"]) && (credits || reveals_left) {
            UsageFocus::Contacts
        } else if searches_left {
            UsageFocus::Searches
        } else if spent {
            UsageFocus::Spent
        } else {
            UsageFocus::Credits
        },
    )
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
    ("=sheet", "Google Sheets"),
    ("=gsheet", "Google Sheets"),
    ("=gsheets", "Google Sheets"),
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
    ("=mailchimp", "Mailchimp"),
    ("=brevo", "Brevo"),
    ("=sendinblue", "Brevo"),
    ("=activecampaign", "ActiveCampaign"),
    ("=active =campaign", "ActiveCampaign"),
    ("=mailerlite", "MailerLite"),
    ("=klaviyo", "Klaviyo"),
    ("=sendgrid", "SendGrid"),
    ("=telegram", "Telegram"),
    ("=instagram", "Instagram"),
    ("=insta", "Instagram"),
    ("=facebook", "Facebook"),
    ("=messenger", "Messenger"),
    ("=tiktok", "TikTok"),
    ("=teams", "Microsoft Teams"),
    ("=trello", "Trello"),
    ("=asana", "Asana"),
    ("=zapier", "Zapier"),
    ("=airtable", "Airtable"),
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
    "escrib*", "redact*", "prepar*", "arma*", "haz*", "write", "draft",
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
    let emails = tokens
        .iter()
        .any(|t| ["correos", "mails", "emails", "pasos", "steps"].contains(&t.word.as_str()));
    let asked = any(tokens, SEQUENCE_CUES)
        // «un follow up de 2 mails»: follow-up emails are a sequence.
        || (emails && any(tokens, &["=follow =up", "=followup", "seguimiento"]))
        || (any(tokens, WRITE_VERBS)
            && emails
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

/// RFCs in the message: 3 (company) or 4 (person) letters, six digits of date, three
/// of homoclave; also written in parts («IPT-880412-AB3», «IPT 880412 AB3»).
/// Upper-cased; duplicates dropped.
pub fn rfcs(tokens: &[Token]) -> Vec<String> {
    let shape = |w: &[u8]| {
        let letters = w
            .iter()
            .take_while(|c| c.is_ascii_alphabetic() || **c == b'&')
            .count();
        (letters == 3 || letters == 4)
            && w.len() == letters + 9
            && w[letters..letters + 6].iter().all(u8::is_ascii_digit)
            && w[letters + 6..].iter().all(u8::is_ascii_alphanumeric)
    };
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        // The whole RFC in one word, or in parts that start with its letters and go on
        // with its date («IPT-880412-AB3»): never a word glued to a whole RFC.
        let letters_alone = |t: &Token| {
            (3..=4).contains(&t.word.len()) && t.word.bytes().all(|c| c.is_ascii_alphabetic())
        };
        let date_next =
            |t: &Token| t.word.len() >= 6 && t.word.bytes().take(6).all(|c| c.is_ascii_digit());
        let found = (1..=3)
            .filter(|n| i + n <= tokens.len())
            .filter(|n| *n == 1 || (letters_alone(&tokens[i]) && date_next(&tokens[i + 1])))
            .find_map(|n| {
                let joined: String = tokens[i..i + n].iter().map(|t| t.word.as_str()).collect();
                shape(joined.as_bytes()).then_some((n, joined.to_uppercase()))
            });
        match found {
            Some((n, rfc)) => {
                if !out.contains(&rfc) {
                    out.push(rfc);
                }
                i += n;
            }
            None => i += 1,
        }
    }
    out
}

/// Reads the actions of one message.
pub fn read(message: &str, tokens: &[Token]) -> Acts {
    let sequence_steps = sequence(tokens);
    let note = super::notes::read(message, tokens);
    let usage = usage(tokens);
    let merge = super::knowing::merge(tokens);
    let mut acts = Acts {
        usage,
        research: any(tokens, RESEARCH_CUES),
        connector: connector(tokens),
        // A note about contacting («hay que marcarles, déjalo como nota») is a note.
        // «¿cuántos contactos puedo revelar?» asks what is left, it reveals nothing.
        contacts: note.is_none() && usage.is_none() && contacts(tokens, sequence_steps.is_some()),
        sequence_steps,
        // A note is kept as a note («guarda una nota: …»), never as a save.
        // A note is kept as a note («guarda una nota: …»), never as a save.
        save: note.is_none() && super::saves::asks_to_save(tokens),
        stage: super::saves::stage(tokens),
        rfcs: rfcs(tokens),
        knowledge_edit: note.is_none() && !merge && super::knowing::edit(tokens),
        knowledge_ask: note.is_none() && !merge && super::knowing::asks(tokens),
        merge,
        note,
    };
    // «métela al pipeline, ya les escribí por LinkedIn»: a channel already used is
    // context for the save, not a request to reach it.
    if acts.save && any(tokens, &["=ya"]) {
        acts.connector = None;
    }
    acts
}

#[cfg(test)]
#[path = "acts_tests.rs"]
mod tests;
