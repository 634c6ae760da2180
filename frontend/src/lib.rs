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

/// Room for wasm-split to lay out the read-only data again (docs/BENCH.md, "Browser
/// bundle"). wasm-split gives each module its own part of the `.rodata` segment, padding
/// each part to its alignment; when the parts together are longer than the segment it was
/// given, it puts the whole segment (every lazy page's text too) in the main module. These
/// bytes are in the segment but no code reads them, so no module takes them and they are
/// never downloaded: they only make the segment long enough for the padding.
#[used]
static SPLIT_PADDING_ROOM: [u8; 4096] = [0x5a; 4096];
