//! The director through real turns: what it must never do to the board.

use luna_protocol::account::{Plan, Role};

use super::planner::LocalDirector;
use crate::agent::contract::intent::{FactField, TurnIntent};
use crate::agent::turn::runner::run_turn;
use crate::testkit::World;

/// A member of a new workspace (Founder plan) with `role`, in a new work session.
async fn in_session(role: Role) -> (World, String) {
    let w = World::new(Plan::Founder, role).await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    (w, session)
}

/// «no entiendo → nada cambia»: with a selection on the board, messages that are not a
/// clear request (thanks, a follow-up about «todos», a merge of «esa nota», criteria
/// with no action) answer without touching the selection, the saved list or drafts.
#[tokio::test]
async fn an_unclear_message_changes_nothing() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let director = LocalDirector;
    run_turn(
        &engine,
        &director,
        &caller,
        &session,
        "t0",
        "Busca 12 proveedores de limpieza en Jalisco",
    )
    .await
    .unwrap();
    let board = |engine: &crate::Engine| {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            engine
                .sessions
                .snapshot_at_latest(&caller, &session)
                .await
                .unwrap()
                .view
                .board
        }
    };
    let before = board(&engine).await;
    assert_eq!(before.selection.len(), 12);
    for (i, message) in [
        "¡gracias!",
        "¿y qué pasó con todos los demás?",
        "fusiona esa nota con la de ayer",
        "empaque, Jalisco",
        "hmm no sé",
        "deja lo pienso, tengo 2 juntas hoy",
    ]
    .iter()
    .enumerate()
    {
        let out = run_turn(
            &engine,
            &director,
            &caller,
            &session,
            &format!("t{}", i + 1),
            message,
        )
        .await
        .unwrap();
        let tools: Vec<&str> = out
            .transcript
            .iter()
            .map(|e| e.tool.name.as_str())
            .collect();
        assert!(
            !tools
                .iter()
                .any(|t| t.starts_with("market_") || *t == "selection_update"),
            "{message}: {tools:?}"
        );
        assert!(
            matches!(
                out.intent,
                TurnIntent::Encuadre { .. } | TurnIntent::Responder {}
            ),
            "{message}: {:?}",
            out.intent
        );
        let after = board(&engine).await;
        assert_eq!(after.selection, before.selection, "{message}");
        assert_eq!(after.saved, before.saved, "{message}");
        assert_eq!(after.sequences, before.sequences, "{message}");
    }
    // What was understood is repeated.
    let out = run_turn(
        &engine,
        &director,
        &caller,
        &session,
        "t9",
        "empaque, Jalisco",
    )
    .await
    .unwrap();
    assert!(
        out.narration.text.contains("Entendí: empaque") && out.narration.text.contains("Jalisco"),
        "{}",
        out.narration.text
    );
}

/// Rankings and Licitaciones/Adjudicaciones are answered with records over real turns:
/// the right tool and filters, an anchored narration, and the board untouched.
#[tokio::test]
async fn rankings_and_records_answer_without_touching_the_board() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let director = LocalDirector;
    run_turn(
        &engine,
        &director,
        &caller,
        &session,
        "t0",
        "Busca 12 proveedores de limpieza en Jalisco",
    )
    .await
    .unwrap();
    let selection = || {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            engine
                .sessions
                .snapshot_at_latest(&caller, &session)
                .await
                .unwrap()
                .view
                .board
                .selection
        }
    };
    let before = selection().await;
    let cases: [(&str, &str, serde_json::Value); 8] = [
        // «cuántas …» over records is a count, not a page of them.
        (
            "cuantas adjudicaciones tiene la CFE de construccion",
            "market_count",
            serde_json::json!({"kind": "awards", "filters": {"buyer": "CFE", "giro": "construccion"}}),
        ),
        (
            "¿cuántas licitaciones abiertas hay de limpieza?",
            "market_count",
            serde_json::json!({"kind": "opportunities", "filters": {"giro": "limpieza", "status": "active"}}),
        ),
        (
            "¿quién le vende más al IMSS?",
            "market_aggregate",
            serde_json::json!({"group_by": "supplier", "filters": {"buyer": "IMSS"}}),
        ),
        (
            "¿qué licitaciones abiertas hay de limpieza?",
            "market_search",
            serde_json::json!({"kind": "opportunities", "filters": {"giro": "limpieza", "status": "active"}}),
        ),
        (
            "adjudicaciones del IMSS de más de 10 millones",
            "market_search",
            serde_json::json!({"kind": "awards", "filters": {"buyer": "IMSS", "amount_min": 10_000_000.0}}),
        ),
        (
            "en qué estados se adjudica más limpieza",
            "market_aggregate",
            serde_json::json!({"group_by": "state", "filters": {"giro": "limpieza"}}),
        ),
        // The size of a ranking is the one asked for.
        (
            "los 8 vendedores que más le facturan a la CFE",
            "market_aggregate",
            serde_json::json!({"group_by": "supplier", "filters": {"buyer": "CFE"}, "limit": 8}),
        ),
        (
            "cuánto compra el ISSSTE de limpieza año tras año",
            "market_aggregate",
            serde_json::json!({"group_by": "year", "filters": {"buyer": "ISSSTE", "giro": "limpieza"}}),
        ),
    ];
    for (i, (message, tool, expected)) in cases.iter().enumerate() {
        let out = run_turn(
            &engine,
            &director,
            &caller,
            &session,
            &format!("r{i}"),
            message,
        )
        .await
        .unwrap();
        let made = out
            .transcript
            .iter()
            .find(|e| e.tool.name == *tool)
            .unwrap_or_else(|| panic!("{message}: {:?}", out.transcript));
        for (key, value) in expected.as_object().unwrap() {
            match value {
                serde_json::Value::Object(map) => {
                    for (k, v) in map {
                        assert_eq!(&made.tool.args[key][k], v, "{message}: {}", made.tool.args);
                    }
                }
                v => assert_eq!(&made.tool.args[key], v, "{message}: {}", made.tool.args),
            }
        }
        assert!(
            !out.transcript
                .iter()
                .any(|e| e.tool.name == "selection_update"),
            "{message}"
        );
        assert_eq!(
            out.intent,
            TurnIntent::Responder {},
            "{message}: {}",
            out.narration.text
        );
        assert!(!out.repaired, "{message}: {}", out.narration.text);
        assert_eq!(selection().await, before, "{message} changed the selection");
    }
}

/// A follow-up to a ranking or a records question keeps asking for that kind of
/// answer: «¿y al ISSSTE?» after «¿quién le vende más al IMSS de insumos médicos?» ranks
/// the ISSSTE's suppliers of the same giro, and never builds a selection.
#[tokio::test]
async fn a_follow_up_to_a_ranking_ranks_again() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let director = LocalDirector;
    let turns = [
        ("quien le vende mas al IMSS de insumos medicos", "IMSS"),
        ("y al ISSSTE?", "ISSSTE"),
    ];
    for (i, (message, buyer)) in turns.iter().enumerate() {
        let out = run_turn(
            &engine,
            &director,
            &caller,
            &session,
            &format!("f{i}"),
            message,
        )
        .await
        .unwrap();
        let made = out
            .transcript
            .iter()
            .find(|e| e.tool.name == "market_aggregate")
            .unwrap_or_else(|| panic!("{message}: {:?}", out.transcript));
        assert_eq!(made.tool.args["group_by"], "supplier", "{message}");
        assert_eq!(made.tool.args["filters"]["buyer"], *buyer, "{message}");
        assert_eq!(
            made.tool.args["filters"]["giro"], "insumos_medicos",
            "{message}"
        );
        assert!(
            !out.transcript
                .iter()
                .any(|e| e.tool.name == "selection_update"),
            "{message} built a selection"
        );
    }
}

/// Resolves every card the board shows as accepted, as the person would.
async fn accept_pending(engine: &crate::Engine, caller: &crate::accounts::Caller, session: &str) {
    let pending = engine
        .sessions
        .snapshot_at_latest(caller, session)
        .await
        .unwrap()
        .view
        .board
        .pending;
    for card in pending {
        crate::agent::decisions::resolve(
            engine,
            caller,
            session,
            &card.id,
            crate::agent::decisions::Resolution::Accept,
            None,
        )
        .await
        .unwrap();
    }
}

/// «fusiona esa nota»: the note the person asked for earlier is found in review and
/// the merge card is proposed for it (never a search, never a second note).
#[tokio::test]
async fn a_merge_of_that_note_proposes_merging_the_note_in_review() {
    let (World { engine, caller }, session) = in_session(Role::Owner).await;
    let say = |turn: &'static str, message: &'static str| {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            run_turn(&engine, &LocalDirector, &caller, &session, turn, message)
                .await
                .unwrap()
        }
    };
    let noted = say("t1", "anota que el ISSSTE está pagando a 90 días").await;
    assert!(matches!(noted.intent, TurnIntent::ProponerDecision { .. }));
    accept_pending(&engine, &caller, &session).await;
    let out = say("t2", "fusiona esa nota con lo que sabe el equipo").await;
    let tools: Vec<&str> = out
        .transcript
        .iter()
        .map(|e| e.tool.name.as_str())
        .collect();
    assert!(
        !tools
            .iter()
            .any(|t| t.starts_with("market_") || *t == "context_note"),
        "{tools:?}"
    );
    let TurnIntent::ProponerDecision {
        decision: crate::agent::contract::intent::DecisionDraft::FusionarConocimiento { topic },
    } = &out.intent
    else {
        panic!("expected the merge card, got {:?}", out.intent);
    };
    let pending = engine.knowledge.pending(&caller).await.unwrap();
    assert!(
        pending.iter().any(|p| p.topic_slug.as_deref()
            == Some(crate::knowledge::topic_slug(topic))
            && p.title.contains("90")),
        "{topic} is not the note in review: {pending:?}"
    );
}

/// «y el resto a Contactado» after «pásala a Ganado»: every other saved company of
/// the selection goes to Contactado through the bulk card; the one already moved
/// stays out of it.
#[tokio::test]
async fn the_rest_of_an_earlier_move_is_moved() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let say = |turn: &'static str, message: &'static str| {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            run_turn(&engine, &LocalDirector, &caller, &session, turn, message)
                .await
                .unwrap()
        }
    };
    crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    let early = say("t0", "pásalos a Ganado").await;
    assert!(
        early.narration.text.contains("guarda"),
        "a move before saving says to save first: {}",
        early.narration.text
    );
    say(
        "t1",
        "Busca 6 proveedores de limpieza en Jalisco y guárdalos",
    )
    .await;
    accept_pending(&engine, &caller, &session).await;
    let first = say("t2", "la mejor ya la ganamos, pásala a Ganado").await;
    let moved: Vec<&str> = first
        .transcript
        .iter()
        .map(|e| e.tool.name.as_str())
        .collect();
    assert!(
        moved.contains(&"crm_record"),
        "{moved:?} {:?} {}",
        first.intent,
        first.narration.text
    );
    let out = say("t3", "y el resto a contactado").await;
    let bulk = out
        .transcript
        .iter()
        .find(|e| e.tool.name == "crm_bulk_update")
        .unwrap_or_else(|| panic!("no bulk update: {:?}", out.intent));
    let changes = bulk.tool.args["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 5, "{changes:?}");
    assert!(
        changes.iter().all(|c| c["stage"] == "Contactado"),
        "{changes:?}"
    );
    assert!(matches!(out.intent, TurnIntent::ProponerDecision { .. }));
}

/// Questions about credits answer the figure asked for, every figure anchored (no
/// repair, which would drop the figures): what was spent, searches and reads left.
#[tokio::test]
async fn credit_questions_answer_the_figure_asked_for() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    for (i, (message, says)) in [
        ("cuánto he gastado este mes?", "gastados"),
        ("me sobran búsquedas pa hoy o ya no?", "búsquedas"),
        ("cuantas lecturas me quedan en esta hora", "lecturas"),
        ("¿cuánto saldo de contactos tengo?", "créditos de contacto"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = run_turn(
            &engine,
            &LocalDirector,
            &caller,
            &session,
            &format!("u{i}"),
            message,
        )
        .await
        .unwrap();
        let text = &out.narration.text;
        assert!(
            matches!(out.intent, TurnIntent::Responder {}),
            "{message}: {:?}",
            out.intent
        );
        assert!(
            text.contains(says) && text.chars().any(|c| c.is_ascii_digit()),
            "{message}: {text}"
        );
        assert!(!text.contains("[["), "{message}: {text}");
    }
}

/// «… y guárdalas en Propuesta»: the save card is prepared into that stage of the
/// team's collection; a message that names no stage leaves the default.
#[tokio::test]
async fn a_save_names_its_stage() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    for (turn, message, stage) in [
        (
            "t1",
            "Busca 6 proveedores de limpieza en Jalisco y guárdalas en Propuesta",
            Some("Propuesta"),
        ),
        (
            "t2",
            "busca 5 constructoras en Querétaro y súbelas al pipeline como contactadas",
            Some("Contactado"),
        ),
        (
            "t3",
            "busca 4 proveedores de eventos en CDMX y guárdalos en el crm",
            None,
        ),
    ] {
        let out = run_turn(&engine, &LocalDirector, &caller, &session, turn, message)
            .await
            .unwrap();
        let save = out
            .transcript
            .iter()
            .find(|e| e.tool.name == "crm_save_companies")
            .unwrap_or_else(|| {
                panic!(
                    "{message}: no save ({:?} {})",
                    out.intent, out.narration.text
                )
            });
        assert_eq!(
            save.tool.args.get("stage").and_then(|s| s.as_str()),
            stage,
            "{message}"
        );
        accept_pending(&engine, &caller, &session).await;
    }
}

/// «todas a Propuesta» with a selection and nothing saved yet proposes saving them
/// into that stage; a stage the list does not have saves nothing.
#[tokio::test]
async fn moving_an_unsaved_selection_saves_it_into_that_stage() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    let turn = |id: &'static str, m: &'static str| {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            run_turn(&engine, &LocalDirector, &caller, &session, id, m)
                .await
                .unwrap()
        }
    };
    turn("t1", "busca 4 proveedores de limpieza en Jalisco").await;
    let out = turn("t2", "órale, muévelas todas a propuesta").await;
    let save = out
        .transcript
        .iter()
        .find(|e| e.tool.name == "crm_save_companies")
        .unwrap_or_else(|| panic!("no save: {:?} {}", out.intent, out.narration.text));
    assert_eq!(save.tool.args["stage"], "Propuesta");
    assert!(matches!(out.intent, TurnIntent::ProponerDecision { .. }));
    // Named by the list's own name: into the list, its first stage.
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    for (id, m) in [
        ("t1", "busca 4 proveedores de limpieza en Jalisco"),
        ("t2", "pásalas todas a prospección"),
    ] {
        let out = run_turn(&engine, &LocalDirector, &caller, &session, id, m)
            .await
            .unwrap();
        if id == "t2" {
            let save = out
                .transcript
                .iter()
                .find(|e| e.tool.name == "crm_save_companies")
                .unwrap_or_else(|| panic!("no save: {}", out.narration.text));
            assert!(save.tool.args.get("stage").is_none());
        }
    }
    let none = turn("t3", "muévelas todas a la etapa marte").await;
    assert!(none
        .transcript
        .iter()
        .all(|e| e.tool.name != "crm_save_companies"));
}

/// After a search that found nobody, «guárdalas» or «sus correos» says there is no
/// one to act on; it never asks again for the giro the person already gave.
#[tokio::test]
async fn an_action_on_an_empty_result_says_so_instead_of_asking_the_known() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let first = run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t1",
        "proveedores de uniformes en Oaxaca",
    )
    .await
    .unwrap();
    assert!(
        first.narration.text.starts_with("No encontré"),
        "the demo market has none: {}",
        first.narration.text
    );
    for (id, m) in [
        ("t2", "ándale, guárdalas"),
        ("t3", "sácame los correos de las primeras 2"),
    ] {
        let out = run_turn(&engine, &LocalDirector, &caller, &session, id, m)
            .await
            .unwrap();
        assert!(
            matches!(out.intent, TurnIntent::Responder {}),
            "{m}: {:?}",
            out.intent
        );
        assert!(!out.repaired, "{m}: asked what was known");
        assert!(
            out.narration.text.contains("no encontré ninguna"),
            "{m}: {}",
            out.narration.text
        );
    }
}

/// Asking again for contacts already revealed proposes no card (and no charge): Luna
/// says they are already on each company's file.
#[tokio::test]
async fn contacts_already_revealed_are_not_offered_again() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    crate::crm::demo::seed_workspace(&engine.store, &caller.workspace_id)
        .await
        .unwrap();
    crate::crm::directory::ensure_demo(engine.crm.store())
        .await
        .unwrap();
    for (id, m) in [
        (
            "t1",
            "Quiero 10 fabricantes de empaque en Jalisco. Guárdamelos.",
        ),
        ("t2", "consígueme el correo de los 3 mejores"),
    ] {
        run_turn(&engine, &LocalDirector, &caller, &session, id, m)
            .await
            .unwrap();
        accept_pending(&engine, &caller, &session).await;
    }
    let again = run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t3",
        "consígueme el correo de los 3 mejores",
    )
    .await
    .unwrap();
    assert!(
        matches!(again.intent, TurnIntent::Responder {}),
        "{:?} {}",
        again.intent,
        again.narration.text
    );
    assert!(again.narration.text.contains("ya los revelaste"));
}

/// «el cel del director de la primera», «la número 3»: the contacts of that one
/// company of the selection are looked up and quoted, not those of the first ten.
#[tokio::test]
async fn contacts_of_one_company_named_by_its_place_quote_only_that_one() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    crate::crm::directory::ensure_demo(engine.crm.store())
        .await
        .unwrap();
    run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t1",
        "Quiero 10 fabricantes de empaque en Jalisco",
    )
    .await
    .unwrap();
    let selection = engine
        .sessions
        .snapshot_at_latest(&caller, &session)
        .await
        .unwrap()
        .view
        .board
        .selection;
    assert_eq!(selection.len(), 10);
    for (i, (message, place)) in [
        ("dame el cel del director de la primera", 0),
        ("consigueme el email de quien compra en la numero 3", 2),
        ("a la segunda sacale el correo del de compras", 1),
    ]
    .into_iter()
    .enumerate()
    {
        let out = run_turn(
            &engine,
            &LocalDirector,
            &caller,
            &session,
            &format!("c{i}"),
            message,
        )
        .await
        .unwrap();
        let looked_up: Vec<&serde_json::Value> = out
            .transcript
            .iter()
            .filter(|e| e.tool.name == "people_search")
            .map(|e| &e.tool.args["company_ref"])
            .collect();
        assert_eq!(
            looked_up,
            [&serde_json::json!(selection[place].reference)],
            "{message}: {:?} {}",
            out.intent,
            out.narration.text
        );
        assert!(
            out.transcript.iter().any(|e| e.tool.name == "people_quote"),
            "{message}: {}",
            out.narration.text
        );
    }
}

/// «con las 6 mejores basta»: the selection keeps its first six companies, in order,
/// without a new search (nothing charged).
#[tokio::test]
async fn a_cut_keeps_the_first_companies_of_the_selection_without_searching() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t1",
        "Busca 12 proveedores de limpieza en Jalisco",
    )
    .await
    .unwrap();
    let selection = || {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            engine
                .sessions
                .snapshot_at_latest(&caller, &session)
                .await
                .unwrap()
                .view
                .board
                .selection
        }
    };
    let before = selection().await;
    assert_eq!(before.len(), 12);
    let out = run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t2",
        "con las 6 mejores basta",
    )
    .await
    .unwrap();
    assert!(
        !out.transcript
            .iter()
            .any(|e| e.tool.name.starts_with("market_")),
        "{:?}",
        out.transcript
    );
    assert_eq!(
        selection().await,
        before[..6].to_vec(),
        "{}",
        out.narration.text
    );
    assert!(
        out.narration.text.contains("quedó con 6 empresas"),
        "{}",
        out.narration.text
    );
}

/// «¿cuántas…?» and then «¿y en Colima?» / «¿y PEMEX?»: the follow-up is a count again,
/// of companies or of records, and never builds a selection.
#[tokio::test]
async fn a_follow_up_to_a_count_counts_again() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    for (i, (first, then, expected)) in [
        (
            "¿cuántas constructoras hay en Jalisco?",
            "¿y en Colima?",
            serde_json::json!({"kind": "suppliers", "filters": {"state": "Colima"}}),
        ),
        (
            "cuantas adjudicaciones de limpieza tiene la cfe?",
            "y pemex?",
            serde_json::json!({"kind": "awards", "filters": {"buyer": "PEMEX", "giro": "limpieza"}}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        run_turn(&engine, &LocalDirector, &caller, &session, &format!("a{i}"), first)
            .await
            .unwrap();
        let out = run_turn(&engine, &LocalDirector, &caller, &session, &format!("b{i}"), then)
            .await
            .unwrap();
        let names: Vec<&str> = out.transcript.iter().map(|e| e.tool.name.as_str()).collect();
        assert_eq!(names, ["market_count"], "{then}: {}", out.narration.text);
        let args = &out.transcript[0].tool.args;
        assert_eq!(args["kind"], expected["kind"], "{then}: {args}");
        for (k, v) in expected["filters"].as_object().unwrap() {
            assert_eq!(&args["filters"][k], v, "{then}: {args}");
        }
    }
}

/// A new search while a card waits for the person becomes the selection, and the
/// card keeps waiting.
#[tokio::test]
async fn a_search_while_a_card_waits_becomes_the_selection() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t1",
        "Busca 6 proveedores de limpieza en Jalisco y guárdalos",
    )
    .await
    .unwrap();
    let board = || async {
        engine
            .sessions
            .snapshot_at_latest(&caller, &session)
            .await
            .unwrap()
            .view
            .board
    };
    let before = board().await;
    assert_eq!(before.pending.len(), 1, "the save card waits");
    assert_eq!(before.selection.len(), 6);
    let out = run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t2",
        "ahora busca 5 constructoras en Querétaro",
    )
    .await
    .unwrap();
    let after = board().await;
    assert_eq!(
        after.selection.len(),
        5,
        "{:?} {}",
        out.transcript
            .iter()
            .map(|e| &e.tool.name)
            .collect::<Vec<_>>(),
        out.narration.text
    );
    assert!(after
        .selection
        .iter()
        .all(|s| !before.selection.iter().any(|b| b.reference == s.reference)));
    assert_eq!(after.pending.len(), 1, "the card still waits");
}

/// The tool call named `tool` in a turn's transcript.
fn made<'a>(
    out: &'a crate::agent::turn::runner::TurnOutcome,
    tool: &str,
    message: &str,
) -> &'a serde_json::Value {
    &out.transcript
        .iter()
        .find(|e| e.tool.name == tool)
        .unwrap_or_else(|| panic!("{message}: no {tool} in {:?}", out.transcript))
        .tool
        .args
}

/// Follow-ups build on the session: a place said «también» joins the places before it,
/// a comparison that names one segment weighs it against what was asked, and a
/// «who buys most from them» keeps the giro and place of the search before it.
#[tokio::test]
async fn follow_ups_add_places_compare_and_rank_against_the_session() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let director = LocalDirector;
    let say = |turn: &'static str, message: &'static str| {
        let (engine, caller, session) = (engine.clone(), caller.clone(), session.clone());
        async move {
            run_turn(&engine, &director, &caller, &session, turn, message)
                .await
                .unwrap()
        }
    };
    let m = "proveedores de uniformes en Puebla";
    let out = say("a0", m).await;
    assert_eq!(made(&out, "market_search", m)["filters"]["state"], "Puebla");

    let m = "¿y cómo se ve eso contra Hidalgo?";
    let out = say("a1", m).await;
    let segments = made(&out, "market_compare", m)["segments"].clone();
    let states: Vec<&str> = segments
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["filters"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["Puebla", "Hidalgo"], "{segments}");
    for s in segments.as_array().unwrap() {
        assert_eq!(s["filters"]["giro"], "uniformes", "{segments}");
    }

    let m = "súmale Tlaxcala también";
    let out = say("a2", m).await;
    let args = made(&out, "market_search", m);
    assert_eq!(
        args["states"],
        serde_json::json!(["Puebla", "Tlaxcala"]),
        "{args}"
    );
    assert_eq!(args["filters"]["giro"], "uniformes", "{args}");

    let m = "ok y qué dependencias les compran más";
    let out = say("a3", m).await;
    let args = made(&out, "market_aggregate", m);
    assert_eq!(args["group_by"], "buyer", "{args}");
    assert_eq!(args["filters"]["giro"], "uniformes", "{args}");

    // A removal that names what stays: only that place (still ranking, as asked last).
    let m = "ya no quiero los de Puebla, solamente Tlaxcala";
    let out = say("a4", m).await;
    let args = made(&out, "market_aggregate", m);
    assert_eq!(args["filters"]["state"], "Tlaxcala", "{args}");
    assert_eq!(args["filters"]["giro"], "uniformes", "{args}");

    // «por ahí»: the session's place, with the giro this message names.
    let m = "¿y hay licitaciones abiertas de limpieza por ahí?";
    let out = say("a5", m).await;
    let args = made(&out, "market_search", m);
    assert_eq!(args["kind"], "opportunities", "{args}");
    assert_eq!(args["filters"]["state"], "Tlaxcala", "{args}");
    assert_eq!(args["filters"]["giro"], "limpieza", "{args}");
}

/// A constraint said in a follow-up stays with the session's search: «solo las
/// medianas» and then «¿y en Puebla?» still wants medium companies, of the same giro.
#[tokio::test]
async fn a_constraint_said_in_a_follow_up_stays_for_the_next_place() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let director = LocalDirector;
    for (turn, m) in [
        ("b0", "empresas de limpieza en Querétaro"),
        ("b1", "pero solo las medianas"),
    ] {
        run_turn(&engine, &director, &caller, &session, turn, m)
            .await
            .unwrap();
    }
    let m = "¿y en Puebla?";
    let out = run_turn(&engine, &director, &caller, &session, "b2", m)
        .await
        .unwrap();
    let args = made(&out, "market_search", m);
    assert_eq!(args["filters"]["state"], "Puebla", "{args}");
    assert_eq!(args["filters"]["giro"], "limpieza", "{args}");
    assert_eq!(args["filters"]["size_band"], "mediana", "{args}");
}

/// A research asked about «ese mercado» carries the conversation's market in its brief,
/// so the run frames the giro and the place the person was looking at.
#[tokio::test]
async fn a_research_about_that_market_carries_the_sessions_criteria() {
    let (World { engine, caller }, session) = in_session(Role::Owner).await;
    engine.market.ensure_demo().await.unwrap();
    let director = LocalDirector;
    run_turn(
        &engine,
        &director,
        &caller,
        &session,
        "c0",
        "constructoras en Sonora",
    )
    .await
    .unwrap();
    let m = "me interesa, haz un estudio de mercado a fondo de eso";
    let out = run_turn(&engine, &director, &caller, &session, "c1", m)
        .await
        .unwrap();
    let brief = made(&out, "research_start", m)["brief"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    assert!(brief.starts_with("me interesa"), "{brief}");
    assert!(
        brief.contains("sonora") && brief.contains("constru"),
        "{brief}"
    );
}

/// Prospects named only by a place, with no giro anywhere, get a question about the
/// giro and change nothing; suppliers named only by a place are searched.
#[tokio::test]
async fn prospects_by_place_alone_ask_the_giro() {
    let (World { engine, caller }, session) = in_session(Role::Member).await;
    engine.market.ensure_demo().await.unwrap();
    let out = run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t1",
        "ocupo prospectos en saltillo pa esta semana",
    )
    .await
    .unwrap();
    assert!(
        matches!(&out.intent, TurnIntent::Encuadre { pregunta: Some(p), .. } if p.campo == FactField::Giro),
        "{:?} {}",
        out.intent,
        out.narration.text
    );
    assert!(
        out.narration.text.contains("Coahuila"),
        "{}",
        out.narration.text
    );
    let view = engine
        .sessions
        .snapshot_at_latest(&caller, &session)
        .await
        .unwrap()
        .view;
    assert!(view.board.selection.is_empty(), "nothing was searched");
    let out = run_turn(
        &engine,
        &LocalDirector,
        &caller,
        &session,
        "t2",
        "Busca proveedores en Jalisco",
    )
    .await
    .unwrap();
    assert!(
        matches!(out.intent, TurnIntent::Cierre { .. }),
        "{:?}",
        out.intent
    );
}
