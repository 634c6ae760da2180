//! The bounds of Cerebro's inputs: file patterns match in linear time and are capped
//! in count and length, bodies, patches, titles, summaries and queries are capped, and
//! a suggested edit's diff stays small and exact.

use std::time::Duration;

use luna_protocol::error::ErrorCode;
use serde_json::json;

use crate::base::error::EngineError;
use crate::registry::Surface;

use super::tests::{call, setup};
use super::*;

fn invalid_naming(e: EngineError, limit: &str) {
    let b = e.body();
    assert_eq!(b.code, ErrorCode::InvalidArgument, "{b:?}");
    assert!(
        b.message.contains(limit) || b.hint.contains(limit),
        "the error names the limit {limit}: {b:?}"
    );
}

fn note(patterns: Vec<String>) -> NewTopic {
    NewTopic {
        title: "Rutas raras".into(),
        area: "ventas".into(),
        body: "Una nota con patrones de archivo.".into(),
        patterns,
    }
}

#[tokio::test]
async fn a_pathological_file_pattern_is_answered_and_not_a_hang() {
    let (w, member, _) = setup().await;
    let (t, _) = w
        .engine
        .knowledge
        .create_note(
            &member,
            &note(vec!["a*a*a*a*a*a*a*a*a*a*b".into()]),
            "Tema nuevo",
            "mcp",
        )
        .await
        .unwrap();
    let retrieve = |file: String| {
        let (engine, member) = (w.engine.clone(), member.clone());
        async move {
            tokio::time::timeout(
                Duration::from_secs(10),
                call(
                    &engine,
                    &member,
                    "context_retrieve",
                    json!({"files": [file]}),
                    Surface::Mcp,
                ),
            )
            .await
            .expect("matching a file pattern must not stall the server")
            .unwrap()
        }
    };
    let a = "a".repeat(64);
    let env = retrieve(a.clone()).await;
    assert!(!env.results.iter().any(|r| r.ref_ == t.ref_()));
    let env = retrieve(format!("{a}b")).await;
    assert_eq!(env.results[0].ref_, t.ref_());
    assert_eq!(env.results[0].fields["matched"], json!(["archivos"]));
}

#[tokio::test]
async fn overlong_or_too_many_patterns_are_refused_on_every_path() {
    let (w, member, _) = setup().await;
    let long = format!("gobierno/{}", "x".repeat(200));
    // The engine refuses, whatever the surface.
    let e = w
        .engine
        .knowledge
        .create_note(&member, &note(vec![long.clone()]), "Tema nuevo", "mcp")
        .await
        .unwrap_err();
    invalid_naming(e, "200");
    let e = w
        .engine
        .knowledge
        .draft_note(&member, &note(vec![long.clone()]), "luna")
        .await
        .unwrap_err();
    invalid_naming(e, "200");
    let many = (0..21).map(|i| format!("p{i}/**")).collect();
    let e = w
        .engine
        .knowledge
        .create_note(&member, &note(many), "Tema nuevo", "mcp")
        .await
        .unwrap_err();
    invalid_naming(e, "20");
    // A change to a Knowledge topic (a suggested edit) is checked the same way.
    let changes = TopicChanges {
        patterns: Some(vec![long.clone()]),
        ..TopicChanges::default()
    };
    let e = w
        .engine
        .knowledge
        .update(&member, "topic:icp-fabricantes-de-empaque", &changes, "mcp")
        .await
        .unwrap_err();
    invalid_naming(e, "200");
    // The tools' schemas say so too: the registry refuses before the handler.
    for (tool, args) in [
        (
            "context_create",
            json!({"title": "x", "area": "ventas", "body": "y", "patterns": [long]}),
        ),
        (
            "context_update",
            json!({"topic": "topic:icp-fabricantes-de-empaque", "patterns": [long]}),
        ),
        (
            "context_retrieve",
            json!({"files": [format!("gobierno/{}", "x".repeat(1_024))]}),
        ),
    ] {
        let e = call(&w.engine, &member, tool, args, Surface::Mcp)
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{tool}: {e:?}");
    }
}

#[tokio::test]
async fn a_suggested_edit_of_a_long_topic_diffs_only_the_changed_line() {
    let (w, member, _) = setup().await;
    // 2,500 short lines: a long note, well under the body cap.
    let lines: Vec<String> = (1..=2_500).map(|i| format!("l{i}")).collect();
    let body = lines.join("\n");
    let (t, p) = w
        .engine
        .knowledge
        .create_note(
            &member,
            &NewTopic {
                body: body.clone(),
                ..note(Vec::new())
            },
            "Tema nuevo",
            "mcp",
        )
        .await
        .unwrap();
    w.engine.knowledge.merge(&w.caller, &p.id).await.unwrap();
    let patch = body.replace("\nl1200\n", "\nL1200\n");
    let env = call(
        &w.engine,
        &member,
        "context_suggest_edit",
        json!({"topic": t.ref_(), "summary": "Corregir la línea 1200", "patch": patch}),
        Surface::Ui,
    )
    .await
    .unwrap();
    let diff = env.results[0].fields["diff"].as_str().unwrap();
    let hunks = diff.lines().filter(|l| l.starts_with("@@ ")).count();
    assert_eq!(hunks, 1, "one hunk: {diff}");
    assert!(diff.contains("\n-l1200\n+L1200\n"), "{diff}");
    assert!(!diff.contains("\n-l1\n"), "{diff}");
    assert!(diff.lines().count() < 20, "{diff}");
}

#[tokio::test]
async fn oversize_bodies_patches_titles_summaries_and_queries_are_refused() {
    let (w, member, _) = setup().await;
    let queued = w.engine.knowledge.pending(&member).await.unwrap().len();
    let t = "topic:icp-fabricantes-de-empaque";
    let huge = "palabra ".repeat(2_501);
    // The engine: a patch over the body cap, a summary and a title over theirs.
    let patch = TopicChanges {
        body: Some(huge.clone()),
        ..TopicChanges::default()
    };
    let e = w
        .engine
        .knowledge
        .suggest_edit(&member, t, "Más contenido", &patch, false, "ui")
        .await
        .unwrap_err();
    invalid_naming(e, "20000");
    let e = w
        .engine
        .knowledge
        .suggest_edit(
            &member,
            t,
            &"r".repeat(301),
            &TopicChanges::default(),
            false,
            "ui",
        )
        .await
        .unwrap_err();
    invalid_naming(e, "300");
    let title = TopicChanges {
        title: Some("t".repeat(161)),
        ..TopicChanges::default()
    };
    let e = w
        .engine
        .knowledge
        .update(&member, t, &title, "mcp")
        .await
        .unwrap_err();
    invalid_naming(e, "160");
    // The schemas: the registry's validator refuses before any handler runs.
    for (tool, args, s) in [
        (
            "context_retrieve",
            json!({"query": "precio ".repeat(200)}),
            Surface::Mcp,
        ),
        (
            "context_create",
            json!({"title": "x", "area": "ventas", "body": huge}),
            Surface::Mcp,
        ),
        (
            "context_suggest_edit",
            json!({"topic": t, "summary": "s".repeat(301)}),
            Surface::Ui,
        ),
    ] {
        let e = call(&w.engine, &member, tool, args, s).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{tool}: {e:?}");
        assert!(e.message.contains("demasiado largo"), "{tool}: {e:?}");
    }
    // Nothing reached the review queue.
    assert_eq!(
        w.engine.knowledge.pending(&member).await.unwrap().len(),
        queued
    );
}
