//! The browser entry point: hydrates the server-rendered page. Nothing else lives here.

// Release builds (no `erase_components`) nest the view types deeper than the
// default limit allows when computing the hydration futures of the split view.
#![recursion_limit = "256"]

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(luna_app::App);
}
