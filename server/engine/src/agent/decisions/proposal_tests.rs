//! A CRM card (`guardar_en_crm`, `cambios_masivos`) is prepared only from a proposal
//! of its own kind that a tool produced in this turn: an id from another turn or
//! session, a forged one, or another kind's is refused and no card is offered.

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use luna_protocol::tool::Envelope;
use serde_json::json;

use super::tests::{board, final_step, fx, handles, save_card, tool, Adversary, Fx, SUPPLIERS};
use super::*;
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::intent::{DecisionDraft, TurnIntent};
use crate::registry::Surface;

/// A save proposal made by a call of its own (another turn, as far as a card knows).
async fn save_proposal(fx: &Fx, company: &str) -> (String, Envelope) {
    let env = fx
        .call(
            "crm_save_companies",
            json!({"collection_id": fx.col, "source": [company], "conflict_policy": "skip"}),
            Surface::Luna,
        )
        .await
        .unwrap();
    let id = env.results[0].fields["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    (id, env)
}

fn save(proposal_id: &str) -> DecisionDraft {
    DecisionDraft::GuardarEnCrm {
        proposal_id: proposal_id.to_owned(),
    }
}

#[tokio::test]
async fn a_save_card_needs_the_proposal_this_turn_produced() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let (earlier, _) = save_proposal(&fx, "company:emp-0001").await;
    let (_, this_turn) = save_proposal(&fx, "company:emp-0002").await;
    // Not produced in this turn: no source, or a source that did not return it.
    for source in [None, Some(&this_turn)] {
        let e = prepare(&fx.engine, &fx.caller, &save(&earlier), source)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{source:?}");
    }
    // A forged id, even inside a source that names it.
    let mut forged_env = this_turn.clone();
    forged_env.results[0]
        .fields
        .insert("proposal_id".into(), json!("prp_forjada"));
    let e = prepare(
        &fx.engine,
        &fx.caller,
        &save("prp_forjada"),
        Some(&forged_env),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    // A save proposal is not a bulk change.
    let own = this_turn.results[0].fields["proposal_id"].as_str().unwrap();
    let e = prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::CambiosMasivos {
            proposal_id: own.to_owned(),
        },
        Some(&this_turn),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    // The proposal this turn produced still makes its card.
    let card = save_card(&fx).await.card;
    assert_eq!(
        card.kind,
        luna_protocol::decision::DecisionKind::GuardarEnCrm
    );
}

#[tokio::test]
async fn a_scripted_model_cannot_offer_a_save_card_over_another_proposal() {
    let fx = fx(Plan::Founder, Role::Member).await;
    // A selection on the board, so the CRM tools are in view.
    let item = luna_protocol::board::SelectionItem {
        reference: format!("company:{}", SUPPLIERS[0]),
        label: "Empaques 0 SA de CV".into(),
        why: "Le vendió a gobierno".into(),
        evidence: Vec::new(),
        priority: None,
    };
    fx.engine
        .sessions
        .append_one(
            &fx.session,
            luna_protocol::event::SessionEvent::BoardPatched(luna_protocol::event::BoardPatched {
                turn_id: None,
                patch: vec![luna_protocol::patch::PatchOp::add(
                    luna_protocol::board::Board::SELECTION,
                    json!([item]),
                )],
            }),
        )
        .await
        .unwrap();
    // The model quotes contacts (a quote id, produced in this turn) and proposes
    // saving to the CRM with it.
    let people = handles(&fx, &SUPPLIERS[..1]).await;
    let adversary = Adversary(move |input: &ModelInput| {
        let quote = input.transcript.iter().find_map(|e| {
            e.result["results"][0]["quote_id"]
                .as_str()
                .map(str::to_owned)
        });
        match quote {
            None => ModelStep::Tools(vec![tool("people_quote", json!({"handles": people}))]),
            Some(id) => final_step(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::GuardarEnCrm { proposal_id: id },
                },
                "Te dejo la tarjeta para guardar.",
            ),
        }
    });
    let out = crate::agent::turn::runner::run_turn(
        &fx.engine,
        &adversary,
        &fx.caller,
        &fx.session,
        "t1",
        "guárdalos en el CRM",
    )
    .await
    .unwrap();
    assert!(
        out.transcript.iter().any(|e| e.tool.name == "people_quote"),
        "{:?}",
        out.transcript
    );
    assert!(board(&fx).await.pending.is_empty(), "no card is offered");
    assert!(
        matches!(out.intent, TurnIntent::Limite { .. }),
        "{:?} {:?}",
        out.intent,
        out.transcript.first().map(|e| e.result.to_string())
    );
    assert!(out.trajectory.decisions_proposed().is_empty());
}

/// A save proposal row that drifted from its typed definition (a field missing, or of
/// the wrong type) is a typed internal error, never a card that says «Se crearán 0».
#[tokio::test]
async fn a_drifted_save_proposal_row_is_a_typed_error_not_an_empty_preview() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let (id, env) = save_proposal(&fx, "company:emp-0001").await;
    let mut missing = env.clone();
    missing.results[0].fields.remove("to_create");
    let mut wrong = env.clone();
    wrong.results[0]
        .fields
        .insert("sample_to_create".into(), json!("Empaques 1"));
    for drifted in [missing, wrong] {
        let e = prepare(&fx.engine, &fx.caller, &save(&id), Some(&drifted))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Internal, "{drifted:?}");
    }
    // The row as the tool made it still prepares its card, with the count.
    let card = prepare(&fx.engine, &fx.caller, &save(&id), Some(&env))
        .await
        .unwrap()
        .card;
    assert_eq!(card.preview[0].label, "Se crearán 1 registros en «Nuevo»");
}
