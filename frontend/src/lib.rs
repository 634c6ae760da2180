//! The browser entry point: hydrates the server-rendered page. Nothing else lives here.

// Release builds (no `erase_components`) nest the view types deeper than the
// default limit allows when computing the hydration futures of the split view.
#![recursion_limit = "256"]

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Synchronous hydration (the patched renderer in `vendor/` has no asynchronous
    // `AnyView` hydration): a page that is a lazy route has its wasm chunk loaded first.
    // Once the page has hydrated, <body> is marked as interactive (the end-to-end tests
    // wait for it).
    wasm_bindgen_futures::spawn_local(async {
        let path = leptos::prelude::window()
            .location()
            .pathname()
            .unwrap_or_default();
        luna_app::pages::preload_route(&path).await;
        let body = leptos::prelude::document()
            .body()
            .expect("the page has a <body>");
        leptos::mount::hydrate_from(body.clone(), luna_app::App).forget();
        let _ = body.set_attribute("data-hydrated", "true");
    });
}
