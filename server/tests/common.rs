//! Shared helpers for the server's integration tests: a fresh app on a temp database.

use axum::Router;
use leptos::config::LeptosOptions;
use luna_app::server::CookiePolicy;
use luna_engine::{Engine, Store};
use luna_server::{app, AppState};

pub async fn spawn_app() -> (Router, Engine) {
    let engine = Engine::from_store(Store::open_temp().await.expect("temp db"));
    luna_engine::demo::seed_if_empty(&engine.accounts)
        .await
        .expect("seed");
    let leptos_options = LeptosOptions::builder().output_name("luna").build();
    let state = AppState {
        leptos_options,
        engine: engine.clone(),
        cookie: CookiePolicy::default(),
    };
    (app(state), engine)
}
