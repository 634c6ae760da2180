use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use luna_protocol::tool::Envelope;
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::registry::{ExecMode, Surface, ToolRequest};
use crate::testkit::World;
use crate::Engine;

use super::*;
pub(super) use crate::testkit::call;

/// An owner (the world's caller) with the demo topics, plus a member and an admin of
/// the same workspace.
pub(super) async fn setup() -> (World, Caller, Caller) {
    let w = World::new(Plan::Founder, Role::Owner).await.unwrap();
    let member = w.teammate(Role::Member, "Luis Prueba").await.unwrap();
    let admin = w.teammate(Role::Admin, "Luis Prueba").await.unwrap();
    let owner = &w.caller;
    assert_eq!(
        demo::seed(&w.engine.knowledge, &owner.workspace_id, &owner.user_id)
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        demo::seed(&w.engine.knowledge, &owner.workspace_id, &owner.user_id)
            .await
            .unwrap(),
        0
    );
    (w, member, admin)
}

fn refs(env: &Envelope) -> Vec<String> {
    env.results.iter().map(|r| r.ref_.clone()).collect()
}

#[tokio::test]
async fn retrieve_ranks_by_text_area_files_and_freshness_with_short_bodies() {
    let (w, member, _) = setup().await;
    // Accents folded: "como" finds "Cómo"; the government topic ranks first.
    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"task": "como vender a GOBIERNO, licitación del imss"}),
        Surface::Luna,
    )
    .await
    .unwrap();
    assert_eq!(env.results[0].ref_, "topic:como-vendemos-a-gobierno");
    let row = &env.results[0];
    assert!(row.fields["excerpt"].as_str().unwrap().chars().count() <= 281);
    assert!(row.fields["freshness"]
        .as_str()
        .unwrap()
        .starts_with("al día"));
    assert_eq!(row.fields["status"], json!("knowledge"));

    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"files": ["precios/lista-2026.xlsx"]}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert_eq!(refs(&env), vec!["topic:precios-de-referencia-2025"]);
    assert_eq!(env.results[0].fields["matched"], json!(["archivos"]));

    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"stale": true}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert_eq!(refs(&env), vec!["topic:precios-de-referencia-2025"]);
    assert!(env.results[0].fields["freshness"]
        .as_str()
        .unwrap()
        .starts_with("desactualizado"));

    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"area": "ICP"}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert_eq!(refs(&env)[0], "topic:icp-fabricantes-de-empaque");

    // No signal: the freshest topics, limited.
    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"limit": 2}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert_eq!(env.results.len(), 2);
    assert_eq!(env.results[0].ref_, "topic:como-vendemos-a-gobierno");

    // Another workspace sees none of it.
    let stranger = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    let env = call(
        &w.engine,
        &stranger,
        "context_retrieve",
        json!({"query": "gobierno"}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert!(env.results.is_empty());
    assert!(env.next_action.is_some());
}

#[tokio::test]
async fn a_topic_of_another_workspace_is_not_found() {
    let (w, member, _) = setup().await;
    let stranger = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    let t = "topic:como-vendemos-a-gobierno";
    for (tool, args) in [
        ("context_get", json!({"topic": t})),
        ("context_update", json!({"topic": t, "stale": true})),
        ("context_delete", json!({"topic": t})),
    ] {
        let e = call(&w.engine, &stranger, tool, args, Surface::Mcp)
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "{tool}");
    }
    let e = call(
        &w.engine,
        &stranger,
        "context_suggest_edit",
        json!({"topic": t, "summary": "x"}),
        Surface::Ui,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let env = call(
        &w.engine,
        &member,
        "context_get",
        json!({"topic": t}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert!(env.results[0].fields["body"]
        .as_str()
        .unwrap()
        .contains("Adjudicaciones"));
}

#[tokio::test]
async fn create_is_born_en_revision_and_update_of_knowledge_becomes_a_suggested_edit() {
    let (w, member, _) = setup().await;
    let env = call(&w.engine, &member, "context_create", json!({"title": "Cómo cotiza el IMSS", "area": "Gobierno", "body": "Pide tres cotizaciones."}), Surface::Mcp)
        .await
        .unwrap();
    assert_eq!(env.results[0].ref_, "topic:como-cotiza-el-imss");
    assert_eq!(env.results[0].fields["status"], json!("en_revision"));
    assert_eq!(env.results[0].fields["area"], json!("gobierno"));
    // A note en revisión updates directly.
    let env = call(&w.engine, &member, "context_update", json!({"topic": "topic:como-cotiza-el-imss", "body": "Pide tres cotizaciones y un anexo técnico."}), Surface::Mcp)
        .await
        .unwrap();
    assert_eq!(env.results[0].fields["applied"], json!(true));
    // Knowledge does not change: the update waits as a suggested edit with a diff.
    let env = call(
        &w.engine,
        &member,
        "context_update",
        json!({"topic": "topic:precios-de-referencia-2025", "body": "Lista 2026 vigente."}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert_eq!(env.results[0].fields["applied"], json!(false));
    assert!(env.results[0].fields["diff"]
        .as_str()
        .unwrap()
        .contains("+Lista 2026 vigente."));
    let t = w
        .engine
        .knowledge
        .get(&member, "precios-de-referencia-2025")
        .await
        .unwrap();
    assert!(t.body.starts_with("Tabla de precios"));
    // The stale mark applies directly.
    let env = call(
        &w.engine,
        &member,
        "context_update",
        json!({"topic": "topic:icp-fabricantes-de-empaque", "stale": true}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert_eq!(env.results[0].fields["stale"], json!(true));
    let pending = w.engine.knowledge.pending(&member).await.unwrap();
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0].kind, ProposalKind::Note);
    assert_eq!(pending[1].kind, ProposalKind::Edit);
}

#[tokio::test]
async fn luna_notes_are_drafts_until_the_tap_and_only_owners_or_admins_merge() {
    let (w, member, admin) = setup().await;
    let r = w.engine
        .call_tool(&member, ToolRequest::new("context_note", json!({"title": "El ISSSTE paga a 60 días", "content": "En 2026 el ISSSTE paga a 60 días.", "area": "gobierno"}), Surface::Luna))
        .await;
    assert_eq!(r.mode, Some(ExecMode::PreviewOnly));
    let env = r.outcome.unwrap();
    let pid = env.results[0].fields["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(env.results[0].fields["status"], json!("borrador"));
    // Nothing visible before the tap.
    assert!(w
        .engine
        .knowledge
        .pending(&w.caller)
        .await
        .unwrap()
        .is_empty());
    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"query": "ISSSTE"}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    assert!(!refs(&env).contains(&"topic:el-issste-paga-a-60-dias".to_owned()));
    // Luna cannot see the MCP write tools at all.
    let e = call(
        &w.engine,
        &member,
        "context_create",
        json!({"title": "x", "area": "y", "body": "z"}),
        Surface::Luna,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownTool);

    // The person taps: a note en revisión, pending review; tapping twice is a no-op.
    let p = w.engine.knowledge.apply_draft(&member, &pid).await.unwrap();
    assert_eq!(p.status, ProposalStatus::Pendiente);
    w.engine.knowledge.apply_draft(&member, &pid).await.unwrap();
    let pending = w.engine.knowledge.pending(&w.caller).await.unwrap();
    assert_eq!(pending.len(), 1);
    let env = call(
        &w.engine,
        &member,
        "context_retrieve",
        json!({"query": "ISSSTE paga"}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    let note = env
        .results
        .iter()
        .find(|r| r.ref_ == "topic:el-issste-paga-a-60-dias")
        .unwrap();
    assert_eq!(note.fields["status"], json!("en_revision"));

    // A member cannot merge or reject; another workspace cannot see the proposal.
    assert_eq!(
        w.engine
            .knowledge
            .merge(&member, &pid)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );
    assert_eq!(
        w.engine
            .knowledge
            .reject(&member, &pid)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );
    let stranger = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    assert_eq!(
        w.engine
            .knowledge
            .merge(&stranger, &pid)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );

    let merged = w.engine.knowledge.merge(&admin, &pid).await.unwrap();
    assert_eq!(merged.status, ProposalStatus::Fusionada);
    let slug = merged.topic_slug.unwrap();
    assert_eq!(
        w.engine.knowledge.get(&member, &slug).await.unwrap().status,
        TopicStatus::Knowledge
    );
    // Merging twice is a no-op: same outcome, no second audit row.
    let again = w.engine.knowledge.merge(&w.caller, &pid).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Fusionada);
    let audited: i64 = sqlx::query_scalar(
        "select count(*) from audit_log where workspace_id = $1 and action = 'knowledge.merge'",
    )
    .bind(&w.caller.workspace_id)
    .fetch_one(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(audited, 1);
}

#[tokio::test]
async fn a_suggested_edit_merges_its_patch_or_conflicts_when_the_topic_changed() {
    let (w, member, _) = setup().await;
    let t = "topic:icp-fabricantes-de-empaque";
    let env = call(&w.engine, &member, "context_suggest_edit", json!({"topic": t, "summary": "Agregar Puebla", "patch": "Fabricantes de empaque en Puebla."}), Surface::Ui)
        .await
        .unwrap();
    let first = env.results[0].fields["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(env.results[0].fields["diff"]
        .as_str()
        .unwrap()
        .contains("+Fabricantes de empaque en Puebla."));
    let second = w
        .engine
        .knowledge
        .suggest_edit(
            &member,
            t,
            "Otra versión",
            &TopicChanges {
                body: Some("Otra cosa.".into()),
                ..Default::default()
            },
            false,
            "ui",
        )
        .await
        .unwrap();
    w.engine.knowledge.merge(&w.caller, &first).await.unwrap();
    assert_eq!(
        w.engine.knowledge.get(&member, t).await.unwrap().body,
        "Fabricantes de empaque en Puebla."
    );
    // The second was proposed against the old version.
    assert_eq!(
        w.engine
            .knowledge
            .merge(&w.caller, &second.id)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::VersionConflict
    );
    let rejected = w
        .engine
        .knowledge
        .reject(&w.caller, &second.id)
        .await
        .unwrap();
    assert_eq!(rejected.status, ProposalStatus::Rechazada);
}

#[tokio::test]
async fn rejecting_a_note_removes_it_and_deleting_knowledge_needs_an_admin() {
    let (w, member, admin) = setup().await;
    let env = call(
        &w.engine,
        &member,
        "context_note",
        json!({"title": "Nota dudosa", "content": "Quizá.", "area": "ventas"}),
        Surface::Ui,
    )
    .await
    .unwrap();
    let pid = env.results[0].fields["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.engine.knowledge.reject(&w.caller, &pid).await.unwrap();
    assert_eq!(
        w.engine
            .knowledge
            .get(&member, "nota-dudosa")
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );

    let t = json!({"topic": "topic:objeciones-frecuentes-y-como-responderlas"});
    let e = call(
        &w.engine,
        &member,
        "context_delete",
        t.clone(),
        Surface::Mcp,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::Forbidden);
    call(&w.engine, &admin, "context_delete", t.clone(), Surface::Mcp)
        .await
        .unwrap();
    let e = call(&w.engine, &admin, "context_get", t, Surface::Mcp)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
}

/// The audit rows of a workspace: (actor, action, detail).
async fn audit_rows(engine: &Engine, workspace_id: &str) -> Vec<(String, String, Value)> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "select actor_id, action, detail from audit_log where workspace_id = $1 order by id",
    )
    .bind(workspace_id)
    .fetch_all(engine.store.pool())
    .await
    .unwrap();
    rows.into_iter()
        .map(|(a, b, d)| (a, b, serde_json::from_str(&d).unwrap()))
        .collect()
}

#[tokio::test]
async fn the_review_board_is_for_owners_and_admins_and_every_resolution_is_audited_once() {
    let (w, member, admin) = setup().await;
    demo::seed_review(&w.engine.knowledge, &member)
        .await
        .unwrap();
    // Made in the same millisecond (as a fast machine does): still in the order made.
    sqlx::query("update kn_proposals set created_at = 1")
        .execute(w.engine.store.pool())
        .await
        .unwrap();

    // A member cannot open the review page.
    let e = w.engine.knowledge.review_board(&member).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);

    let board = w.engine.knowledge.review_board(&w.caller).await.unwrap();
    assert_eq!(board.pending.len(), 2);
    let (note, edit) = (&board.pending[0], &board.pending[1]);
    assert_eq!(note.title, demo::DEMO_NOTE.0);
    assert_eq!(note.proposed_by, "Luis Prueba");
    assert!(edit
        .diff
        .as_deref()
        .unwrap()
        .contains("-Tabla de precios de referencia usada en 2025"));
    assert!(!board.recent.iter().any(|t| t.title == note.title));

    // The owner merges the note: it leaves the queue and heads the Knowledge list.
    let done = w
        .engine
        .knowledge
        .merge_from_review(&w.caller, &note.id)
        .await
        .unwrap();
    assert_eq!(
        done.message(),
        format!("«{}» ya es parte de Knowledge.", note.title)
    );
    let board = w.engine.knowledge.review_board(&w.caller).await.unwrap();
    assert_eq!(board.pending.len(), 1);
    assert_eq!(board.recent[0].title, note.title);
    assert_eq!(board.recent[0].topic_ref, note.topic_ref.clone().unwrap());

    // The admin rejects the edit; rejecting again is a no-op, merging it now is not.
    w.engine
        .knowledge
        .reject_from_review(&admin, &edit.id)
        .await
        .unwrap();
    let again = w.engine.knowledge.reject(&admin, &edit.id).await.unwrap();
    assert_eq!(again.status, ProposalStatus::Rechazada);
    let e = w
        .engine
        .knowledge
        .merge(&w.caller, &edit.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    // The topic kept its body.
    assert!(w
        .engine
        .knowledge
        .get(&w.caller, demo::DEMO_EDIT.0)
        .await
        .unwrap()
        .body
        .contains("2025"));
    assert!(w
        .engine
        .knowledge
        .review_board(&w.caller)
        .await
        .unwrap()
        .pending
        .is_empty());

    // One row per resolution: who, what, when.
    let audit = audit_rows(&w.engine, &w.caller.workspace_id).await;
    assert_eq!(audit.len(), 2, "{audit:?}");
    assert_eq!(audit[0].0, w.caller.user_id);
    assert_eq!(audit[0].1, "knowledge.merge");
    assert_eq!(audit[0].2["proposal"], json!(note.id));
    assert_eq!(audit[1].0, admin.user_id);
    assert_eq!(audit[1].1, "knowledge.reject");
    assert_eq!(audit[1].2["proposal"], json!(edit.id));
}

#[tokio::test]
async fn two_reviewers_merging_at_once_merge_and_audit_once() {
    let (w, member, admin) = setup().await;
    demo::seed_review(&w.engine.knowledge, &member)
        .await
        .unwrap();
    let id = w.engine.knowledge.pending(&w.caller).await.unwrap()[0]
        .id
        .clone();
    let (a, b) = tokio::join!(
        w.engine.knowledge.merge(&w.caller, &id),
        w.engine.knowledge.merge(&admin, &id)
    );
    assert_eq!(a.unwrap().status, ProposalStatus::Fusionada);
    assert_eq!(b.unwrap().status, ProposalStatus::Fusionada);
    let merges = audit_rows(&w.engine, &w.caller.workspace_id)
        .await
        .into_iter()
        .filter(|r| r.1 == "knowledge.merge")
        .count();
    assert_eq!(merges, 1);
}
