//! The chat pane: the person's messages, Luna's anchored narration (facts about a
//! company open the evidence drawer), one line per tool step ("deshacer" on the ones
//! that wrote), decision references, refusals with what to do, and the composer
//! (usable during a turn: a message then steers it).

use std::collections::HashMap;

use leptos::prelude::*;
use luna_protocol::chat::{segments, ChatMessage, Segment, ToolLine, ToolStatus};
use luna_protocol::event::RefusalCode;

use super::decision::{decision_card, outcome_label};
use super::drawer::Drawer;
use super::live::Live;
use super::mode::ModeSelector;

/// What "deshacer" did for each undo token, kept outside the message list (which
/// re-renders as events arrive) so the receipt stays visible.
#[derive(Clone, Copy)]
struct UndoLog(RwSignal<HashMap<String, UndoState>>);

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))] // results arrive in the browser only
enum UndoState {
    Running,
    Done(String),
    Failed(String),
}

#[component]
pub fn ChatPane() -> impl IntoView {
    let live = expect_context::<Live>();
    let messages = move || live.replica.with(|r| r.view.chat.messages.clone());
    let running = move || live.replica.with(|r| r.view.active_turn.is_some());
    provide_context(UndoLog(RwSignal::new(HashMap::new())));
    let log = NodeRef::<leptos::html::Div>::new();
    let follow = Follow::new();
    provide_context(follow);
    #[cfg(feature = "hydrate")]
    follow.keep_at_newest(log);
    view! {
        <div
            class="flex-1 overflow-y-auto p-4"
            aria-live="polite"
            data-testid="chat-log"
            node_ref=log
            on:scroll=move |_| follow.scrolled(log)
        >
            <div>
                <Show
                    when=move || !messages().is_empty()
                    fallback=|| view! { <EmptyChat /> }
                >
                    <ol class="mx-auto flex max-w-2xl flex-col gap-3">
                        {move || messages().into_iter().map(|m| view! { <li>{message_view(m)}</li> }).collect_view()}
                    </ol>
                </Show>
                <Show when=running>
                    <Narrating />
                    <p class="mx-auto mt-3 max-w-2xl text-sm text-slate-500 dark:text-slate-400" role="status">"Luna está trabajando…"</p>
                    <Thinking />
                </Show>
            </div>
        </div>
        <Composer />
    }
    .into_any()
}

/// Whether the chat log follows the newest message: it opens on it and keeps up with
/// what arrives, unless the person scrolled up to read; back at the bottom, or after
/// sending, it follows again.
#[derive(Clone, Copy)]
struct Follow {
    on: StoredValue<bool>,
    /// The log's scroll height when the content last changed size. A scroll event is
    /// judged against it: the browser may deliver the event after new content already
    /// grew the log, and a person who had reached the bottom must stay followed.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))] // scroll events: browser only
    height: StoredValue<i32>,
}

/// How close to the bottom still counts as "at the newest message".
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const NEAR_BOTTOM_PX: i32 = 48;

impl Follow {
    fn new() -> Self {
        Follow {
            on: StoredValue::new(true),
            height: StoredValue::new(0),
        }
    }

    /// After a scroll (the person's, or ours to the bottom): follow only at the bottom.
    fn scrolled(self, log: NodeRef<leptos::html::Div>) {
        #[cfg(feature = "hydrate")]
        if let Some(el) = log.get_untracked() {
            let below = self.height.get_value() - el.scroll_top() - el.client_height();
            self.on.set_value(below <= NEAR_BOTTOM_PX);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (self, log);
    }

    /// Scrolls the log to its end whenever it or its content changes size while
    /// following: messages arriving, cards whose code loads later, the phone's Chat tab
    /// becoming visible. A `ResizeObserver` sees all of these; nothing polls.
    #[cfg(feature = "hydrate")]
    fn keep_at_newest(self, log: NodeRef<leptos::html::Div>) {
        use wasm_bindgen::closure::Closure;
        use wasm_bindgen::JsCast;
        log.on_load(move |el| {
            // Holds only reactive ids: once the pane is gone it does nothing.
            let to_newest = Closure::<dyn FnMut()>::new(move || {
                let Some(Some(el)) = log.try_get_untracked() else {
                    return;
                };
                if self.on.try_get_value() == Some(true) {
                    el.set_scroll_top(el.scroll_height());
                }
                let _ = self.height.try_set_value(el.scroll_height());
            });
            let Ok(observer) = web_sys::ResizeObserver::new(to_newest.as_ref().unchecked_ref())
            else {
                return;
            };
            observer.observe(&el);
            if let Some(content) = el.first_element_child() {
                observer.observe(&content);
            }
            // The observer may call back until it is disconnected on cleanup, so the
            // callback (a few bytes) lives as long as the page.
            to_newest.forget();
            let observer = StoredValue::new_local(observer);
            on_cleanup(move || {
                let _ = observer.try_with_value(|o| o.disconnect());
            });
        });
    }
}

/// The running turn's live reasoning, when the model streams it (never stored).
#[component]
fn Thinking() -> impl IntoView {
    let live = expect_context::<Live>();
    let text = move || {
        let active = live.replica.with(|r| r.view.active_turn.clone());
        live.thinking
            .get()
            .filter(|(turn, _)| Some(turn) == active.as_ref())
            .map(|(_, text)| text)
    };
    view! {
        {move || text().map(|t| view! {
            <p class="mx-auto mt-1 max-w-2xl whitespace-pre-wrap text-xs italic text-slate-600 dark:text-slate-400" data-testid="thinking">
                {t}
            </p>
        })}
    }
}

/// The running turn's narration while the model writes it: shown until the judged
/// narration of the same turn is in the chat (which replaces it) or the turn ends.
#[component]
fn Narrating() -> impl IntoView {
    let live = expect_context::<Live>();
    let draft = move || {
        let draft = live.narrating.get()?;
        let judged = live.replica.with(|r| {
            r.view.active_turn.as_deref() != Some(draft.turn_id.as_str())
                || r.view.chat.messages.iter().any(
                    |m| matches!(m, ChatMessage::Luna { turn_id, .. } if *turn_id == draft.turn_id),
                )
        });
        (!judged && !draft.text.is_empty()).then_some(draft)
    };
    view! {
        {move || draft().map(|d| view! {
            <div class="mx-auto mt-3 flex max-w-2xl">
                {luna_message(d.turn_id, d.text, d.anchors, "narration-live")}
            </div>
        })}
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

/// Luna's narration: its text with the anchored names as links (a company's open the
/// evidence drawer). `testid` tells a judged message from the one being written.
fn luna_message(
    turn_id: String,
    text: String,
    anchors: Vec<luna_protocol::event::Anchor>,
    testid: &'static str,
) -> AnyView {
    let live = expect_context::<Live>();
    let drawer = expect_context::<Drawer>();
    let parts: Vec<AnyView> = segments(&text, &anchors)
            .into_iter()
            .map(|s| match s {
                Segment::Text(t) => t.to_owned().into_any(),
                Segment::Link { label, reference } => {
                    let company = live.replica.with_untracked(|r| {
                        luna_protocol::evidence::company_of(reference, Some(turn_id.as_str()), &r.view.chat)
                    });
                    match company {
                        Some(company) => view! {
                            <button
                                type="button"
                                class="font-medium text-indigo-700 underline decoration-dotted hover:decoration-solid focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-indigo-300"
                                data-ref=reference.to_owned()
                                data-open-ref=company.clone()
                                aria-haspopup="dialog"
                                title="Ver el expediente"
                                on:click=move |_| drawer.show(company.clone())
                            >
                                {label.to_owned()}
                            </button>
                        }
                        .into_any(),
                        None => view! {
                            <span class="font-medium text-indigo-700 underline decoration-dotted dark:text-indigo-300" data-ref=reference.to_owned()>
                                {label.to_owned()}
                            </span>
                        }
                        .into_any(),
                    }
                }
            })
            .collect();
    view! {
            <div class="max-w-[85%] rounded-2xl rounded-bl-sm bg-white px-4 py-2 shadow-sm ring-1 ring-slate-200 dark:bg-slate-900 dark:ring-slate-800" data-testid=testid>
                {parts}
            </div>
        }
        .into_any()
}

fn message_view(message: ChatMessage) -> AnyView {
    match message {
        ChatMessage::Person {
            text,
            steering,
            steering_outcome,
            ..
        } => view! {
            <div class="ml-auto max-w-[85%] rounded-2xl rounded-br-sm bg-indigo-600 px-4 py-2 text-white" data-testid="person-message">
                {steering.then(|| view! { <span class="mr-1 text-xs opacity-80">"(ajuste)"</span> })}
                {text}
                {steering_outcome.map(|o| view! {
                    <span class="mt-1 block text-xs opacity-80" data-testid="steering-outcome">{o.note()}</span>
                })}
            </div>
        }
        .into_any(),
        ChatMessage::Luna {
            turn_id,
            text,
            anchors,
        } => luna_message(turn_id, text, anchors, "luna-message"),
        ChatMessage::Tool(line) => tool_line(line).into_any(),
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
                (None, Some(card)) => Suspend::new(decision_card(card, true)).into_any(),
                (outcome, _) => view! {
                    <div class="rounded-xl border border-slate-200 px-4 py-2 text-sm dark:border-slate-800" data-testid="decision-ref">
                        <span class="font-medium">{title}</span>
                        {outcome.map(|o| view! { <span class="text-slate-500 dark:text-slate-400" data-testid="decision-outcome">" · "{outcome_label(o)}</span> })}
                        {result.map(|r| view! { <p class="mt-1 text-slate-700 dark:text-slate-300" data-testid="decision-result">{r.summary}</p> })}
                    </div>
                }
                .into_any(),
            }
        }
        ChatMessage::Refused { code, message, .. } => refusal(code, message).into_any(),
        ChatMessage::Run {
            run_id,
            title,
            status,
        } => view! {
            <div class="rounded-xl border border-slate-200 px-4 py-2 text-sm dark:border-slate-800" data-testid="run-link">
                <a
                    href=format!("#run-{run_id}")
                    class="font-medium text-indigo-700 underline decoration-dotted hover:decoration-solid focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-indigo-300"
                    data-ref=format!("run:{run_id}")
                >
                    {title}
                </a>
                <span class="text-slate-500">" · "{status.label()}" · en el tablero"</span>
            </div>
        }
        .into_any(),
    }
}

/// A refusal in plain Spanish: what happened, and what the person can do about it.
fn refusal(code: RefusalCode, message: String) -> impl IntoView {
    view! {
        <div
            role="alert"
            data-testid="refusal"
            data-code=code.http_status()
            class="rounded-xl border border-rose-200 bg-rose-50 px-4 py-3 text-sm text-rose-900 dark:border-rose-900 dark:bg-rose-950 dark:text-rose-100"
        >
            <p class="font-semibold">{code.title()}</p>
            <p class="mt-1">{message}</p>
            <p class="mt-1 text-rose-800 dark:text-rose-200" data-testid="refusal-next">{code.what_to_do()}</p>
        </div>
    }
}

/// One tool step; a finished write that left an undo token gets "deshacer".
fn tool_line(line: ToolLine) -> impl IntoView {
    let (icon, tone) = match line.status {
        ToolStatus::Running => ("…", "text-slate-500 dark:text-slate-400"),
        ToolStatus::Done => ("✓", "text-emerald-700 dark:text-emerald-400"),
        ToolStatus::Failed => ("!", "text-rose-700 dark:text-rose-400"),
    };
    let undo = line
        .undo_token
        .clone()
        .filter(|_| line.status == ToolStatus::Done && line.undone.is_none());
    view! {
        <div class=format!("flex flex-wrap items-center gap-2 text-sm {tone}") data-testid="tool-line">
            <span aria-hidden="true">{icon}</span>
            <span>{line.label}</span>
            {line.summary.map(|s| view! { <span class="text-slate-500 dark:text-slate-400">"· "{s}</span> })}
            {undo.map(|token| Suspend::new(undo_button(token)))}
            // Undone (in this tab or another, now or before a reload): the log says so.
            {line.undone.map(|summary| view! {
                <span class="text-slate-600 dark:text-slate-300" role="status" data-testid="undo-result">{summary}</span>
            })}
        </div>
    }
}

/// "deshacer" and its receipt. Split out of the main wasm: fetched when the chat first
/// shows a write that can be undone.
#[leptos::lazy]
fn undo_button(token: String) -> AnyView {
    view! { <UndoButton token /> }.into_any()
}

#[component]
fn UndoButton(token: String) -> impl IntoView {
    let log = expect_context::<UndoLog>();
    let session_id = expect_context::<Live>().session_id;
    let token = StoredValue::new(token);
    let state = move || token.with_value(|t| log.0.with(|m| m.get(t).cloned()));
    let run = move |_| {
        if matches!(state(), Some(UndoState::Running | UndoState::Done(_))) {
            return;
        }
        let t = token.get_value();
        log.0.update(|m| {
            m.insert(t.clone(), UndoState::Running);
        });
        #[cfg(feature = "hydrate")]
        let session_id = session_id.get_untracked();
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let next = match crate::board_api::undo_write(session_id, t.clone()).await {
                Ok(receipt) => UndoState::Done(receipt.summary),
                Err(e) => UndoState::Failed(e.message()),
            };
            log.0.update(|m| {
                m.insert(t, next);
            });
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = session_id;
    };
    view! {
        {move || match state() {
            Some(UndoState::Done(summary)) => view! {
                <span class="text-slate-600 dark:text-slate-300" role="status" data-testid="undo-result">{summary}</span>
            }.into_any(),
            other => {
                let running = other == Some(UndoState::Running);
                let failed = match other {
                    Some(UndoState::Failed(e)) => Some(e),
                    _ => None,
                };
                view! {
                    <button
                        type="button"
                        data-testid="undo"
                        class="rounded-md px-2 text-xs text-slate-700 underline hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-500 disabled:opacity-60 dark:text-slate-300 dark:hover:bg-slate-800"
                        disabled=running
                        on:click=run
                    >
                        {if running { "deshaciendo…" } else { "deshacer" }}
                    </button>
                    {failed.map(|e| view! { <span role="alert" class="text-xs text-rose-700 dark:text-rose-300" data-testid="undo-error">{e}</span> })}
                }.into_any()
            }
        }}
    }
}

#[component]
fn Composer() -> impl IntoView {
    let live = expect_context::<Live>();
    let (text, set_text) = signal(String::new());
    let (error, set_error) = signal(None::<String>);
    let (sending, set_sending) = signal(false);
    let ready = move || live.session_id.with(Option::is_some);
    let follow = use_context::<Follow>();

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
        // The person wants to see their message and the answer.
        if let Some(follow) = follow {
            follow.on.set_value(true);
        }
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let key = message_key();
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
            <p class="mt-1 min-h-4 text-xs text-slate-500 dark:text-slate-400" aria-live="polite">
                {move || match (error.get(), live.online.get(), live.error.get()) {
                    (Some(e), _, _) | (None, _, Some(e)) => e,
                    (None, false, None) if ready() => "Reconectando…".to_owned(),
                    _ => String::new(),
                }}
            </p>
        </form>
    }
}

/// A fresh idempotency key for one message: 128 random bits in hex. `getRandomValues`
/// works on plain http too (`randomUUID` needs a secure context and would throw);
/// `Math.random` fills in if the browser has no `crypto` at all.
#[cfg(feature = "hydrate")]
fn message_key() -> String {
    let mut bytes = [0u8; 16];
    let filled = window()
        .crypto()
        .and_then(|c| c.get_random_values_with_u8_array(&mut bytes))
        .is_ok();
    if !filled {
        for b in &mut bytes {
            *b = (js_sys::Math::random() * 256.0) as u8;
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
