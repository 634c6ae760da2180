//! One module per page. Pages compose components and own their data resources.
//!
//! Every page but the workspace is a lazy route: `cargo leptos build --split` moves its
//! code into its own wasm chunk, fetched the first time the page is shown (or before
//! hydrating it, when the server rendered it). The workspace stays in the main module.
//! The routes create their resources inside the lazy view, so that the code that reads
//! their answers moves into the chunk too; on a client-side visit the chunk is fetched
//! first and the data second. Hydration is synchronous (see `frontend/vendor/README.md`),
//! so the browser loads the chunk of the page it is on first: [`preload_route`].

mod knowledge;
mod login;
mod not_found;
mod settings;
mod tools;
mod workspace;

pub use knowledge::KnowledgeReviewPage;
pub use login::LoginPage;
pub use not_found::NotFoundPage;
pub use settings::SettingsPage;
pub use tools::ToolsPage;
pub use workspace::WorkspacePage;

use leptos::prelude::*;
use leptos_router::{lazy_route, LazyRoute};

/// `/login`, in its own chunk.
pub struct LoginRoute;

#[lazy_route]
impl LazyRoute for LoginRoute {
    fn data() -> Self {
        LoginRoute
    }

    fn view(_this: Self) -> AnyView {
        view! { <LoginPage /> }.into_any()
    }
}

/// `/herramientas`, in its own chunk.
pub struct ToolsRoute;

#[lazy_route]
impl LazyRoute for ToolsRoute {
    fn data() -> Self {
        ToolsRoute
    }

    fn view(_this: Self) -> AnyView {
        view! { <ToolsPage /> }.into_any()
    }
}

/// `/ajustes`, in its own chunk.
pub struct SettingsRoute;

#[lazy_route]
impl LazyRoute for SettingsRoute {
    fn data() -> Self {
        SettingsRoute
    }

    fn view(_this: Self) -> AnyView {
        view! { <SettingsPage /> }.into_any()
    }
}

/// `/conocimiento`, in its own chunk.
pub struct KnowledgeRoute;

#[lazy_route]
impl LazyRoute for KnowledgeRoute {
    fn data() -> Self {
        KnowledgeRoute
    }

    fn view(_this: Self) -> AnyView {
        view! { <KnowledgeReviewPage /> }.into_any()
    }
}

/// Loads the wasm chunk of the lazy route at `path` (the page the server rendered), so
/// that hydrating it does not wait; other paths need nothing. The paths are the ones
/// `App` routes to a `Lazy` view.
pub async fn preload_route(path: &str) {
    match path.trim_end_matches('/') {
        "/login" => LoginRoute::preload().await,
        "/herramientas" => ToolsRoute::preload().await,
        "/ajustes" => SettingsRoute::preload().await,
        "/conocimiento" => KnowledgeRoute::preload().await,
        _ => {}
    }
}
