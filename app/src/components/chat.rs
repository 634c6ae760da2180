//! The chat pane: the person's messages, Luna's anchored narration, one line per tool
//! step, decision references, refusals, and the composer (usable during a turn: a
//! message then steers it).

use leptos::prelude::*;
use luna_protocol::chat::{segments, ChatMessage, Segment, ToolStatus};

use super::decision::{outcome_label, DecisionCardView};
use super::live::Live;
use super::mode::ModeSelector;

#[component]
pub fn ChatPane() -> impl IntoView {
    let live = expect_context::<Live>();
    let messages = move || live.replica.with(|r| r.view.chat.messages.clone());
    let running = move || live.replica.with(|r| r.view.active_turn.is_some());
    view! {
        <div class="flex-1 overflow-y-auto p-4" aria-live="polite" data-testid="chat-log">
            <Show
                when=move || !messages().is_empty()
                fallback=|| view! { <EmptyChat /> }
            >
                <ol class="mx-auto flex max-w-2xl flex-col gap-3">
                    {move || messages().into_iter().map(|m| view! { <li>{message_view(m)}</li> }).collect_view()}
                </ol>
            </Show>
            <Show when=running>
                <p class="mx-auto mt-3 max-w-2xl text-sm text-slate-500" role="status">"Luna está trabajando…"</p>
            </Show>
        </div>
        <Composer />
    }
}

#[component]
fn EmptyChat() -> impl IntoView {
    view! {
        <div class="mx-auto max-w-xl rounded-xl border border-dashed border-slate-300 p-6 text-sm text-slate-600 dark:border-slate-700 dark:text-slate-400">
            <p class="font-medium text-slate-800 dark:text-slate-200">"Pídele a Luna lo que buscas."</p>
            <p class="mt-2">
                "Por ejemplo: «Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos y consígueme el correo de los 10 mejores.»"
            </p>
            <p class="mt-2">"Aquí verás la conversación, cada paso que Luna da y las decisiones que te toca tomar."</p>
        </div>
    }
}

fn message_view(message: ChatMessage) -> AnyView {
    match message {
        ChatMessage::Person { text, steering, .. } => view! {
            <div class="ml-auto max-w-[85%] rounded-2xl rounded-br-sm bg-indigo-600 px-4 py-2 text-white" data-testid="person-message">
                {steering.then(|| view! { <span class="mr-1 text-xs opacity-80">"(ajuste)"</span> })}
                {text}
            </div>
        }
        .into_any(),
        ChatMessage::Luna { text, anchors, .. } => {
            let parts: Vec<AnyView> = segments(&text, &anchors)
                .into_iter()
                .map(|s| match s {
                    Segment::Text(t) => t.to_owned().into_any(),
                    Segment::Link { label, reference } => view! {
                        <span class="font-medium text-indigo-700 underline decoration-dotted dark:text-indigo-300" data-ref=reference.to_owned()>
                            {label.to_owned()}
                        </span>
                    }
                    .into_any(),
                })
                .collect();
            view! {
                <div class="max-w-[85%] rounded-2xl rounded-bl-sm bg-white px-4 py-2 shadow-sm ring-1 ring-slate-200 dark:bg-slate-900 dark:ring-slate-800" data-testid="luna-message">
                    {parts}
                </div>
            }
            .into_any()
        }
        ChatMessage::Tool(line) => {
            let (icon, tone) = match line.status {
                ToolStatus::Running => ("…", "text-slate-500"),
                ToolStatus::Done => ("✓", "text-emerald-700 dark:text-emerald-400"),
                ToolStatus::Failed => ("!", "text-rose-700 dark:text-rose-400"),
            };
            view! {
                <div class=format!("flex items-center gap-2 text-sm {tone}") data-testid="tool-line">
                    <span aria-hidden="true">{icon}</span>
                    <span>{line.label}</span>
                    {line.summary.map(|s| view! { <span class="text-slate-500">"· "{s}</span> })}
                </div>
            }
            .into_any()
        }
        ChatMessage::Decision {
            decision_id,
            title,
            outcome,
            result,
            ..
        } => {
            let live = expect_context::<Live>();
            let pending = live.replica.with_untracked(|r| {
                r.view
                    .board
                    .pending
                    .iter()
                    .find(|c| c.id == decision_id)
                    .cloned()
            });
            match (outcome, pending) {
                (None, Some(card)) => view! { <DecisionCardView card inline=true /> }.into_any(),
                (outcome, _) => view! {
                    <div class="rounded-xl border border-slate-200 px-4 py-2 text-sm dark:border-slate-800" data-testid="decision-ref">
                        <span class="font-medium">{title}</span>
                        {outcome.map(|o| view! { <span class="text-slate-500" data-testid="decision-outcome">" · "{outcome_label(o)}</span> })}
                        {result.map(|r| view! { <p class="mt-1 text-slate-700 dark:text-slate-300" data-testid="decision-result">{r.summary}</p> })}
                    </div>
                }
                .into_any(),
            }
        }
        ChatMessage::Refused { message, .. } => view! {
            <div role="alert" class="rounded-xl bg-rose-50 px-4 py-2 text-sm text-rose-800 dark:bg-rose-950 dark:text-rose-200">{message}</div>
        }
        .into_any(),
    }
}

#[component]
fn Composer() -> impl IntoView {
    let live = expect_context::<Live>();
    let (text, set_text) = signal(String::new());
    let (error, set_error) = signal(None::<String>);
    let (sending, set_sending) = signal(false);
    let ready = move || live.session_id.with(Option::is_some);

    let send = move || {
        let message = text.get_untracked();
        let Some(session_id) = live.session_id.get_untracked() else {
            return;
        };
        if message.trim().is_empty() || sending.get_untracked() {
            return;
        }
        set_sending.set(true);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let key = window()
                .crypto()
                .map(|c| c.random_uuid())
                .unwrap_or_else(|_| format!("{}", js_sys_now()));
            match crate::session_api::send_message(session_id, message, key).await {
                Ok(_) => set_text.set(String::new()),
                Err(e) => set_error.set(Some(e.message())),
            }
            set_sending.set(false);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (session_id, message);
    };

    view! {
        <form
            class="border-t border-slate-200 p-3 dark:border-slate-800"
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }
        >
            <ModeSelector />
            <label for="composer" class="sr-only">"Mensaje para Luna"</label>
            <div class="flex items-end gap-2">
                <textarea
                    id="composer"
                    rows="2"
                    placeholder="Escribe qué proveedores buscas…"
                    class="w-full resize-none rounded-lg border border-slate-300 bg-white px-3 py-2 dark:border-slate-700 dark:bg-slate-950"
                    prop:value=text
                    on:input=move |ev| set_text.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                <button
                    type="submit"
                    class="rounded-lg bg-indigo-600 px-4 py-2 font-medium text-white hover:bg-indigo-700 disabled:opacity-60"
                    disabled=move || !ready() || sending.get()
                >
                    "Enviar"
                </button>
            </div>
            <p class="mt-1 min-h-4 text-xs text-slate-500" aria-live="polite">
                {move || match (error.get(), live.online.get(), live.error.get()) {
                    (Some(e), _, _) | (None, _, Some(e)) => e,
                    (None, false, None) if ready() => "Reconectando…".to_owned(),
                    _ => String::new(),
                }}
            </p>
        </form>
    }
}

#[cfg(feature = "hydrate")]
fn js_sys_now() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or_default()
}
