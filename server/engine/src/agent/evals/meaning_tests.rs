//! Tests of issue 22's bench side: the argument matcher, the schema walk over every
//! brief of the public and held-out files, and the board check on a real run.

use serde_json::{json, Value};

use super::bench::{self, Brief, BriefTurn, Expect};
use super::meaning::{matches, unknown_keys, ExpectedCall};
use super::report::{self, KINDS};

fn ok(expected: Value, actual: Value) -> bool {
    matches("", "", &expected, Some(&actual)).is_ok()
}

#[test]
fn expected_arguments_match_by_meaning_not_by_spelling() {
    // States by entity, buyers by acronym, giros by SCIAN giro, dates by day.
    assert!(ok(
        json!({"filters": {"state": "Ciudad de México"}}),
        json!({"filters": {"state": "CDMX"}, "kind": "suppliers"})
    ));
    assert!(ok(
        json!({"filters": {"state": "Nuevo León"}}),
        json!({"filters": {"state": "nuevo leon"}})
    ));
    assert!(ok(
        json!({"filters": {"buyer": "IMSS"}}),
        json!({"filters": {"buyer": "Instituto Mexicano del Seguro Social"}})
    ));
    assert!(ok(
        json!({"filters": {"giro": "limpieza"}}),
        json!({"filters": {"giro": "productos de limpieza"}})
    ));
    assert!(ok(
        json!({"filters": {"date_from": "2023"}}),
        json!({"filters": {"date_from": "2023-01-01"}})
    ));
    assert!(ok(
        json!({"filters": {"date_to": "2023"}}),
        json!({"filters": {"date_to": "2023-12-31"}})
    ));
    assert!(ok(
        json!({"filters": {"amount_min": 10000000}}),
        json!({"filters": {"amount_min": 10000000.0}})
    ));
    assert!(ok(
        json!({"rfcs": ["EMB050315AB1", "CAJ990101XY2"]}),
        json!({"rfcs": ["caj990101xy2", "EMB050315AB1"]})
    ));
    assert!(ok(
        json!({"filters": {"giro": null}}),
        json!({"filters": {}})
    ));
    assert!(ok(
        json!({"brief": "insumos médicos"}),
        json!({"brief": "Estudio de mercado de insumos medicos en Nuevo León"})
    ));
    // And a different meaning fails.
    assert!(!ok(
        json!({"filters": {"state": "Jalisco"}}),
        json!({"filters": {"state": "Nuevo León"}})
    ));
    assert!(!ok(
        json!({"filters": {"state": "Jalisco"}}),
        json!({"filters": {}})
    ));
    assert!(!ok(
        json!({"filters": {"buyer": "IMSS"}}),
        json!({"filters": {"buyer": "ISSSTE"}})
    ));
    assert!(!ok(
        json!({"filters": {"giro": "limpieza"}}),
        json!({"filters": {"giro": "seguridad"}})
    ));
    assert!(!ok(
        json!({"filters": {"date_to": "2023"}}),
        json!({"filters": {"date_to": "2023-01-01"}})
    ));
    assert!(!ok(
        json!({"kind": "opportunities"}),
        json!({"kind": "suppliers"})
    ));
    assert!(!ok(
        json!({"rfcs": ["A", "B"]}),
        json!({"rfcs": ["A", "B", "C"]})
    ));
    assert!(!ok(
        json!({"filters": {"giro": null}}),
        json!({"filters": {"giro": "empaque"}})
    ));
}

#[test]
fn a_giro_sent_as_the_query_or_one_state_in_states_counts_as_the_filter() {
    use crate::agent::contract::trajectory::{Step, ToolStep, Trajectory};
    let call = |tool: &str, args: Value, ok: bool| {
        Step::ToolCall(ToolStep {
            call: "c1".into(),
            tool: tool.into(),
            args,
            level: 0,
            writes: false,
            ok,
            error_code: (!ok).then(|| "INVALID_ARGUMENT".into()),
            result: json!({}),
            charged: 0,
            metered: 0,
            undo_token: None,
        })
    };
    let want = |tool: &str, args: Value| {
        vec![ExpectedCall {
            tool: tool.into(),
            args,
        }]
    };
    let mut t = Trajectory::new(
        "ses_1",
        "turn_1",
        "busca",
        luna_protocol::session::Stage::Buscando,
    );
    t.steps.push(call(
        "market_search",
        json!({"kind": "suppliers", "query": "empaque", "filters": {"state": "Jalisco"}}),
        true,
    ));
    t.steps.push(call(
        "market_count",
        json!({"filters": {"giro": "limpieza"}, "states": ["CDMX"]}),
        true,
    ));
    t.steps.push(call(
        "market_aggregate",
        json!({"group_by": "supplier"}),
        false,
    ));
    let failures = |w: Vec<ExpectedCall>| super::meaning::call_failures(&w, &t);
    assert!(failures(want(
        "market_search",
        json!({"kind": "suppliers", "filters": {"giro": "empaque", "state": "Jalisco"}})
    ))
    .is_empty());
    assert!(failures(want(
        "market_count",
        json!({"filters": {"giro": "limpieza", "state": "Ciudad de México"}})
    ))
    .is_empty());
    let wrong = failures(want(
        "market_search",
        json!({"kind": "suppliers", "filters": {"giro": "empaque", "state": "Puebla"}}),
    ));
    assert!(wrong[0].contains("filters.state"), "{wrong:?}");
    // A failed call is not the call that was asked for.
    let failed = failures(want("market_aggregate", json!({"group_by": "supplier"})));
    assert!(failed[0].contains("INVALID_ARGUMENT"), "{failed:?}");
    let absent = failures(want("market_compare", json!({})));
    assert!(absent[0].contains("not called"), "{absent:?}");
}

#[test]
fn operators_check_lengths_members_and_choices() {
    let states = json!({"states": ["Guanajuato", "Querétaro", "Aguascalientes"]});
    let bajio = json!({"states": {
        "$includes": ["Guanajuato", "Querétaro"],
        "$within": ["Aguascalientes", "Guanajuato", "Querétaro", "Jalisco"]
    }});
    assert!(ok(bajio.clone(), states));
    assert!(!ok(
        bajio.clone(),
        json!({"states": ["Guanajuato", "Yucatán", "Querétaro"]})
    ));
    assert!(!ok(bajio, json!({"states": ["Guanajuato"]})));
    let steps = json!({"steps": {"$len": 3}});
    assert!(ok(steps.clone(), json!({"steps": [{}, {}, {}]})));
    assert!(!ok(steps, json!({"steps": [{}, {}]})));
    let each = json!({"changes": {"$each": {"stage": "Contactado"}, "$len": 2}});
    assert!(ok(
        each.clone(),
        json!({"changes": [{"record_id": "a", "stage": "Contactado"}, {"record_id": "b", "stage": "contactado"}]})
    ));
    assert!(!ok(
        each,
        json!({"changes": [{"record_id": "a", "stage": "Contactado"}, {"record_id": "b", "stage": "Perdido"}]})
    ));
    let size = json!({"filters": {"size_band": {"$one_of": ["micro", "pequena"]}}});
    assert!(ok(
        size.clone(),
        json!({"filters": {"size_band": "pequena"}})
    ));
    assert!(!ok(size, json!({"filters": {"size_band": "grande"}})));
}

#[test]
fn the_schema_walk_catches_a_typo_in_an_expectation() {
    let registry = crate::tools::catalog();
    let schema = &registry.get("market_search").unwrap().def.input_schema;
    assert!(unknown_keys(
        "market_search",
        &json!({"kind": "awards", "filters": {"buyer": "IMSS", "amount_min": 1}}),
        schema
    )
    .is_empty());
    assert_eq!(
        unknown_keys(
            "market_search",
            &json!({"kind": "awards", "filters": {"stat": "Jalisco"}}),
            schema
        ),
        ["market_search: unknown argument filters.stat"]
    );
    // A key the issue asks for (several states in one search) is the target.
    assert!(unknown_keys("market_search", &json!({"states": ["Jalisco"]}), schema).is_empty());
    let compare = &registry.get("market_compare").unwrap().def.input_schema;
    assert!(!unknown_keys(
        "market_compare",
        &json!({"segments": [{"filters": {"giros": "empaque"}}]}),
        compare
    )
    .is_empty());
}

fn issue_files() -> Vec<(&'static str, Vec<Brief>)> {
    vec![
        (
            "briefs_public.json",
            bench::load(bench::PUBLIC_JSON, "briefs_public.json")
                .unwrap()
                .briefs,
        ),
        (
            "briefs_heldout.json",
            bench::load(bench::HELDOUT_JSON, "briefs_heldout.json")
                .unwrap()
                .briefs,
        ),
    ]
}

#[test]
fn the_public_and_held_out_briefs_parse_cover_every_kind_and_name_real_arguments() {
    let registry = crate::tools::catalog();
    let files = issue_files();
    let all: Vec<&Brief> = files.iter().flat_map(|(_, b)| b.iter()).collect();
    assert!(all.len() >= 150, "{} briefs", all.len());
    let multi = all.iter().filter(|b| b.turns.len() > 1).count();
    assert!(multi >= 40, "{multi} multi-turn briefs");
    let mut ids: Vec<&str> = all.iter().map(|b| b.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        all.len(),
        "brief ids are unique across both files"
    );
    let (public, held) = (&files[0].1, &files[1].1);
    assert!(held.len() * 3 >= all.len() - 6 && held.len() * 3 <= all.len() + 6);
    for kind in KINDS {
        for (name, briefs) in &files {
            assert!(
                briefs.iter().any(|b| b.kind.as_deref() == Some(*kind)),
                "{name} has no brief of kind {kind}"
            );
        }
    }
    let mut problems = Vec::new();
    for b in public.iter().chain(held.iter()) {
        let kinds = std::iter::once(b.kind.as_deref())
            .chain(b.turns.iter().map(|t| t.kind.as_deref()))
            .flatten();
        for k in kinds {
            if !KINDS.contains(&k) {
                problems.push(format!("{}: unknown kind {k}", b.id));
            }
        }
        if b.kind.is_none() {
            problems.push(format!("{}: no kind", b.id));
        }
        for (i, t) in b.turns.iter().enumerate() {
            let e = &t.expect;
            for tool in e
                .tools
                .iter()
                .chain(&e.tools_absent)
                .chain(e.calls.iter().map(|c| &c.tool))
            {
                if registry.get(tool).is_none() {
                    problems.push(format!("{} t{}: no tool {tool}", b.id, i + 1));
                }
            }
            for call in &e.calls {
                if let Some(entry) = registry.get(&call.tool) {
                    for p in unknown_keys(&call.tool, &call.args, &entry.def.input_schema) {
                        problems.push(format!("{} t{}: {p}", b.id, i + 1));
                    }
                }
            }
            if e.intent.is_empty() && e.calls.is_empty() && e.selection_size.is_none() {
                problems.push(format!("{} t{}: expects nothing", b.id, i + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The board check on a real run: a second search replaces the selection, which a
/// brief that says «selection unchanged» counts as an unasked change.
#[tokio::test]
async fn a_turn_that_replaces_the_selection_unasked_is_counted() {
    let turn = |message: &str, expect: Expect| BriefTurn {
        message: message.into(),
        kind: None,
        expect,
        then: None,
    };
    let brief = Brief {
        id: "m1".into(),
        topic: "board".into(),
        kind: Some("unclear_no_change".into()),
        pending: None,
        auto: None,
        turns: vec![
            turn(
                "Busca 10 proveedores de limpieza en Jalisco",
                Expect {
                    selection_size: Some(10),
                    ..Expect::default()
                },
            ),
            turn(
                "Busca 5 proveedores de empaque en Nuevo León",
                Expect {
                    selection_unchanged: true,
                    saved_unchanged: true,
                    drafts_unchanged: true,
                    ..Expect::default()
                },
            ),
        ],
    };
    let briefs = vec![brief];
    let report = bench::run(&bench::demo_engine().await.unwrap(), &briefs)
        .await
        .unwrap();
    let turns = &report.briefs[0].turns;
    assert!(turns[0].failures.is_empty(), "{:?}", turns[0].failures);
    assert!(turns[0].unasked_changes.is_empty());
    assert_eq!(turns[1].unasked_changes, ["selection"]);
    assert!(turns[1].failures[0].contains("selection"));
    let score = report::score("m.json", true, &briefs, &report);
    assert_eq!(score.unasked_changes, 1);
    assert_eq!(score.turns.right, 1);
    assert_eq!(score.turns.total, 2);
    assert_eq!(score.by_kind["unclear_no_change"].total, 2);
    // The held-out summary carries numbers only: no sentence, no brief id.
    let md = report::scores_markdown(&[score]);
    assert!(!md.contains("m1") && !md.contains("Busca"), "{md}");
}
