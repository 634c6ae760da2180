//! The tool reference page: every tool the signed-in person may use, generated from
//! the registry (the same source as MCP `tools/list` and `docs/TOOLS.md`).

use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::{Forbidden, TopBar};
use crate::tools_api::list_tools;

#[component]
pub fn ToolsPage() -> impl IntoView {
    let tools = crate::codec::resource(|| (), |_| list_tools());
    view! {
        <Title text="Herramientas · Luna" />
        <div class="flex min-h-screen flex-col">
            <TopBar />
            <main class="mx-auto w-full max-w-4xl space-y-4 p-4 md:p-8">
                <h1 class="text-2xl font-semibold">"Herramientas"</h1>
                <p class="text-sm text-slate-600 dark:text-slate-400">
                    "Lo que Luna y los agentes externos (por MCP) pueden hacer en tu espacio de trabajo. El nivel indica quién decide: 0 se hace y se narra, 1 pide un toque, 2 es una decisión pendiente."
                </p>
                <Suspense fallback=|| view! { <p class="text-slate-500 dark:text-slate-400">"Cargando…"</p> }>
                    {move || Suspend::new(async move {
                        match tools.await {
                            Err(e) => view! { <Forbidden message=e.message() /> }.into_any(),
                            Ok(list) => view! {
                                <table class="w-full text-left text-sm" data-testid="tools-table">
                                    <thead class="border-b border-slate-200 text-slate-500 dark:border-slate-800 dark:text-slate-400">
                                        <tr>
                                            <th scope="col" class="py-2">"Herramienta"</th>
                                            <th scope="col">"Qué hace"</th>
                                            <th scope="col">"Familia"</th>
                                            <th scope="col">"Nivel"</th>
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {list.into_iter().map(|t| view! {
                                            <tr class="border-b border-slate-100 dark:border-slate-900">
                                                <td class="py-2 font-mono">{t.name}</td>
                                                <td>{t.label}</td>
                                                <td>{t.family}</td>
                                                <td>{t.level}{t.read_only.then_some(" · solo lectura")}</td>
                                            </tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            }.into_any(),
                        }
                    })}
                </Suspense>
            </main>
        </div>
    }
}
