//! The login page. Works without JavaScript (a plain form post) and with it.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::api::Login;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let error = move || {
        login
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| e.message())
    };
    view! {
        <Title text="Entrar · Luna" />
        <main class="flex min-h-screen items-center justify-center p-4">
            <div class="w-full max-w-sm rounded-2xl border border-slate-200 bg-white p-8 shadow-sm dark:border-slate-800 dark:bg-slate-900">
                <h1 class="text-2xl font-semibold tracking-tight">"Luna"</h1>
                <p class="mt-1 text-sm text-slate-600 dark:text-slate-400">
                    "Tu espacio de ventas B2B para México."
                </p>
                <ActionForm action=login attr:class="mt-6 space-y-4" attr:aria-label="Iniciar sesión">
                    <label class="block">
                        <span class="text-sm font-medium">"Correo"</span>
                        <input
                            type="email"
                            name="email"
                            required
                            autocomplete="username"
                            class="mt-1 w-full rounded-lg border border-slate-300 bg-white px-3 py-2 focus:outline-2 focus:outline-indigo-500 dark:border-slate-700 dark:bg-slate-950"
                        />
                    </label>
                    <label class="block">
                        <span class="text-sm font-medium">"Contraseña"</span>
                        <input
                            type="password"
                            name="password"
                            required
                            autocomplete="current-password"
                            class="mt-1 w-full rounded-lg border border-slate-300 bg-white px-3 py-2 focus:outline-2 focus:outline-indigo-500 dark:border-slate-700 dark:bg-slate-950"
                        />
                    </label>
                    <Show when=move || error().is_some()>
                        <p role="alert" class="rounded-lg bg-rose-50 px-3 py-2 text-sm text-rose-800 dark:bg-rose-950 dark:text-rose-200">
                            {error}
                        </p>
                    </Show>
                    <button
                        type="submit"
                        class="w-full rounded-lg bg-indigo-600 px-4 py-2 font-medium text-white hover:bg-indigo-700 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 disabled:opacity-60"
                        disabled=move || login.pending().get()
                    >
                        {move || if login.pending().get() { "Entrando…" } else { "Entrar" }}
                    </button>
                </ActionForm>
            </div>
        </main>
    }
}
