//! The split view: chat left, board right, a draggable (and keyboard-resizable)
//! divider whose position is remembered; under 768 px, tabs Chat · Tablero · Decisiones.

use leptos::prelude::*;

use super::board::{PendingSection, SavedSection, SelectionSection};
use super::chat::ChatPane;
use super::drawer::{Drawer, EvidenceDrawer};
use super::live::Live;
use super::research::RunsSection;
use super::sequences::SequencesSection;

// The chat's width in tenths of a percent of the split view. Integers, so that the
// browser's wasm carries no float formatting or parsing (see docs/BENCH.md).
const MIN_PCT: i32 = 250;
const MAX_PCT: i32 = 750;
const DEFAULT_PCT: i32 = 420;
#[cfg(feature = "hydrate")]
const STORAGE_KEY: &str = "luna.split.chat_pct";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tab {
    Chat,
    Board,
    Decisions,
}

fn clamp(pct: i32) -> i32 {
    pct.clamp(MIN_PCT, MAX_PCT)
}

/// `425` → `"42.5"`, as the width is stored and used in CSS.
fn percent(tenths: i32) -> String {
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// `"42.5"` (or `"42"`) → `425`; what `percent` wrote.
#[cfg(feature = "hydrate")]
fn parse_percent(text: &str) -> Option<i32> {
    let (whole, tenth) = text.trim().split_once('.').unwrap_or((text.trim(), "0"));
    let tenth = tenth.get(..1).unwrap_or("0");
    Some(whole.parse::<i32>().ok()? * 10 + tenth.parse::<i32>().ok()?)
}

#[component]
pub fn SplitView() -> impl IntoView {
    let (tab, set_tab) = signal(Tab::Chat);
    let (chat_pct, set_chat_pct) = signal(DEFAULT_PCT);
    let (dragging, set_dragging) = signal(false);
    let container = NodeRef::<leptos::html::Div>::new();
    let live = Live::new();
    provide_context(live);
    let drawer = Drawer::new();
    provide_context(drawer);
    // While the drawer is open the page behind it is inert: focus stays in the dialog.
    let inert = move || drawer.open.with(Option::is_some);
    let pending = Memo::new(move |_| live.replica.with(|r| r.view.board.pending.len()));
    let selected = Memo::new(move |_| live.replica.with(|r| r.view.board.selection.len()));
    Effect::new(move |_| live.start());

    // Restore the remembered width once hydrated, and remember every change.
    #[cfg(feature = "hydrate")]
    {
        Effect::new(move |_| {
            let stored = window()
                .local_storage()
                .ok()
                .flatten()
                .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
                .and_then(|v| parse_percent(&v));
            if let Some(v) = stored {
                set_chat_pct.set(clamp(v));
            }
        });
    }
    let remember = move |pct: i32| {
        set_chat_pct.set(clamp(pct));
        #[cfg(feature = "hydrate")]
        if let Some(storage) = window().local_storage().ok().flatten() {
            let _ = storage.set_item(STORAGE_KEY, &percent(clamp(pct)));
        }
    };

    let on_pointer_down = move |ev: leptos::ev::PointerEvent| {
        set_dragging.set(true);
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            if let Some(target) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            {
                let _ = target.set_pointer_capture(ev.pointer_id());
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    let on_pointer_move = move |ev: leptos::ev::PointerEvent| {
        if !dragging.get_untracked() {
            return;
        }
        #[cfg(feature = "hydrate")]
        if let Some(el) = container.get_untracked() {
            let rect = el.get_bounding_client_rect();
            if rect.width() > 0.0 {
                remember(
                    ((ev.client_x() as f64 - rect.left()) / rect.width() * 1000.0).round() as i32,
                );
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, container);
    };
    let on_pointer_up = move |_| set_dragging.set(false);
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let step = if ev.shift_key() { 100 } else { 20 };
        match ev.key().as_str() {
            "ArrowLeft" => remember(chat_pct.get_untracked() - step),
            "ArrowRight" => remember(chat_pct.get_untracked() + step),
            "Home" => remember(MIN_PCT),
            "End" => remember(MAX_PCT),
            _ => return,
        }
        ev.prevent_default();
    };

    let tab_button = move |which: Tab,
                           label: &'static str,
                           controls: &'static str,
                           badge: Option<(Memo<usize>, &'static str)>| {
        view! {
            <button
                role="tab"
                id=format!("tab-{controls}")
                aria-controls=controls
                aria-selected=move || (tab.get() == which).to_string()
                class=move || {
                    let base = "flex-1 py-2 text-sm font-medium border-b-2 focus-visible:outline-2 focus-visible:outline-indigo-500";
                    if tab.get() == which {
                        format!("{base} border-indigo-600 text-indigo-700 dark:text-indigo-300")
                    } else {
                        format!("{base} border-transparent text-slate-600 dark:text-slate-400")
                    }
                }
                on:click=move |_| set_tab.set(which)
            >
                {label}
                {badge.map(|(count, noun)| view! {
                    <Show when=move || { count.get() > 0 }>
                        <span
                            class="ml-1 inline-flex min-w-5 items-center justify-center rounded-full bg-indigo-600 px-1.5 text-xs font-semibold text-white"
                            data-testid=format!("tab-badge-{controls}")
                            aria-label=move || format!("{} {noun}", count.get())
                        >
                            {move || count.get()}
                        </span>
                    </Show>
                })}
            </button>
        }
    };

    view! {
        <div role="tablist" aria-label="Secciones" inert=inert class="flex border-b border-slate-200 bg-white md:hidden dark:border-slate-800 dark:bg-slate-900">
            {tab_button(Tab::Chat, "Chat", "chat-pane", None)}
            {tab_button(Tab::Board, "Tablero", "board-pane", Some((selected, "empresas en la selección")))}
            {tab_button(Tab::Decisions, "Decisiones", "decisions-pane", Some((pending, "decisiones pendientes")))}
        </div>
        <div
            inert=inert
            node_ref=container
            class="flex min-h-0 flex-1 flex-col md:flex-row"
            style:--chat-width=move || format!("{}%", percent(chat_pct.get()))
            data-testid="split-view"
        >
            <section
                id="chat-pane"
                aria-label="Chat"
                class=move || {
                    let shown = if tab.get() == Tab::Chat { "flex" } else { "hidden md:flex" };
                    format!("{shown} min-h-0 flex-1 flex-col md:w-[var(--chat-width)] md:flex-none")
                }
            >
                <ChatPane />
            </section>
            <div
                role="separator"
                aria-orientation="vertical"
                aria-label="Cambiar el ancho del chat y el tablero"
                aria-valuemin=MIN_PCT / 10
                aria-valuemax=MAX_PCT / 10
                aria-valuenow=move || (chat_pct.get() + 5) / 10
                tabindex="0"
                data-testid="divider"
                class=move || {
                    let active = if dragging.get() { "bg-indigo-500" } else { "bg-slate-200 dark:bg-slate-800" };
                    format!("hidden w-1.5 shrink-0 cursor-col-resize touch-none hover:bg-indigo-400 focus-visible:bg-indigo-500 focus-visible:outline-none md:block {active}")
                }
                on:pointerdown=on_pointer_down
                on:pointermove=on_pointer_move
                on:pointerup=on_pointer_up
                on:pointercancel=on_pointer_up
                on:keydown=on_key
            ></div>
            <section
                id="board-pane"
                aria-label="Tablero"
                class=move || {
                    let shown = if tab.get() == Tab::Chat { "hidden md:flex" } else { "flex" };
                    format!("{shown} relative min-h-0 min-w-0 flex-1 flex-col gap-4 overflow-y-auto bg-white p-4 dark:bg-slate-900")
                }
            >
                <div class=move || if tab.get() == Tab::Decisions { "hidden md:block space-y-4" } else { "block space-y-4" }>
                    <SelectionSection />
                    <SavedSection />
                    <RunsSection />
                    <SequencesSection />
                </div>
                <div
                    id="decisions-pane"
                    class=move || if tab.get() == Tab::Board { "hidden md:block" } else { "block" }
                >
                    <PendingSection />
                </div>
            </section>
        </div>
        <EvidenceDrawer />
    }
}
