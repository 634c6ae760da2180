//! The owner's knowledge-review page: pending notes and suggested edits to merge.
//! Owners and admins only: anyone else gets a 403 page.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::settings;
use crate::components::{Forbidden, TopBar};

#[component]
pub fn KnowledgeReviewPage() -> impl IntoView {
    // The settings read doubles as the owner/admin check until knowledge has its own API.
    let access = Resource::new(|| (), |_| settings());
    view! {
        <Title text="Conocimiento · Luna" />
        <div class="flex min-h-screen flex-col">
            <TopBar />
            <main class="mx-auto w-full max-w-3xl space-y-4 p-4 md:p-8">
                <h1 class="text-2xl font-semibold">"Revisión de conocimiento"</h1>
                <Suspense fallback=|| view! { <p class="text-slate-500">"Cargando…"</p> }>
                    {move || Suspend::new(async move {
                        match access.await {
                            Err(e) => view! { <Forbidden message=e.message() /> }.into_any(),
                            Ok(_) => view! {
                                <p class="rounded-xl border border-dashed border-slate-300 p-6 text-slate-600 dark:border-slate-700 dark:text-slate-400">
                                    "No hay notas ni ediciones sugeridas en revisión. Cuando Luna deje una nota o sugiera una edición, aparecerá aquí con su diferencia para que la fusiones o la rechaces."
                                </p>
                            }.into_any(),
                        }
                    })}
                </Suspense>
            </main>
        </div>
    }
}
