//! The board's sequences: each draft or campaign with its status, and per recipient
//! how many steps went out, how many are waiting and when the next one goes out in
//! the recipient's local time (CONTRACT §9, §13). A draft's steps are edited here
//! (subject, body, days); editing an authorized sequence voids its authorization, and
//! the card says so.

use leptos::prelude::*;
use luna_protocol::board::{RecipientProgress, SequenceCard, SequenceStatus, StepDraft};

use super::live::Live;

fn status_label(s: SequenceStatus) -> &'static str {
    match s {
        SequenceStatus::Borrador => "Borrador · nada se envía",
        SequenceStatus::Autorizada => "Terminada",
        SequenceStatus::Activa => "Activa",
    }
}

/// The board's sequences, once the session has one. The section is split out of the
/// main wasm: fetched when the first sequence appears.
#[component]
pub fn SequencesSection() -> impl IntoView {
    let live = expect_context::<Live>();
    let cards = Memo::new(move |_| live.replica.with(|r| r.view.board.sequences.clone()));
    view! {
        <Show when=move || !cards.with(Vec::is_empty)>
            {Suspend::new(sequences_section(cards))}
        </Show>
    }
}

#[leptos::lazy]
fn sequences_section(cards: Memo<Vec<SequenceCard>>) -> AnyView {
    view! {
        <section aria-label="Secuencias" class="space-y-2">
            <h2 class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Secuencias"</h2>
            <ul class="space-y-2">{move || cards.get().into_iter().map(sequence_card).collect_view()}</ul>
        </section>
    }
    .into_any()
}

/// One recipient's line: sent and waiting steps, why the rest stopped, or when the
/// next step goes out in their local time.
fn progress_line(p: &RecipientProgress) -> String {
    match (&p.stopped, &p.next_send) {
        (Some(why), _) => format!("{} · {} enviados · detenida: {why}", p.email, p.sent),
        (None, Some(when)) => format!(
            "{} · {} enviados · {} pendientes · próximo envío: {when}",
            p.email, p.sent, p.pending
        ),
        (None, None) => format!(
            "{} · {} enviados · {} pendientes",
            p.email, p.sent, p.pending
        ),
    }
}

/// Reads the days field; anything but a whole number is refused here, in Spanish
/// (the server refuses negative and too-late days with its own typed error).
pub fn parse_days(text: &str) -> Result<i64, String> {
    text.trim()
        .parse::<i64>()
        .map_err(|_| "Los días deben ser un número entero, por ejemplo 0, 3 o 7.".to_owned())
}

/// One step of the sequence, with its editor.
#[component]
fn StepEditor(sequence_id: String, version: i64, index: u32, step: StepDraft) -> impl IntoView {
    let (editing, set_editing) = signal(false);
    let (busy, set_busy) = signal(false);
    let (error, set_error) = signal(None::<String>);
    let (days, set_days) = signal(step.delay_days.to_string());
    let (subject, set_subject) = signal(step.subject.clone());
    let (body, set_body) = signal(step.body.clone());
    let sequence_id = StoredValue::new(sequence_id);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let delay = match parse_days(&days.get_untracked()) {
            Ok(d) => d,
            Err(e) => {
                set_error.set(Some(e));
                return;
            }
        };
        set_busy.set(true);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let r = crate::sequences_api::edit_sequence_step(
                sequence_id.get_value(),
                version,
                index,
                delay,
                subject.get_untracked(),
                body.get_untracked(),
            )
            .await;
            match r {
                Ok(_) => set_editing.set(false),
                Err(e) => set_error.set(Some(e.message())),
            }
            set_busy.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (delay, sequence_id, version, subject, body, set_editing);
    };
    let n = index + 1;
    let label = format!("Paso {n} · día {} · {}", step.delay_days, step.subject);
    view! {
        <li class="rounded-lg border border-slate-100 p-2 dark:border-slate-800" data-testid="sequence-step" data-step=index.to_string()>
            <Show
                when=move || editing.get()
                fallback=move || view! {
                    <div class="flex items-start justify-between gap-2">
                        <p class="min-w-0 break-words text-sm">{label.clone()}</p>
                        <button type="button" class="shrink-0 text-xs text-indigo-700 underline dark:text-indigo-300"
                            on:click=move |_| set_editing.set(true)>{format!("Editar paso {n}")}</button>
                    </div>
                }
            >
                <form class="space-y-1 text-sm" on:submit=save aria-label=format!("Editar paso {n}")>
                    <label class="block">"Días después de autorizar"
                        <input type="number" name="delay_days" class="ml-2 w-20 rounded border border-slate-300 px-1 dark:border-slate-700 dark:bg-slate-900"
                            prop:value=days on:input=move |ev| set_days.set(event_target_value(&ev)) />
                    </label>
                    <label class="block">"Asunto"
                        <input type="text" name="subject" maxlength="200" class="block w-full rounded border border-slate-300 px-1 dark:border-slate-700 dark:bg-slate-900"
                            prop:value=subject on:input=move |ev| set_subject.set(event_target_value(&ev)) />
                    </label>
                    <label class="block">"Cuerpo"
                        <textarea name="body" rows="5" maxlength="5000" class="block w-full rounded border border-slate-300 px-1 dark:border-slate-700 dark:bg-slate-900"
                            prop:value=body on:input=move |ev| set_body.set(event_target_value(&ev))></textarea>
                    </label>
                    <div class="flex gap-2">
                        <button type="submit" class="rounded bg-indigo-600 px-2 py-1 text-xs font-medium text-white disabled:opacity-60" disabled=move || busy.get()>"Guardar paso"</button>
                        <button type="button" class="rounded border border-slate-300 px-2 py-1 text-xs dark:border-slate-700" on:click=move |_| set_editing.set(false)>"Cancelar"</button>
                    </div>
                    {move || error.get().map(|e| view! { <p role="alert" class="text-xs text-rose-700 dark:text-rose-300">{e}</p> })}
                </form>
            </Show>
        </li>
    }
}

fn sequence_card(card: SequenceCard) -> impl IntoView {
    let editors = (!card.drafts.is_empty()).then(|| {
        let (id, version) = (card.sequence_id.clone(), card.version);
        view! {
            <ul class="mt-2 space-y-1" aria-label="Pasos de la secuencia">
                {card.drafts.into_iter().enumerate().map(|(i, step)| view! {
                    <StepEditor sequence_id=id.clone() version index=i as u32 step />
                }).collect_view()}
            </ul>
        }
    });
    view! {
        <li class="rounded-xl border border-slate-200 p-3 dark:border-slate-800" data-testid="sequence-card" data-ref=format!("sequence:{}", card.sequence_id)>
            <div class="flex items-start justify-between gap-2">
                <p class="min-w-0 break-words font-medium">{card.name}</p>
                <span class="shrink-0 rounded-full bg-slate-100 px-2 text-xs dark:bg-slate-800" data-testid="sequence-status">{status_label(card.status)}</span>
            </div>
            <p class="mt-1 text-sm text-slate-600 dark:text-slate-400">
                {format!("{} pasos · {} destinatarios", card.steps, card.recipients)}
            </p>
            {card.notice.map(|n| view! {
                <p role="status" class="mt-1 rounded bg-amber-50 p-1 text-xs text-amber-900 dark:bg-amber-950 dark:text-amber-200" data-testid="sequence-notice">{n}</p>
            })}
            {editors}
            {(!card.progress.is_empty()).then(|| view! {
                <ul class="mt-2 space-y-0.5 text-xs text-slate-600 dark:text-slate-400" aria-label="Avance por destinatario">
                    {card.progress.into_iter().map(|p| view! {
                        <li class="break-all" data-testid="sequence-progress">{progress_line(&p)}</li>
                    }).collect_view()}
                </ul>
            })}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_that_are_not_a_whole_number_are_refused_in_spanish() {
        assert_eq!(parse_days(" 3 "), Ok(3));
        assert_eq!(parse_days("-2"), Ok(-2), "the server refuses it, typed");
        assert!(parse_days("tres").unwrap_err().contains("número entero"));
    }

    #[test]
    fn a_waiting_recipient_shows_when_the_next_step_goes_out() {
        let mut p = RecipientProgress {
            email: "ana@empresa.mx".into(),
            sent: 1,
            pending: 2,
            stopped: None,
            next_send_at: Some(1_796_662_800_000),
            next_send: Some("lun 7 dic, 09:00 (hora del Pacífico)".into()),
        };
        assert_eq!(
            progress_line(&p),
            "ana@empresa.mx · 1 enviados · 2 pendientes · próximo envío: lun 7 dic, 09:00 (hora del Pacífico)"
        );
        p.stopped = Some("se dio de baja".into());
        assert_eq!(
            progress_line(&p),
            "ana@empresa.mx · 1 enviados · detenida: se dio de baja"
        );
    }
}
