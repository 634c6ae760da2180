//! Stage 4a (continued): a save of the selection into the CRM, however it is asked —
//! a form of «guardar», registering («regístralas», «dar de alta»), a verb of putting
//! (jala, aparta, sube, mete…) with a place in the CRM or a stage a company starts in,
//! or the selection sent by its pronoun («todas pal CRM») — and the stage it names.
//! To add a way of asking: its words in `SAVE_CUES`, `PUT_VERBS` or `CRM_PLACES`.

use super::words::{any, first_end, Token};

/// Whether the message asks to keep the selection in the CRM.
pub(super) fn asks_to_save(tokens: &[Token]) -> bool {
    keep_verb(tokens)
        // «regístralas»: the selection, by its pronoun, kept.
        || any(tokens, &["registral*", "=registrarlas", "=registrarlos"])
        // «arma en Prospección una lista de diez constructoras».
        || (any(tokens, &["arma*", "crea*", "haz*", "hazme"])
            && any(tokens, &["=lista"])
            && any(tokens, &["prospeccion", "crm", "pipeline", "embudo"]))
        || any(tokens, SAVE_CUES)
        || (any(tokens, PUT_VERBS) && any(tokens, CRM_PLACES))
        || (any(tokens, PUT_VERBS)
            && !any(tokens, &["pon*", "pasa*", "muev*", "mueve*"])
            && any(tokens, ENTRY_STAGES))
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
            ))
}

/// The stage a save or a sequence's audience names: «en la etapa Propuesta», «a las
/// que tengo en Contactado», or an entry stage after «a»/«en» («súbelas en
/// Propuesta», «pa los q quedaron en contactado»).
pub(super) fn stage(tokens: &[Token]) -> Option<String> {
    named_stage(tokens).or_else(|| {
        let (_, end) = first_end(tokens, ENTRY_STAGES)?;
        Some(tokens[end - 1].word.clone())
    })
}

/// «guárdame estas», «guárdalas», «guardar»: a form of «guardar» that asks to keep,
/// not «guardados» (what is already kept) nor «guardias» (security guards) — unless
/// the participle is what is wanted, and where: «quiero nueve … guardadas en
/// Prospección».
fn keep_verb(tokens: &[Token]) -> bool {
    let kept_where_wanted = tokens.windows(2).any(|w| {
        w[0].word.starts_with("guardad") && ["en", "a", "al"].contains(&w[1].word.as_str())
    }) && any(
        tokens,
        &["=quiero", "=necesito", "=ocupo", "=dame", "=consigueme"],
    ) && !any(
        tokens,
        &["=tengo", "=tenemos", "=tienes", "=estan", "=tienen"],
    );
    kept_where_wanted
        || tokens.iter().any(|t| {
            t.word.starts_with("guarda")
                && !t.word.starts_with("guardad")
                && !t.word.starts_with("guardaesp")
        })
        || tokens
            .iter()
            .any(|t| ["guardes", "guarden", "save"].contains(&t.word.as_str()))
}

const SAVE_CUES: &[&str] = &[
    // «todas pa dentro del CRM», «mételas pa adentro».
    "=pa =dentro",
    "=pa =adentro",
    "=para =dentro",
    "=para =adentro",
    "dentro del crm",
    "al crm",
    "en el crm",
    "a mi crm",
    "al pipeline",
    "al embudo",
    // «dados de alta en mi CRM», «dalas de alta».
    "dados de alta",
    "dadas de alta",
    "dalos de alta",
    "dalas de alta",
    "dar de alta",
    "da de alta",
    "registrame",
    "=registra",
    // «dame de alta en el embudo…», «denlas de alta» (never «de alta calidad»).
    "=dame =de =alta",
    "=den =de =alta",
    "damel* =de =alta",
    "denl* =de =alta",
    "=de =alta =en",
];

/// Verbs of putting companies somewhere; with a place in the CRM (its name, the
/// pipeline, or a stage the saved list starts with) they are a save.
const PUT_VERBS: &[&str] = &[
    "agrega*", "sube*", "mete*", "pon*", "avienta*", "aventa*", "echa*", "manda*", "jala*",
    "aparta*", "carga*", "anade*", "add",
];
const CRM_PLACES: &[&str] = &[
    "crm",
    "pipeline",
    "embudo",
    "prospeccion",
    "coleccion",
    "cartera",
];
/// Stages a company may start in when saved («súbelas en Propuesta»); a move to
/// Ganado or Perdido is never a save.
const ENTRY_STAGES: &[&str] = &[
    "=en =propuesta",
    "=a =propuesta",
    "=en =contactado",
    "=a =contactado",
    "=en =conversacion",
    "=a =conversacion",
];

/// «en la etapa Propuesta», «para los que están en Nuevo», «a Propuesta»: the stage
/// named (folded), at most three words.
fn named_stage(tokens: &[Token]) -> Option<String> {
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
            // «a las que tengo en Contactado», «las q traigo en Propuesta».
            "que tengo en",
            "q tengo en",
            "que traigo en",
            "q traigo en",
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
