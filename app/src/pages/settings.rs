//! The admin settings page: members, MCP API keys and (later) auto-mode budgets.
//! Owners and admins only: anyone else gets a 403 page.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::{settings, CreateApiKey, RevokeApiKey};
use crate::components::{Forbidden, TopBar};

#[component]
pub fn SettingsPage() -> impl IntoView {
    let create = ServerAction::<CreateApiKey>::new();
    let revoke = ServerAction::<RevokeApiKey>::new();
    let data = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        |_| settings(),
    );
    let new_secret = move || create.value().get().and_then(|r| r.ok());
    let create_error = move || {
        create
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| e.message())
    };

    view! {
        <Title text="Ajustes · Luna" />
        <div class="flex min-h-screen flex-col">
            <TopBar />
            <main class="mx-auto w-full max-w-3xl space-y-8 p-4 md:p-8">
                <h1 class="text-2xl font-semibold">"Ajustes del espacio de trabajo"</h1>
                <Suspense fallback=|| view! { <p class="text-slate-500">"Cargando…"</p> }>
                    {move || Suspend::new(async move {
                        match data.await {
                            Err(e) => view! { <Forbidden message=e.message() /> }.into_any(),
                            Ok(view) => view! {
                                <section aria-labelledby="auto-title" class="space-y-2">
                                    <h2 id="auto-title" class="text-lg font-medium">"Modo automático"</h2>
                                    <p class="text-sm text-slate-600 dark:text-slate-400">
                                        "Aquí fijarás el presupuesto de créditos y contactos que Luna puede usar sin preguntar, y qué acciones pueden correr en automático."
                                    </p>
                                </section>
                                <section aria-labelledby="members-title" class="space-y-2">
                                    <h2 id="members-title" class="text-lg font-medium">"Miembros de " {view.workspace_name.clone()}</h2>
                                    <ul class="divide-y divide-slate-200 rounded-xl border border-slate-200 dark:divide-slate-800 dark:border-slate-800">
                                        {view.members.into_iter().map(|m| view! {
                                            <li class="flex items-center justify-between px-4 py-2">
                                                <span>{m.display_name}" "<span class="text-sm text-slate-500">{m.email}</span></span>
                                                <span class="text-sm">{m.role.label()}</span>
                                            </li>
                                        }).collect_view()}
                                    </ul>
                                </section>
                                <section aria-labelledby="keys-title" class="space-y-3">
                                    <h2 id="keys-title" class="text-lg font-medium">"Llaves de API (MCP)"</h2>
                                    <p class="text-sm text-slate-600 dark:text-slate-400">
                                        "Los agentes externos usan estas llaves para llamar las herramientas de Luna por MCP."
                                    </p>
                                    <ActionForm action=create attr:class="flex gap-2">
                                        <label class="sr-only" for="key-name">"Nombre de la llave"</label>
                                        <input id="key-name" name="name" required placeholder="Nombre, p. ej. «Agente de prospección»"
                                            class="flex-1 rounded-lg border border-slate-300 bg-white px-3 py-2 dark:border-slate-700 dark:bg-slate-950" />
                                        <button type="submit" class="rounded-lg bg-indigo-600 px-4 py-2 text-white hover:bg-indigo-700">"Crear llave"</button>
                                    </ActionForm>
                                    {move || new_secret().map(|s| view! {
                                        <p role="status" class="rounded-lg bg-emerald-50 p-3 text-sm text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100">
                                            "Copia la llave ahora; no se volverá a mostrar: " <code class="break-all font-mono">{s}</code>
                                        </p>
                                    })}
                                    {move || create_error().map(|m| view! { <p role="alert" class="text-sm text-rose-700">{m}</p> })}
                                    {if view.api_keys.is_empty() {
                                        view! { <p class="text-sm text-slate-500">"Aún no hay llaves."</p> }.into_any()
                                    } else {
                                        view! {
                                            <ul class="divide-y divide-slate-200 rounded-xl border border-slate-200 dark:divide-slate-800 dark:border-slate-800">
                                                {view.api_keys.into_iter().map(|k| {
                                                    let id = k.id.clone();
                                                    view! {
                                                        <li class="flex items-center justify-between px-4 py-2">
                                                            <span>{k.name}" "<code class="text-sm text-slate-500">{k.prefix}"…"</code></span>
                                                            {if k.revoked {
                                                                view! { <span class="text-sm text-slate-500">"Revocada"</span> }.into_any()
                                                            } else {
                                                                view! {
                                                                    <ActionForm action=revoke>
                                                                        <input type="hidden" name="id" value=id />
                                                                        <button type="submit" class="text-sm text-rose-700 underline">"Revocar"</button>
                                                                    </ActionForm>
                                                                }.into_any()
                                                            }}
                                                        </li>
                                                    }
                                                }).collect_view()}
                                            </ul>
                                        }.into_any()
                                    }}
                                </section>
                            }.into_any(),
                        }
                    })}
                </Suspense>
            </main>
        </div>
    }
}
