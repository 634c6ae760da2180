//! The review card's pager (CONTRACT §9): «Destinatario 3 de 10» with anterior and
//! siguiente; each recipient's email is rendered by the server when the person turns
//! to it, so the card carries only the count however large the audience.

use leptos::prelude::*;
use luna_protocol::decision::RecipientEmail;

use super::live::Live;

/// «Destinatario 3 de 10».
pub fn position_label(position: u32, total: u32) -> String {
    format!("Destinatario {position} de {total}")
}

#[component]
pub fn RecipientPager(decision_id: String, total: u32) -> impl IntoView {
    let live = expect_context::<Live>();
    let (position, set_position) = signal(1u32);
    let decision_id = StoredValue::new(decision_id);
    let email = LocalResource::new(move || {
        let n = position.get();
        let session = live.session_id.get();
        async move {
            let session = session?;
            Some(
                crate::sequences_api::sequence_recipient_email(session, decision_id.get_value(), n)
                    .await
                    .map_err(|e| e.message()),
            )
        }
    });
    let shown = move || email.get().flatten();
    // Comparisons live outside `view!`: a `>` inside an attribute would end the tag.
    let at_first = move || position.get() <= 1;
    let at_last = move || position.get() >= total;
    view! {
        <section class="mt-2 rounded-lg border border-amber-200 bg-white p-2 text-sm dark:border-amber-900 dark:bg-slate-900"
            aria-label="Correo por destinatario" data-testid="recipient-pager">
            <div class="flex items-center justify-between gap-2">
                <button type="button" class="rounded border border-slate-300 px-2 text-xs disabled:opacity-50 dark:border-slate-700"
                    disabled=at_first
                    on:click=move |_| set_position.update(|p| *p = p.saturating_sub(1).max(1))>
                    "Anterior"
                </button>
                <span class="text-xs font-medium" data-testid="recipient-position" aria-live="polite">
                    {move || position_label(position.get(), total)}
                </span>
                <button type="button" class="rounded border border-slate-300 px-2 text-xs disabled:opacity-50 dark:border-slate-700"
                    disabled=at_last
                    on:click=move |_| set_position.update(|p| *p = (*p + 1).min(total))>
                    "Siguiente"
                </button>
            </div>
            {move || match shown() {
                None => view! { <p class="mt-1 text-xs text-slate-500">"Cargando el correo…"</p> }.into_any(),
                Some(Err(e)) => view! { <p role="alert" class="mt-1 text-xs text-rose-700 dark:text-rose-300">{e}</p> }.into_any(),
                Some(Ok(r)) => rendered(r).into_any(),
            }}
        </section>
    }
}

fn rendered(r: RecipientEmail) -> impl IntoView {
    view! {
        <div class="mt-1 space-y-2" data-testid="recipient-email" data-position=r.position.to_string()>
            <p class="break-all text-xs text-slate-600 dark:text-slate-400">
                "Para: "<span data-testid="recipient-address">{r.email}</span>
                {r.skipped.map(|why| view! { <span class="text-rose-700 dark:text-rose-300">{format!(" · se omitirá: {why}")}</span> })}
            </p>
            {r.steps.into_iter().enumerate().map(|(i, st)| view! {
                <article class="rounded border border-slate-200 p-2 dark:border-slate-700">
                    <p class="text-xs text-slate-500">{format!("Paso {}", i + 1)}</p>
                    <p class="font-medium break-words">{st.subject}</p>
                    <p class="whitespace-pre-line break-words text-xs">{st.body}</p>
                </article>
            }).collect_view()}
        </div>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_position_reads_in_spanish() {
        assert_eq!(super::position_label(3, 10), "Destinatario 3 de 10");
    }
}
