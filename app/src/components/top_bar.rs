//! The top bar: workspace, plan, navigation and the signed-in person.

use leptos::prelude::*;
use server_fn::ServerFn;

use crate::api::{whoami, Logout};

#[component]
pub fn TopBar() -> impl IntoView {
    let me = crate::codec::resource(|| (), |_| whoami());
    let logout = ServerAction::<Logout>::new();
    view! {
        <header class="flex items-center justify-between gap-3 border-b border-slate-200 bg-white px-4 py-2 dark:border-slate-800 dark:bg-slate-900">
            <nav aria-label="Principal" class="flex items-center gap-4">
                <a href="/" class="text-lg font-semibold tracking-tight">"Luna"</a>
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        me.await.ok().map(|me| {
                            let admin = me.role.can_administer();
                            view! {
                                <span class="hidden text-sm text-slate-600 sm:inline dark:text-slate-400" data-testid="workspace-name">
                                    {me.workspace_name}" · "{me.plan.label()}
                                </span>
                                <a href="/herramientas" class="hidden text-sm hover:underline sm:inline">"Herramientas"</a>
                                <Show when=move || admin>
                                    <a href="/conocimiento" class="text-sm hover:underline">"Conocimiento"</a>
                                    <a href="/ajustes" class="text-sm hover:underline">"Ajustes"</a>
                                </Show>
                            }
                        })
                    })}
                </Transition>
            </nav>
            <div class="flex items-center gap-3">
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        me.await.ok().map(|me| view! {
                            <span class="text-sm" data-testid="user-name">{me.display_name}</span>
                        })
                    })}
                </Transition>
                // What <ActionForm> renders, without reading the (empty) arguments from the
                // form: that would compile serde_qs' form parser into the main wasm. Without
                // JavaScript the form posts to the server function, which redirects.
                <form
                    action=Logout::url()
                    method="post"
                    on:submit=move |ev| {
                        if ev.default_prevented() {
                            return;
                        }
                        ev.prevent_default();
                        logout.dispatch(Logout {});
                    }
                >
                    <button type="submit" class="rounded-lg px-2 py-1 text-sm text-slate-600 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800">
                        "Salir"
                    </button>
                </form>
            </div>
        </header>
    }
}
