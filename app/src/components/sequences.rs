//! The board's sequences: each draft or campaign with its status, and per recipient
//! how many steps went out, how many are waiting and when the next one goes out in
//! the recipient's local time (CONTRACT §9, §13).

use leptos::prelude::*;
use luna_protocol::board::{RecipientProgress, SequenceCard, SequenceStatus};

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

fn sequence_card(card: SequenceCard) -> impl IntoView {
    view! {
        <li class="rounded-xl border border-slate-200 p-3 dark:border-slate-800" data-testid="sequence-card" data-ref=format!("sequence:{}", card.sequence_id)>
            <div class="flex items-start justify-between gap-2">
                <p class="min-w-0 break-words font-medium">{card.name}</p>
                <span class="shrink-0 rounded-full bg-slate-100 px-2 text-xs dark:bg-slate-800" data-testid="sequence-status">{status_label(card.status)}</span>
            </div>
            <p class="mt-1 text-sm text-slate-600 dark:text-slate-400">
                {format!("{} pasos · {} destinatarios", card.steps, card.recipients)}
            </p>
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
