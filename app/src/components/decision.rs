//! A decision card (CONTRACT §8): what the person needs to decide — preview, price,
//! balance, expiry countdown, consequence — and the buttons that resolve it on the
//! server. Disabled, with the reason, when the person may not resolve it.

use leptos::prelude::*;
use luna_protocol::decision::{
    Credits, DecisionCard, DecisionKind, DecisionOutcome, Ledger, Resolution, ResolvesIn,
};

use super::live::Live;

fn credits(c: Credits) -> String {
    let ledger = match c.ledger {
        Ledger::Contacto => "créditos de contacto",
        Ledger::Inteligencia => "créditos de inteligencia",
    };
    format!("{} {ledger}", c.amount)
}

/// Spanish word for a resolved card.
pub fn outcome_label(o: DecisionOutcome) -> &'static str {
    match o {
        DecisionOutcome::Accepted => "Aceptada",
        DecisionOutcome::Declined => "Rechazada",
        DecisionOutcome::Expired => "Vencida",
    }
}

fn countdown(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    format!("Vence en {}:{:02}", s / 60, s % 60)
}

/// A pending card, in the chat (`inline`) or on the board. Split out of the main wasm:
/// fetched when the session first has a card waiting.
#[leptos::lazy]
pub fn decision_card(card: DecisionCard, inline: bool) -> AnyView {
    view! { <DecisionCardView card inline /> }.into_any()
}

#[component]
fn DecisionCardView(card: DecisionCard, inline: bool) -> impl IntoView {
    let live = expect_context::<Live>();
    let (busy, set_busy) = signal(false);
    let (error, set_error) = signal(None::<String>);
    let id = StoredValue::new(card.id.clone());
    // The version the person is looking at: a click on it authorizes this, never a
    // version a teammate's edit issued after.
    let seen = StoredValue::new(card.fingerprint.clone());
    // revisar_secuencia: one checkbox per step, all ticked to start with.
    let (ticked, set_ticked) = signal(card.steps.iter().map(|s| s.index).collect::<Vec<u32>>());
    let is_sequence = !card.steps.is_empty();
    let pager = card
        .recipients
        .filter(|n| *n > 0)
        .map(|total| view! { <super::recipient_pager::RecipientPager decision_id=card.id.clone() total /> });
    let admin_only = card.resolves_in == ResolvesIn::RevisionConocimiento;
    let may_resolve = move || !admin_only || live.role.get().is_some_and(|r| r.can_administer());
    let expires_at = card.expires_at;
    let left = move || expires_at.map(|at| at - live.clock.get());
    let expired = move || live.clock.get() > 0 && left().is_some_and(|ms| ms <= 0);

    let resolve = move |resolution: Resolution| {
        let Some(session_id) = live.session_id.get_untracked() else {
            return;
        };
        set_busy.set(true);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            // A sequence card authorizes exactly the ticked steps, never the whole card.
            let r = if is_sequence && resolution == Resolution::Accept {
                let steps = ticked.get_untracked();
                crate::decisions_api::authorize_sequence_steps(
                    session_id,
                    id.get_value(),
                    steps,
                    seen.get_value(),
                )
                .await
            } else {
                crate::decisions_api::resolve_decision(
                    session_id,
                    id.get_value(),
                    resolution,
                    seen.get_value(),
                )
                .await
            };
            if let Err(e) = r {
                set_error.set(Some(e.message()));
            }
            set_busy.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (session_id, resolution, id, seen, is_sequence, ticked);
    };

    let expired_text = match card.kind {
        DecisionKind::RevelarContactos => "La cotización venció; pide a Luna una nueva.",
        _ => "La propuesta venció; pide a Luna que la prepare de nuevo.",
    };
    let accept_label = match card.kind {
        DecisionKind::GuardarEnCrm => "Guardar",
        DecisionKind::RevelarContactos => "Revelar",
        DecisionKind::FusionarConocimiento => "Fusionar",
        DecisionKind::RevisarSecuencia => "Autorizar",
        _ => "Aceptar",
    };
    let testid = if inline {
        "decision-inline"
    } else {
        "decision-card"
    };
    let aria = card.title.clone();
    let kind = card.kind.as_str();
    view! {
        <div
            role="group"
            aria-label=aria
            class="rounded-xl border border-amber-300 bg-amber-50 p-3 text-slate-900 dark:border-amber-800 dark:bg-amber-950 dark:text-slate-100"
            data-testid=testid
            data-kind=kind
        >
            <p class="font-medium">{card.title}</p>
            {(!card.steps.is_empty()).then(|| view! {
                <fieldset class="mt-2 space-y-1 text-sm" data-testid="sequence-steps">
                    <legend class="sr-only">"Pasos a autorizar"</legend>
                    {card.steps.into_iter().map(|st| {
                        let i = st.index;
                        view! {
                            <label class="flex items-start gap-2">
                                <input type="checkbox" class="mt-1" data-step=i.to_string()
                                    prop:checked=move || ticked.with(|t| t.contains(&i))
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        set_ticked.update(|t| {
                                            t.retain(|x| *x != i);
                                            if on { t.push(i); }
                                        });
                                    } />
                                <span>
                                    <span class="font-medium">{st.label}</span>
                                    {st.detail.map(|d| view! { <span class="block whitespace-pre-line text-xs text-slate-600 dark:text-slate-400">{d}</span> })}
                                </span>
                            </label>
                        }
                    }).collect_view()}
                </fieldset>
            })}
            {pager}
            <ul class="mt-1 space-y-0.5 text-sm text-slate-700 dark:text-slate-300">
                {card.preview.into_iter().map(|p| view! {
                    <li data-ref=p.reference>{p.label}{p.detail.map(|d| view! { <span class="text-slate-500 dark:text-slate-400">" · "{d}</span> })}</li>
                }).collect_view()}
            </ul>
            {card.price.map(|p| view! {
                <p class="mt-2 text-sm" data-testid="decision-price">
                    "Costo: "<strong>{credits(p)}</strong>
                    {card.balance.map(|b| format!(" · Saldo: {}", credits(b)))}
                </p>
            })}
            {move || left().filter(|_| live.clock.get() > 0).map(|ms| view! {
                <p class="text-xs text-slate-600 dark:text-slate-400" data-testid="decision-expiry">
                    {if ms > 0 { countdown(ms) } else { expired_text.to_owned() }}
                </p>
            })}
            <p class="mt-2 text-sm">{card.consequence}</p>
            <Show
                when=may_resolve
                fallback=|| view! {
                    <p class="mt-2 text-sm text-slate-600 dark:text-slate-400" data-testid="decision-waiting">
                        "Esperando al dueño o a un administrador: se resuelve en la página de Conocimiento."
                    </p>
                }
            >
                <div class="mt-2 flex gap-2">
                    <button
                        type="button"
                        class="rounded-lg bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700 disabled:opacity-60"
                        disabled=move || busy.get() || expired() || (is_sequence && ticked.with(Vec::is_empty))
                        on:click=move |_| resolve(Resolution::Accept)
                    >
                        {accept_label}
                    </button>
                    <button
                        type="button"
                        class="rounded-lg border border-slate-300 px-3 py-1.5 text-sm hover:bg-white disabled:opacity-60 dark:border-slate-700 dark:hover:bg-slate-900"
                        disabled=move || busy.get()
                        on:click=move |_| resolve(Resolution::Decline)
                    >
                        "Rechazar"
                    </button>
                </div>
            </Show>
            {move || error.get().map(|e| view! { <p role="alert" class="mt-1 text-sm text-rose-700 dark:text-rose-300">{e}</p> })}
        </div>
    }
}
