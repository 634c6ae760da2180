//! Reusable components: the top bar, the split chat/board view, small states.

mod board;
mod chart;
mod chat;
pub mod coverage;
pub mod decision;
pub mod drawer;
mod kanban;
pub mod kind_checks;
pub mod live;
mod mode;
pub mod profile;
mod recipient_pager;
mod research;
pub mod send_window;
mod sequences;
mod split;
pub mod suppressions;
mod top_bar;

pub use split::SplitView;
pub use top_bar::TopBar;

use leptos::prelude::*;

/// Shown when the person may not see a page (the server also answers 403).
#[component]
pub fn Forbidden(message: String) -> impl IntoView {
    view! {
        <div role="alert" class="rounded-xl border border-amber-300 bg-amber-50 p-6 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100">
            <p class="font-medium">"No tienes permiso para ver esta página."</p>
            <p class="mt-1 text-sm">{message}</p>
            <a href="/" class="mt-3 inline-block text-sm underline">"Volver al chat"</a>
        </div>
    }
}

/// What an action in a form came to: a status line, or an alert with the error.
#[component]
pub fn Outcome(status: ReadSignal<Option<Result<String, String>>>) -> impl IntoView {
    move || {
        status.get().map(|s| match s {
            Ok(m) => view! { <p role="status" class="text-sm text-emerald-700 dark:text-emerald-300">{m}</p> }.into_any(),
            Err(m) => view! { <p role="alert" class="text-sm text-rose-700 dark:text-rose-300">{m}</p> }.into_any(),
        })
    }
}
