//! The 404 page.

use leptos::prelude::*;

#[component]
pub fn NotFoundPage() -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::server::set_status(404);
    view! {
        <main class="flex min-h-screen flex-col items-center justify-center gap-3 p-4">
            <h1 class="text-xl font-semibold">"No encontramos esta página"</h1>
            <a href="/" class="text-indigo-600 underline dark:text-indigo-400">"Volver al chat"</a>
        </main>
    }
}
