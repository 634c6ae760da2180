//! Stage 4a (continued): what a message says about what the team knows (Cerebro) —
//! a correction of a topic («el ICP está mal», «en lo de objeciones falta una»), a
//! merge of a note into Knowledge («fusiona esa nota»), or a question about it («¿qué
//! tenemos documentado sobre…?», «¿cómo contestamos cuando…?»). Cues are matched like
//! every other act's ([`words::any`]).

use super::words::{any, Token};

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
    "propon*",
    "correccion",
    "corrige*",
    "agrega*",
    "quita*",
    "cambia*",
    // Not «actualizados» (a question about how current it is).
    "=actualiza",
    "=actualizar",
    "actualizal*",
    "=actualicen",
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
    "corrija*",
    "se corrija",
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

/// Ways of asking what the team has written down: a question word or verb of
/// looking up, and what the team keeps (a topic's name, or «documentado», «sabemos»).
const ASK_CUES: &[&str] = &[
    "que tenemos",
    "que mas tenemos",
    "tenemos escrito",
    "tenemos documentado",
    "que sabemos",
    "que dice",
    "que hay",
    "tenemos algo",
    "hay algo",
    "como contestamos",
    "como respondemos",
    "como manejamos",
    "que contestar",
    "que responder",
    "que le digo",
    "que les digo",
    "recuerdame",
    "cual es nuestro",
    "cual es nuestra",
    "cuales son nuestros",
    "cuales son nuestras",
    "segun lo que",
    "what do we",
    "do we have",
];
/// Verbs of having, asked about what is kept: «¿tenemos precios de referencia?», «¿hay
/// otras cosas documentadas…?», «¿qué tips tiene guardados el equipo?». They count only
/// with a word of [`WRITTEN_WORDS`] (never «¿hay proveedores de equipo médico?»).
const HAVE_CUES: &[&str] = &[
    "=tenemos", "=tiene", "=tienen", "=hay", "=existe", "=existen",
];
const WRITTEN_WORDS: &[&str] = &[
    "documentad*",
    "guardad*",
    "apuntad*",
    "anotad*",
    "registrad*",
    "escrit*",
    "=tips",
    "consejo*",
    "cerebro",
    "playbook",
    "guion",
    "pitch",
    "objecion*",
    "icp",
    "cliente ideal",
    "precios de referencia",
    "lista de precios",
];
const KEPT_WORDS: &[&str] = &[
    "documentad*",
    "escrit*",
    "sabemos",
    "cerebro",
    "playbook",
    "guion",
    "pitch",
    "objecion*",
    "icp",
    "cliente ideal",
    "equipo",
    "knowledge",
];

/// A correction of what the team knows.
pub fn edit(tokens: &[Token]) -> bool {
    any(tokens, EDIT_CUES) || (any(tokens, KNOWLEDGE_NOUNS) && any(tokens, EDIT_VERBS))
}

/// A merge names itself («fusiona», «merge»), or an approving verb names what the
/// team knows as where the note goes («intégrala a lo que ya sabemos»).
pub fn merge(tokens: &[Token]) -> bool {
    any(tokens, &["fusiona*", "merge*", "mergea*"])
        || (any(
            tokens,
            &[
                "integra*",
                "aplica*",
                "sube*",
                "aprueba*",
                "promuev*",
                "promove*",
                "pasa*",
                "incorpora*",
                "oficial*",
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
        ))
}

/// A question about what the team knows (never an edit).
pub fn asks(tokens: &[Token]) -> bool {
    !edit(tokens)
        && ((any(tokens, ASK_CUES) && any(tokens, KEPT_WORDS))
            || (any(tokens, HAVE_CUES) && any(tokens, WRITTEN_WORDS)))
}
