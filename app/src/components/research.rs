//! The board's research runs (CONTRACT §10): each run's real phases with what each found,
//! its status, the result with anchored links and "Cancelar" while it runs — the
//! reducer's projection of `run.progress`.

use leptos::prelude::*;
use luna_protocol::board::{PhaseStatus, RunCard, RunPhase, RunStatus};
use luna_protocol::chat::{segments, Segment};
use luna_protocol::event::Anchor;

use super::drawer::Drawer;
use super::live::Live;

fn phase_mark(s: PhaseStatus) -> &'static str {
    match s {
        PhaseStatus::Pending => "○",
        PhaseStatus::Running => "…",
        PhaseStatus::Done => "✓",
        PhaseStatus::Skipped => "–",
    }
}

fn phase_label(s: PhaseStatus) -> &'static str {
    match s {
        PhaseStatus::Pending => "pendiente",
        PhaseStatus::Running => "en curso",
        PhaseStatus::Done => "lista",
        PhaseStatus::Skipped => "no se hizo",
    }
}

/// Text with its anchors: a company opens the evidence drawer, other refs are marked.
fn anchored(text: String, anchors: Vec<Anchor>) -> AnyView {
    let drawer = expect_context::<Drawer>();
    let parts: Vec<AnyView> = segments(&text, &anchors)
        .into_iter()
        .map(|s| match s {
            Segment::Text(t) => t.to_owned().into_any(),
            Segment::Link { label, reference } if reference.starts_with("company:") => {
                let company = reference.to_owned();
                view! {
                    <button
                        type="button"
                        class="font-medium text-indigo-700 underline decoration-dotted hover:decoration-solid focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-indigo-300"
                        data-ref=reference.to_owned()
                        aria-haspopup="dialog"
                        title="Ver el expediente"
                        on:click=move |_| drawer.show(company.clone())
                    >
                        {label.to_owned()}
                    </button>
                }
                .into_any()
            }
            Segment::Link { label, reference } => view! {
                <span class="font-medium text-indigo-700 underline decoration-dotted dark:text-indigo-300" data-ref=reference.to_owned()>
                    {label.to_owned()}
                </span>
            }
            .into_any(),
        })
        .collect();
    parts.into_any()
}

/// The board's research runs, once the session has one. The section is split out of
/// the main wasm: fetched when the first run appears.
#[component]
pub fn RunsSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let runs = Memo::new(move |_| live.replica.with(|r| r.view.board.runs.clone()));
    view! {
        <Show when=move || !runs.with(Vec::is_empty)>
            {Suspend::new(runs_section(runs))}
        </Show>
    }
}

#[leptos::lazy]
fn runs_section(runs: Memo<Vec<RunCard>>) -> AnyView {
    view! {
        <section aria-label="Investigaciones" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500">"Investigaciones"</h2>
            <ul class="space-y-2">
                {move || runs.get().into_iter().map(|card| view! { <RunCardView card /> }).collect_view()}
            </ul>
        </section>
    }
    .into_any()
}

fn phase_view(phase: RunPhase) -> impl IntoView {
    view! {
        <li class="text-sm" data-testid="run-phase" data-phase=phase.key.clone() data-status=phase_label(phase.status)>
            <span aria-hidden="true" class="mr-1 inline-block w-4 text-center">{phase_mark(phase.status)}</span>
            <span class="font-medium">{phase.label}</span>
            <span class="sr-only">{format!(" ({})", phase_label(phase.status))}</span>
            {(!phase.found.is_empty()).then(|| view! {
                <p class="ml-5 text-slate-600 dark:text-slate-400" data-testid="run-phase-found">{anchored(phase.found, phase.anchors)}</p>
            })}
        </li>
    }
}

/// One run: title, status, phases with what each found, the result and "Cancelar".
#[component]
fn RunCardView(card: RunCard) -> impl IntoView {
    let (busy, set_busy) = signal(false);
    let (error, set_error) = signal(None::<String>);
    let run_id = StoredValue::new(card.run_id.clone());
    let running = card.status == RunStatus::Running;
    let cancel = move |_| {
        set_busy.set(true);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Err(e) = crate::board_api::cancel_research_run(run_id.get_value()).await {
                set_error.set(Some(e.message()));
            }
            set_busy.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = run_id;
    };
    view! {
        <li
            id=format!("run-{}", card.run_id)
            class="rounded-xl border border-slate-200 p-3 dark:border-slate-800"
            data-testid="run-card"
            data-ref=format!("run:{}", card.run_id)
        >
            <div class="flex items-start justify-between gap-2">
                <p class="font-medium">{card.title}</p>
                <span class="shrink-0 rounded-full bg-slate-100 px-2 text-xs dark:bg-slate-800" data-testid="run-status">{card.status.label()}</span>
            </div>
            <p class="mt-1 text-xs text-slate-500" aria-live="polite">{card.phase}</p>
            <ol class="mt-2 space-y-1" aria-label="Fases">
                {card.phases.into_iter().map(phase_view).collect_view()}
            </ol>
            {card.summary.map(|s| view! {
                <p class="mt-2 rounded-lg bg-indigo-50 p-2 text-sm dark:bg-indigo-950" data-testid="run-result">{anchored(s, card.anchors)}</p>
            })}
            {running.then(|| view! {
                <button
                    type="button"
                    data-testid="run-cancel"
                    class="mt-2 rounded-md px-3 py-1 text-xs text-slate-700 ring-1 ring-slate-300 hover:bg-rose-50 hover:text-rose-800 focus-visible:outline-2 focus-visible:outline-indigo-500 disabled:opacity-60 dark:text-slate-300 dark:ring-slate-700 dark:hover:bg-rose-950"
                    disabled=busy
                    on:click=cancel
                >
                    {move || if busy.get() { "Cancelando…" } else { "Cancelar" }}
                </button>
            })}
            {move || error.get().map(|e| view! { <p role="alert" class="mt-1 text-xs text-rose-700 dark:text-rose-300">{e}</p> })}
        </li>
    }
}
