//! Unit tests of `acts`: each action read from phrasings unlike the briefs'.

use super::*;
use crate::agent::director::words::tokens;

fn acts(m: &str) -> Acts {
    read(m, &tokens(m))
}

#[test]
fn a_memo_phrase_opens_a_note_and_who_it_is_for_is_left_out() {
    for (m, text) in [
        (
            "para que no se les olvide: el IMSS cierra compras en noviembre",
            "el IMSS cierra compras en noviembre",
        ),
        (
            "fyi team, la SEP ya no acepta facturas en papel",
            "la SEP ya no acepta facturas en papel",
        ),
        (
            "que quede registrado que PEMEX pide visita técnica",
            "PEMEX pide visita técnica",
        ),
        (
            "ténganlo en cuenta todos: SEDENA licita en enero",
            "SEDENA licita en enero",
        ),
        ("pal record, la CFE paga a 90 días", "la CFE paga a 90 días"),
    ] {
        assert_eq!(acts(m).note.as_deref(), Some(text), "{m}");
    }
    // «tener en cuenta» inside a request is no note.
    assert_eq!(
        acts("busca constructoras en Puebla, ten en cuenta el tamaño").note,
        None
    );
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
    // Written in parts, with hyphens or spaces.
    assert_eq!(
        acts("revisame si sale en el 69-b: rfc IPT-880412-AB3 o GOMA 800101 7Q3").rfcs,
        ["IPT880412AB3", "GOMA8001017Q3"]
    );
    // A word before a whole RFC is not part of it.
    assert_eq!(
        acts("tec110930qw1 y eve170418zx9 tienen algo raro?").rfcs,
        ["TEC110930QW1", "EVE170418ZX9"]
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
    assert!(
        acts("el tema de precios de referencia sigue con la lista vieja, propon la correccion")
            .knowledge_edit
    );
    // A question about what the team knows is neither an edit nor a search.
    for m in [
        "q tenemos documentado sobre q contestar cuando el cliente dice q ya tiene proveedor?",
        "segun lo q tiene documentado el equipo, cual es nuestro cliente ideal?",
    ] {
        let a = acts(m);
        assert!(a.knowledge_ask && !a.knowledge_edit, "{m}: {a:?}");
    }
    assert!(!acts("que tenemos de constructoras en Jalisco").knowledge_ask);
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
    let a = acts(
        "la cfe de sonora solo atiende en la mañana, hay q llamarles temprano. guardalo como nota",
    );
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

#[test]
fn follow_up_emails_are_a_sequence_and_in_there_is_a_save() {
    assert_eq!(
        acts("mándales un followup de 3 correos a las de Propuesta").sequence_steps,
        Some(3)
    );
    assert_eq!(
        acts("hazles 2 mails de seguimiento").sequence_steps,
        Some(2)
    );
    // A follow-up alone is no sequence.
    assert_eq!(acts("dales follow up mañana").sequence_steps, None);
    assert!(acts("mételas todas para adentro").save);
    assert!(!acts("¿qué hay dentro de la lista?").save);
}

#[test]
fn registering_promoting_reveals_left_and_a_stage_by_what_i_have_there() {
    assert!(acts("sí, regístralos").save);
    assert!(acts("promuévela a lo que sabe el equipo").merge);
    assert_eq!(
        acts("¿cuántos contactos podemos revelar aún?").usage,
        Some(UsageFocus::Contacts)
    );
    assert!(!acts("¿cuántos contactos podemos revelar aún?").contacts);
    // The stage is read from what follows (the list's stage names are matched later).
    assert!(acts("a los que traigo en propuesta mándales 3 correos")
        .stage
        .is_some_and(|s| s.starts_with("propuesta")));
    // Told to the team at the end: a note.
    assert_eq!(
        acts("la SEP paga en 30 días, que lo sepan todos en el equipo")
            .note
            .as_deref(),
        Some("la SEP paga en 30 días")
    );
}

#[test]
fn saves_thrown_into_the_funnel_a_channel_already_used_and_making_a_note_official() {
    assert!(acts("va, aventalas todas a mi embudo de ventas").save);
    assert!(acts("échalas al crm").save);
    // LinkedIn is how they were reached, not where to send: a save, no connector.
    let a = acts("esas metelas al pipeline como contactadas, ya les escribi por linkedin");
    assert!(a.save && a.connector.is_none(), "{a:?}");
    // Asked through the channel, it is still a missing connector.
    assert!(acts("mándales un linkedin a todas").connector.is_some());
    assert!(acts("ok ahora hazlo oficial en el cerebro del equipo").merge);
    assert_eq!(
        acts("cuantas revelaciones de contacto me quedan en el plan?").usage,
        Some(UsageFocus::Contacts)
    );
}

#[test]
fn saves_said_as_registering_and_new_channels() {
    for m in [
        "necesito 10 proveedores de suturas de cdmx ya dados de alta en mi crm",
        "registrame siete transportistas de carga de toluca en prospeccion",
        "arma en prospeccion una lista de diez constructoras mexiquenses",
    ] {
        assert!(acts(m).save, "{m}");
    }
    // «de alta calidad» is not a save.
    assert!(!acts("proveedores de empaque de alta calidad en jalisco").save);
    assert_eq!(
        acts("mandales un dm x instagram a todas")
            .connector
            .as_deref(),
        Some("Instagram")
    );
    assert!(acts("sugiere q se corrija el tema de como le vendemos a gobierno").knowledge_edit);
    assert!(acts("y q mas tenemos escrito de como venderle a gobierno?").knowledge_ask);
}

#[test]
fn saves_said_with_any_verb_of_putting_into_the_crm_or_an_entry_stage() {
    for (m, stage) in [
        ("jálame ocho despachos contables de puebla al embudo", None),
        ("apártame en el pipeline 4 constructoras regias", None),
        ("denme de alta en el crm a las imprentas de toluca", None),
        ("cárgame esas tres en prospección", None),
        ("las 2 de arriba súbelas en contactado", Some("contactado")),
        ("añádelas en conversacion porfa", Some("conversacion")),
    ] {
        let a = acts(m);
        assert!(a.save, "{m}");
        assert_eq!(a.stage.as_deref(), stage, "{m}");
    }
    for m in [
        // A question about the list, a stage move and a quality are not saves.
        "cuántas llevamos ya en prospección?",
        "ponla en perdido, ya firmó con otro",
        "pásalas a propuesta",
        "quiero imprentas de alta calidad en toluca",
    ] {
        assert!(!acts(m).save, "{m}");
    }
    // The audience of a sequence by the stage it is in.
    assert_eq!(
        acts("una cadencia de 2 correos pa las que siguen en contactado")
            .stage
            .as_deref(),
        Some("contactado")
    );
}

#[test]
fn a_note_sent_to_cerebro_and_questions_about_what_the_team_wrote_down() {
    let n = acts("registra en el cerebro que la SEP paga a 60 días");
    assert_eq!(n.note.as_deref(), Some("la SEP paga a 60 días"));
    assert!(!n.save);
    for m in [
        "¿tenemos lista de precios para cotizar limpieza? qué tan actualizada está",
        "hay otras cosas documentadas de cómo licita la cfe?",
        "qué consejos tiene guardados el equipo para llegarle a pemex?",
    ] {
        let a = acts(m);
        assert!(a.knowledge_ask, "{m}");
        assert!(!a.knowledge_edit, "{m}");
    }
    // Having is not asking about what is written: a search.
    assert!(!acts("hay proveedores de equipo médico en puebla?").knowledge_ask);
    // Correcting it still is an edit.
    assert!(acts("actualiza la lista de precios, subió el cartón").knowledge_edit);
}

#[test]
fn a_google_sheet_is_a_connector() {
    assert_eq!(
        acts("pásalas a un google sheet para mi jefe")
            .connector
            .as_deref(),
        Some("Google Sheets")
    );
}
