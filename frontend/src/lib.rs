//! The browser entry point: hydrates the server-rendered page. Nothing else lives here.

// Release builds (no `erase_components`) nest the view types deeper than the
// default limit allows when computing the hydration futures of the split view.
#![recursion_limit = "256"]

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Asynchronous hydration (what `leptos::mount::hydrate_lazy` does): a page that is a
    // lazy route waits for its wasm chunk before it hydrates. Once the whole page has
    // hydrated, <body> is marked as interactive (the end-to-end tests wait for it).
    // `hydrate_from_async` starts leptos' executor itself.
    wasm_bindgen_futures::spawn_local(async {
        let body = leptos::prelude::document()
            .body()
            .expect("the page has a <body>");
        let app = leptos::mount::hydrate_from_async(body.clone(), luna_app::App).await;
        app.forget();
        let _ = body.set_attribute("data-hydrated", "true");
    });
}
