//! The board: the selection as argued cards (tap to open the evidence drawer,
//! "quitar" to remove), the saved list as Tablero or Tabla, and pending decisions —
//! always the reducer's projection of the session log.

use leptos::prelude::*;
use luna_protocol::board::SelectionItem;

use super::decision::decision_card;
use super::drawer::Drawer;
use super::kanban::saved_collection;
use super::live::Live;

#[component]
pub fn SelectionSection() -> impl IntoView {
    let live = expect_context::<Live>();
    // A memo, so the cards re-render only when the selection itself changes (not on
    // every chat event), keeping focus and pending "quitar" state.
    let items = Memo::new(move |_| live.replica.with(|r| r.view.board.selection.clone()));
    view! {
        <section aria-label="Selección" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">
                "Selección" {move || { let n = items.with(Vec::len); (n > 0).then(|| format!(" · {n}")) }}
            </h2>
            <Show
                when=move || !items.with(Vec::is_empty)
                fallback=|| view! { <Empty text="Cuando Luna arme una selección, aquí verás cada empresa con la razón y la evidencia que la respaldan." /> }
            >
                <ul class="grid gap-2 lg:grid-cols-2">
                    <For each=move || items.get() key=|i| (i.reference.clone(), i.why.clone(), i.priority, i.evidence.len()) let:item>
                        <SelectionCard item />
                    </For>
                </ul>
            </Show>
        </section>
    }
    .into_any()
}

/// An argued card: tapping it opens the evidence drawer; "quitar" removes it from
/// the selection through `selection_update` (the board then follows the log).
#[component]
fn SelectionCard(item: SelectionItem) -> impl IntoView {
    let live = expect_context::<Live>();
    let drawer = expect_context::<Drawer>();
    let (busy, set_busy) = signal(false);
    let (error, set_error) = signal(None::<String>);
    let priority = item.priority.is_some();
    let reference = StoredValue::new(item.reference.clone());
    let open = move || drawer.show(reference.get_value());
    let label = item.label.clone();
    let remove = move |ev: leptos::ev::MouseEvent| {
        ev.stop_propagation();
        let Some(session_id) = live.session_id.get_untracked() else {
            return;
        };
        set_busy.set(true);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Err(e) =
                crate::board_api::remove_from_selection(session_id, reference.get_value()).await
            {
                set_error.set(Some(e.message()));
            }
            set_busy.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = session_id;
    };
    view! {
        <li
            class="cursor-pointer rounded-xl border border-slate-200 p-3 hover:border-indigo-300 dark:border-slate-800 dark:hover:border-indigo-700"
            data-testid="selection-card"
            data-ref=item.reference.clone()
            on:click=move |_| open()
        >
            <div class="flex items-start justify-between gap-2">
                <button
                    type="button"
                    class="text-left font-medium hover:underline focus-visible:outline-2 focus-visible:outline-indigo-500"
                    data-testid="selection-open"
                    data-open-ref=item.reference.clone()
                    aria-haspopup="dialog"
                    on:click=move |ev| {
                        ev.stop_propagation();
                        open();
                    }
                >
                    {item.label}
                </button>
                <div class="flex shrink-0 items-center gap-2">
                    {priority.then(|| view! { <span class="rounded-full bg-amber-100 px-2 text-xs text-amber-900 dark:bg-amber-900 dark:text-amber-100">"Prioridad"</span> })}
                    <button
                        type="button"
                        data-testid="selection-remove"
                        aria-label=format!("Quitar {label} de la selección")
                        class="rounded-md px-2 text-xs text-slate-600 ring-1 ring-slate-300 hover:bg-rose-50 hover:text-rose-800 focus-visible:outline-2 focus-visible:outline-indigo-500 disabled:opacity-60 dark:text-slate-300 dark:ring-slate-700 dark:hover:bg-rose-950"
                        disabled=busy
                        on:click=remove
                    >
                        {move || if busy.get() { "quitando…" } else { "quitar" }}
                    </button>
                </div>
            </div>
            <p class="mt-1 text-sm text-slate-600 dark:text-slate-400">{item.why}</p>
            {(!item.evidence.is_empty()).then(|| view! {
                <ul class="mt-2 space-y-0.5 text-xs text-slate-500 dark:text-slate-400" aria-label="Evidencia">
                    {item.evidence.into_iter().map(|e| view! { <li data-ref=e.reference>{e.label}</li> }).collect_view()}
                </ul>
            })}
            {move || error.get().map(|e| view! { <p role="alert" class="mt-1 text-xs text-rose-700 dark:text-rose-300">{e}</p> })}
        </li>
    }
    .into_any()
}

#[component]
pub fn SavedSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let saved = Memo::new(move |_| live.replica.with(|r| r.view.board.saved.clone()));
    // Keyed by collection: the Tablero/Tabla view stays mounted (with its layout
    // choice) while the saved list's counts change.
    let collection =
        Memo::new(move |_| saved.with(|s| s.as_ref().map(|s| s.collection_id.clone())));
    view! {
        <section aria-label="Lista guardada" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Lista guardada"</h2>
            {move || saved.get().map(|s| {
                let stages = s
                    .stages
                    .iter()
                    .filter(|c| c.count > 0)
                    .map(|c| format!("{} {}", c.stage, c.count))
                    .collect::<Vec<_>>()
                    .join(" · ");
                view! {
                    <p class="font-medium" data-testid="saved-summary">{s.name}" · "{s.total}" empresas"</p>
                    <p class="text-xs text-slate-600 dark:text-slate-400" data-testid="saved-stages">{stages}</p>
                }
            })}
            {move || match collection.get() {
                None => view! { <Empty text="Al guardar la selección en tu CRM, aquí aparece la colección como tablero o tabla, con sus etapas." /> }.into_any(),
                Some(id) => Suspend::new(saved_collection(id)).into_any(),
            }}
        </section>
    }
    .into_any()
}

#[component]
pub fn PendingSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let pending = move || live.replica.with(|r| r.view.board.pending.clone());
    view! {
        <section aria-label="Decisiones pendientes" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Decisiones pendientes"</h2>
            <Show
                when=move || !pending().is_empty()
                fallback=|| view! { <Empty text="Nada que decidir por ahora. Lo que cueste créditos, envíe correos o cambie el conocimiento del equipo te espera aquí." /> }
            >
                <ul class="space-y-2">
                    {move || pending().into_iter().map(|card| view! { <li data-testid="pending-decision">{Suspend::new(decision_card(card, false))}</li> }).collect_view()}
                </ul>
            </Show>
        </section>
    }
    .into_any()
}

#[component]
fn Empty(text: &'static str) -> impl IntoView {
    view! {
        <p class="rounded-xl border border-dashed border-slate-300 p-4 text-sm text-slate-600 dark:border-slate-700 dark:text-slate-400">{text}</p>
    }
}
