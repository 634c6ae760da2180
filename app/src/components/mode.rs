//! The mode selector beside the composer (CONTRACT §8): Preguntar, or Automático con
//! presupuesto with the credit and contact caps for this session, and the visible
//! counter ("llevas 40 de 100"). The board's `auto` section is the only state shown.

use leptos::prelude::*;
use luna_protocol::decision::DecisionKind;
use luna_protocol::session::{ModeRequest, SessionMode};

use super::kind_checks::KindChecks;
use super::live::Live;

#[component]
pub fn ModeSelector() -> impl IntoView {
    let live = expect_context::<Live>();
    let counter = move || live.replica.with(|r| r.view.board.auto.clone());
    let (open, set_open) = signal(false);
    let (credits, set_credits) = signal(String::from("50"));
    let (contacts, set_contacts) = signal(String::from("10"));
    let (error, set_error) = signal(None::<String>);
    let (busy, set_busy) = signal(false);
    // Ajuste fino: the classes the workspace allows, and the ones chosen.
    let (fine, set_fine) = signal(false);
    let (allowed, set_allowed) = signal(Vec::<DecisionKind>::new());
    let (chosen, set_chosen) = signal(Vec::<DecisionKind>::new());

    let apply = move |mode: SessionMode| {
        let Some(session_id) = live.session_id.get_untracked() else {
            return;
        };
        let parse = |s: String| s.trim().parse::<u32>().ok();
        let request = ModeRequest {
            mode,
            credit_cap: parse(credits.get_untracked()),
            contact_cap: parse(contacts.get_untracked()),
            classes: (mode == SessionMode::AjusteFino).then(|| chosen.get_untracked()),
        };
        set_busy.set(true);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            match crate::decisions_api::set_session_mode(session_id, request).await {
                Ok(_) => set_open.set(false),
                Err(e) => set_error.set(Some(e.message())),
            }
            set_busy.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (session_id, request);
    };

    // Prefill the caps with the workspace's defaults when the panel opens.
    let load_defaults = move || {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Ok(p) = crate::decisions_api::workspace_auto_policy().await {
                set_credits.set(p.default_credit_cap.to_string());
                set_contacts.set(p.default_contact_cap.to_string());
                set_chosen.set(p.classes.clone());
                set_allowed.set(p.classes);
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = set_allowed;
    };

    // A new work session: its board starts empty and auto mode ends with the old one.
    let new_session = move || {
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            match crate::session_api::create_session().await {
                Ok(_) => {
                    let _ = window().location().reload();
                }
                Err(e) => set_error.set(Some(e.message())),
            }
        });
    };

    let activate = Callback::new(move |()| {
        apply(if fine.get_untracked() {
            SessionMode::AjusteFino
        } else {
            SessionMode::Automatico
        })
    });

    view! {
        <div class="mb-2 flex flex-wrap items-center gap-2 text-xs">
            <label for="mode" class="text-slate-500 dark:text-slate-400">"Modo"</label>
            <select
                id="mode"
                data-testid="mode-select"
                class="rounded-md border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-950"
                prop:value=move || if counter().is_some() { "automatico" } else { "preguntar" }
                on:change=move |ev| {
                    let value = event_target_value(&ev);
                    if value == "preguntar" {
                        set_open.set(false);
                        apply(SessionMode::Preguntar);
                    } else {
                        set_fine.set(value == "ajuste_fino");
                        load_defaults();
                        set_open.set(true);
                    }
                }
            >
                <option value="preguntar">{SessionMode::Preguntar.label()}</option>
                <option value="automatico">{SessionMode::Automatico.label()}</option>
                <option value="ajuste_fino">{SessionMode::AjusteFino.label()}</option>
            </select>
            <button type="button" data-testid="new-session"
                class="ml-auto rounded-md px-2 py-1 text-slate-600 underline hover:text-slate-900 dark:text-slate-400"
                title="Empieza una conversación nueva; el modo vuelve a Preguntar"
                on:click=move |_| new_session()
            >"Nueva conversación"</button>
            {move || counter().map(|c| view! {
                <span class="rounded-full bg-emerald-100 px-2 py-0.5 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100" data-testid="auto-counter" role="status">
                    {format!("Automático · llevas {} de {} créditos · {} de {} contactos", c.credits_spent, c.credit_cap, c.contacts_spent, c.contact_cap)}
                </span>
            })}
        </div>
        <Show when=move || open.get()>
            {Suspend::new(auto_panel(AutoPanel {
                credits,
                set_credits,
                contacts,
                set_contacts,
                fine,
                allowed,
                chosen,
                set_chosen,
                busy,
                activate,
            }))}
        </Show>
        {move || error.get().map(|e| view! { <p role="alert" class="mb-1 text-xs text-rose-700 dark:text-rose-300">{e}</p> })}
    }
}

/// The auto-mode panel's state; it lives in the selector, the panel only shows it.
#[derive(Clone, Copy)]
struct AutoPanel {
    credits: ReadSignal<String>,
    set_credits: WriteSignal<String>,
    contacts: ReadSignal<String>,
    set_contacts: WriteSignal<String>,
    fine: ReadSignal<bool>,
    allowed: ReadSignal<Vec<DecisionKind>>,
    chosen: ReadSignal<Vec<DecisionKind>>,
    set_chosen: WriteSignal<Vec<DecisionKind>>,
    busy: ReadSignal<bool>,
    /// "Activar": auto mode, or ajuste fino with the chosen classes.
    activate: Callback<()>,
}

/// The caps (and, in ajuste fino, the classes) of auto mode. Split out of the main wasm:
/// fetched the first time the person picks an automatic mode.
#[leptos::lazy]
fn auto_panel(p: AutoPanel) -> AnyView {
    view! {
        <div class="mb-2 flex flex-wrap items-end gap-2 rounded-lg border border-slate-200 p-2 text-xs dark:border-slate-800" data-testid="auto-panel">
            <label class="flex flex-col">
                "Tope de créditos en esta sesión"
                <input type="number" min="0" inputmode="numeric" data-testid="auto-credit-cap"
                    class="w-28 rounded-md border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-950"
                    prop:value=p.credits on:input=move |ev| p.set_credits.set(event_target_value(&ev)) />
            </label>
            <label class="flex flex-col">
                "Tope de contactos"
                <input type="number" min="0" inputmode="numeric" data-testid="auto-contact-cap"
                    class="w-24 rounded-md border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-950"
                    prop:value=p.contacts on:input=move |ev| p.set_contacts.set(event_target_value(&ev)) />
            </label>
            <Show when=move || p.fine.get()>
                <KindChecks
                    kinds=p.allowed
                    chosen=p.chosen
                    set_chosen=p.set_chosen
                    legend="Acciones en automático"
                    fieldset_class="flex w-full flex-wrap gap-3"
                    legend_class="sr-only"
                    label_class="flex items-center gap-1"
                />
            </Show>
            <button type="button" data-testid="auto-activate"
                class="rounded-md bg-emerald-600 px-3 py-1.5 font-medium text-white hover:bg-emerald-700 disabled:opacity-60"
                disabled=move || p.busy.get()
                on:click=move |_| p.activate.run(())
            >"Activar"</button>
            <p class="w-full text-slate-500 dark:text-slate-400">"Luna hará sola lo que quepa en este presupuesto y te dirá el costo de cada acción. Enviar correos y fusionar conocimiento siempre te preguntan."</p>
        </div>
    }
    .into_any()
}
