//! Luna's user interface: the HTML shell, the router and the pages, plus the server
//! functions they call. Server functions stay thin: they take the engine and the
//! caller from context, call the engine and map its error (see `server`).

// Release builds (no `erase_components`) nest the view types deeper than the
// default limit allows when computing the hydration futures of the split view.
#![recursion_limit = "256"]

pub mod api;
pub mod board_api;
pub mod codec;
pub mod components;
pub mod coverage_api;
pub mod decisions_api;
pub mod error;
pub mod knowledge_api;
pub mod pages;
pub mod profile_api;
pub mod send_window_api;
pub mod sequences_api;
#[cfg(feature = "ssr")]
pub mod server;
pub mod session_api;
pub mod suppressions_api;
pub mod tools_api;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{path, Lazy, SsrMode};

use pages::{KnowledgeRoute, LoginRoute, NotFoundPage, SettingsRoute, ToolsRoute, WorkspacePage};

/// The HTML document the server renders around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    server::set_page_csp();
    view! {
        <!DOCTYPE html>
        <html lang="es-MX">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light dark" />
                // The browser chrome matches the top bar: white, slate-900 in the dark theme.
                <meta name="theme-color" content="#ffffff" media="(prefers-color-scheme: light)" />
                <meta name="theme-color" content="#0f172a" media="(prefers-color-scheme: dark)" />
                // public/ (drawn by .ci/icons); the session middleware serves them to anyone.
                <link rel="icon" href="/favicon.ico" sizes="48x48" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                <link rel="apple-touch-icon" href="/apple-touch-icon.png" />
                <link rel="manifest" href="/manifest.webmanifest" />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body class="h-full bg-slate-50 text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
                <App />
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="leptos" href="/pkg/luna.css" />
        <Title text="Luna" />
        <Router>
            <Routes fallback=|| view! { <NotFoundPage /> }>
                <Route path=path!("/login") view={Lazy::<LoginRoute>::new()} />
                <Route path=path!("/") view=WorkspacePage />
                <Route path=path!("/herramientas") view={Lazy::<ToolsRoute>::new()} />
                <Route path=path!("/ajustes") view={Lazy::<SettingsRoute>::new()} ssr=SsrMode::Async />
                <Route path=path!("/conocimiento") view={Lazy::<KnowledgeRoute>::new()} ssr=SsrMode::Async />
            </Routes>
        </Router>
    }
}
