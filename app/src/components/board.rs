//! The board: the selection as argued cards, the saved list, and pending decisions —
//! always the reducer's projection of the session log.

use leptos::prelude::*;
use luna_protocol::board::SelectionItem;

use super::decision::DecisionCardView;
use super::live::Live;

#[component]
pub fn SelectionSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let items = move || live.replica.with(|r| r.view.board.selection.clone());
    view! {
        <section aria-label="Selección" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500">
                "Selección" {move || { let n = items().len(); (n > 0).then(|| format!(" · {n}")) }}
            </h2>
            <Show
                when=move || !items().is_empty()
                fallback=|| view! { <Empty text="Cuando Luna arme una selección, aquí verás cada empresa con la razón y la evidencia que la respaldan." /> }
            >
                <ul class="grid gap-2 lg:grid-cols-2">
                    {move || items().into_iter().map(selection_card).collect_view()}
                </ul>
            </Show>
        </section>
    }
}

fn selection_card(item: SelectionItem) -> impl IntoView {
    let priority = item.priority.is_some();
    view! {
        <li class="rounded-xl border border-slate-200 p-3 dark:border-slate-800" data-testid="selection-card" data-ref=item.reference.clone()>
            <div class="flex items-start justify-between gap-2">
                <p class="font-medium">{item.label}</p>
                {priority.then(|| view! { <span class="rounded-full bg-amber-100 px-2 text-xs text-amber-900 dark:bg-amber-900 dark:text-amber-100">"Prioridad"</span> })}
            </div>
            <p class="mt-1 text-sm text-slate-600 dark:text-slate-400">{item.why}</p>
            {(!item.evidence.is_empty()).then(|| view! {
                <ul class="mt-2 space-y-0.5 text-xs text-slate-500" aria-label="Evidencia">
                    {item.evidence.into_iter().map(|e| view! { <li data-ref=e.reference>{e.label}</li> }).collect_view()}
                </ul>
            })}
        </li>
    }
}

#[component]
pub fn SavedSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let saved = move || live.replica.with(|r| r.view.board.saved.clone());
    view! {
        <section aria-label="Lista guardada" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500">"Lista guardada"</h2>
            {move || match saved() {
                None => view! { <Empty text="Al guardar la selección en tu CRM, aquí aparece la colección como tablero o tabla, con sus etapas." /> }.into_any(),
                Some(s) => view! {
                    <div class="rounded-xl border border-slate-200 p-3 dark:border-slate-800">
                        <p class="font-medium">{s.name}" · "{s.total}" empresas"</p>
                        <ul class="mt-2 flex flex-wrap gap-2 text-xs">
                            {s.stages.into_iter().map(|st| view! { <li class="rounded-full bg-slate-100 px-2 py-0.5 dark:bg-slate-800">{st.stage}" · "{st.count}</li> }).collect_view()}
                        </ul>
                    </div>
                }.into_any(),
            }}
        </section>
    }
}

#[component]
pub fn PendingSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let pending = move || live.replica.with(|r| r.view.board.pending.clone());
    view! {
        <section aria-label="Decisiones pendientes" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500">"Decisiones pendientes"</h2>
            <Show
                when=move || !pending().is_empty()
                fallback=|| view! { <Empty text="Nada que decidir por ahora. Lo que cueste créditos, envíe correos o cambie el conocimiento del equipo te espera aquí." /> }
            >
                <ul class="space-y-2">
                    {move || pending().into_iter().map(|card| view! { <li><DecisionCardView card /></li> }).collect_view()}
                </ul>
            </Show>
        </section>
    }
}

#[component]
fn Empty(text: &'static str) -> impl IntoView {
    view! {
        <p class="rounded-xl border border-dashed border-slate-300 p-4 text-sm text-slate-600 dark:border-slate-700 dark:text-slate-400">{text}</p>
    }
}
