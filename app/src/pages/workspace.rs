//! The main page: chat on the left, board on the right (tabs on mobile).

use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::{SplitView, TopBar};

#[component]
pub fn WorkspacePage() -> impl IntoView {
    view! {
        <Title text="Luna" />
        <div class="flex h-screen flex-col">
            <TopBar />
            <SplitView />
        </div>
    }
}
