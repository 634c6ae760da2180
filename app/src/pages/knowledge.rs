//! The owner's knowledge-review page (CONTRACT §11, §13): pending notes and suggested
//! edits with their diff, each with "Fusionar" and "Rechazar", and the Knowledge topics
//! updated most recently. Owners and admins only: anyone else gets a 403 page. After a
//! resolution the queue reloads in place (no full page load) and a message confirms it.

use leptos::prelude::*;
use leptos_meta::Title;
use luna_protocol::knowledge::{ReviewItem, ReviewKind, TopicSummary};

use crate::components::{Forbidden, TopBar};
use crate::error::AppError;
use crate::knowledge_api::{knowledge_review, KnowledgeMerge, KnowledgeReject};

type Flash = Option<Result<String, String>>;

#[component]
pub fn KnowledgeReviewPage() -> impl IntoView {
    let merge = ServerAction::<KnowledgeMerge>::new();
    let reject = ServerAction::<KnowledgeReject>::new();
    let data = crate::codec::resource(
        move || (merge.version().get(), reject.version().get()),
        |_| knowledge_review(),
    );
    // The last resolution's confirmation (or error), whichever action ran last.
    let flash = RwSignal::<Flash>::new(None);
    let show = move |r: Option<Result<luna_protocol::knowledge::Resolution, AppError>>| {
        if let Some(r) = r {
            flash.set(Some(r.map(|r| r.message()).map_err(|e| e.message())));
        }
    };
    Effect::new(move |_| show(merge.value().get()));
    Effect::new(move |_| show(reject.value().get()));
    let busy = Signal::derive(move || merge.pending().get() || reject.pending().get());

    view! {
        <Title text="Conocimiento · Luna" />
        <div class="flex min-h-screen flex-col">
            <TopBar />
            <main class="mx-auto w-full max-w-3xl space-y-6 p-4 md:p-8">
                <h1 class="text-2xl font-semibold">"Revisión de conocimiento"</h1>
                {move || flash.get().map(|f| match f {
                    Ok(m) => view! {
                        <p role="status" class="rounded-lg bg-emerald-50 p-3 text-sm text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100">{m}</p>
                    }.into_any(),
                    Err(m) => view! {
                        <p role="alert" class="rounded-lg bg-rose-50 p-3 text-sm text-rose-900 dark:bg-rose-950 dark:text-rose-100">{m}</p>
                    }.into_any(),
                })}
                <Transition fallback=|| view! { <p class="text-slate-500 dark:text-slate-400">"Cargando…"</p> }>
                    {move || Suspend::new(async move {
                        match data.await {
                            Err(e) => view! { <Forbidden message=e.message() /> }.into_any(),
                            Ok(board) => view! {
                                <section aria-labelledby="pending-title" class="space-y-3">
                                    <h2 id="pending-title" class="text-lg font-medium">"Pendientes de revisión"</h2>
                                    {if board.pending.is_empty() {
                                        view! {
                                            <p class="rounded-xl border border-dashed border-slate-300 p-6 text-slate-600 dark:border-slate-700 dark:text-slate-400">
                                                "No hay notas ni ediciones sugeridas en revisión. Cuando Luna deje una nota o sugiera una edición, aparecerá aquí con su diferencia para que la fusiones o la rechaces."
                                            </p>
                                        }.into_any()
                                    } else {
                                        view! {
                                            <ul class="space-y-4">
                                                {board.pending.into_iter().map(|item| view! {
                                                    <PendingItem item merge reject busy />
                                                }).collect_view()}
                                            </ul>
                                        }.into_any()
                                    }}
                                </section>
                                <RecentTopics topics=board.recent />
                            }.into_any(),
                        }
                    })}
                </Transition>
            </main>
        </div>
    }
}

/// One note or suggested edit with its content or diff and the two buttons.
#[component]
fn PendingItem(
    item: ReviewItem,
    merge: ServerAction<KnowledgeMerge>,
    reject: ServerAction<KnowledgeReject>,
    busy: Signal<bool>,
) -> impl IntoView {
    let heading_id = format!("review-{}", item.id);
    let labelled_by = heading_id.clone();
    let (merge_id, reject_id) = (item.id.clone(), item.id.clone());
    let merge_label = format!("Fusionar «{}»", item.title);
    let reject_label = format!("Rechazar «{}»", item.title);
    let content = match (item.kind, item.diff, item.body) {
        (ReviewKind::Edit, Some(diff), _) => view! { <Diff diff /> }.into_any(),
        (ReviewKind::Edit, None, _) => view! {
            <p class="text-sm italic text-slate-600 dark:text-slate-400">
                "Es una pregunta para quien revisa: no propone texto nuevo."
            </p>
        }
        .into_any(),
        (ReviewKind::Note, _, body) => view! {
            <div aria-label="Contenido de la nota" class="whitespace-pre-wrap rounded-lg border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-950 dark:border-emerald-900 dark:bg-emerald-950 dark:text-emerald-100">
                {body.unwrap_or_default()}
            </div>
        }
        .into_any(),
    };
    view! {
        <li aria-labelledby=labelled_by data-testid="review-item"
            class="space-y-3 rounded-xl border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900">
            <div class="flex flex-wrap items-center gap-2 text-xs">
                <span class="rounded-full bg-indigo-100 px-2 py-0.5 font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-200">
                    {item.kind.label()}
                </span>
                <span class="text-slate-500 dark:text-slate-400">"Área: " {item.area}</span>
            </div>
            <h3 id=heading_id class="font-medium">{item.title}</h3>
            <p class="text-sm text-slate-700 dark:text-slate-300">{item.summary}</p>
            <p class="text-xs text-slate-500 dark:text-slate-400">"Propuesta por " {item.proposed_by} " · " {item.proposed_ago}</p>
            {content}
            <div class="flex gap-2">
                <ActionForm action=merge>
                    <input type="hidden" name="id" value=merge_id.clone() />
                    <button type="submit" aria-label=merge_label disabled=move || busy.get()
                        class="rounded-lg bg-indigo-600 px-4 py-2 text-sm text-white hover:bg-indigo-700 disabled:opacity-50">
                        "Fusionar"
                    </button>
                </ActionForm>
                <ActionForm action=reject>
                    <input type="hidden" name="id" value=reject_id.clone() />
                    <button type="submit" aria-label=reject_label disabled=move || busy.get()
                        class="rounded-lg border border-slate-300 px-4 py-2 text-sm text-rose-700 hover:bg-rose-50 disabled:opacity-50 dark:border-slate-700 dark:hover:bg-rose-950 dark:text-rose-300">
                        "Rechazar"
                    </button>
                </ActionForm>
            </div>
        </li>
    }
}

/// A unified diff, one line per row: additions green, deletions red.
#[component]
fn Diff(diff: String) -> impl IntoView {
    let lines: Vec<(String, &'static str)> = diff
        .lines()
        .filter(|l| !l.starts_with("--- ") && !l.starts_with("+++ "))
        .map(|l| {
            let class = if l.starts_with("@@") {
                "block text-slate-600 dark:text-slate-400"
            } else if l.starts_with('+') {
                "block bg-emerald-50 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100"
            } else if l.starts_with('-') {
                "block bg-rose-50 text-rose-900 dark:bg-rose-950 dark:text-rose-100"
            } else {
                "block text-slate-600 dark:text-slate-400"
            };
            (l.to_owned(), class)
        })
        .collect();
    view! {
        <pre aria-label="Diferencia propuesta"
            class="relative overflow-x-auto whitespace-pre-wrap rounded-lg border border-slate-200 p-3 font-mono text-xs dark:border-slate-800">
            {lines.into_iter().map(|(l, class)| view! { <span class=class>{l}</span> }).collect_view()}
        </pre>
    }
}

/// The Knowledge topics updated most recently (a merge shows up here first).
#[component]
fn RecentTopics(topics: Vec<TopicSummary>) -> impl IntoView {
    view! {
        <section aria-labelledby="recent-title" class="space-y-2">
            <h2 id="recent-title" class="text-lg font-medium">"Knowledge actualizado recientemente"</h2>
            {if topics.is_empty() {
                view! { <p class="text-sm text-slate-500 dark:text-slate-400">"Todavía no hay temas en Knowledge."</p> }.into_any()
            } else {
                view! {
                    <ul aria-label="Temas de Knowledge" class="divide-y divide-slate-200 rounded-xl border border-slate-200 dark:divide-slate-800 dark:border-slate-800">
                        {topics.into_iter().map(|t| view! {
                            <li class="flex items-center justify-between gap-4 px-4 py-2">
                                <span>{t.title}" "<span class="text-sm text-slate-500 dark:text-slate-400">{t.area}</span></span>
                                <span class="text-xs text-slate-500 dark:text-slate-400">{t.badge}</span>
                            </li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
    }
}
