//! The evidence drawer (CONTRACT §13): tapping a selection card, a kanban card or an
//! anchored fact opens, without leaving the page, the company's file — its awards
//! with charts by year and by buyer, risk marks, permits and CRM history. Escape, the
//! backdrop and the close button shut it, and focus returns to what opened it.

use leptos::prelude::*;
use luna_protocol::evidence::{date_es, mxn, CompanyFile, CrmTimeline};

use super::chart::{BarChart, Orientation};

/// Which company the drawer shows; shared by everything that can open it.
#[derive(Clone, Copy)]
pub struct Drawer {
    pub open: RwSignal<Option<String>>,
}

/// Marks the element that opened the drawer, to give focus back on close.
#[cfg(feature = "hydrate")]
const OPENER_ATTR: &str = "data-drawer-opener";

impl Drawer {
    pub fn new() -> Self {
        Drawer {
            open: RwSignal::new(None),
        }
    }

    /// Opens the drawer on `company:<id>`, remembering what had focus.
    pub fn show(self, company_ref: String) {
        #[cfg(feature = "hydrate")]
        {
            let doc = document();
            while let Ok(Some(old)) = doc.query_selector(&format!("[{OPENER_ATTR}]")) {
                let _ = old.remove_attribute(OPENER_ATTR);
            }
            // A click on a non-focusable area leaves focus on <body>: then the fallback
            // (an opener of the same company) is the better target.
            let body = doc.body().map(wasm_bindgen::JsValue::from);
            if let Some(active) = doc
                .active_element()
                .filter(|a| Some(wasm_bindgen::JsValue::from(a.clone())) != body)
            {
                let _ = active.set_attribute(OPENER_ATTR, "");
            }
        }
        self.open.set(Some(company_ref));
    }

    /// Closes the drawer and puts focus back where it was (or on another opener of
    /// the same company if the list re-rendered meanwhile).
    pub fn close(self) {
        let was = self.open.get_untracked();
        self.open.set(None);
        #[cfg(feature = "hydrate")]
        request_animation_frame(move || {
            use wasm_bindgen::JsCast;
            let doc = document();
            let target = doc
                .query_selector(&format!("[{OPENER_ATTR}]"))
                .ok()
                .flatten()
                .or_else(|| {
                    let r = was?;
                    doc.query_selector(&format!("[data-open-ref=\"{}\"]", r.replace('"', "")))
                        .ok()
                        .flatten()
                });
            if let Some(el) = target {
                let _ = el.remove_attribute(OPENER_ATTR);
                if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
                    let _ = el.focus();
                }
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = was;
    }
}

impl Default for Drawer {
    fn default() -> Self {
        Self::new()
    }
}

/// The drawer. Its dialog (the file, the charts, the server function that reads the
/// file) is split out of the main wasm and fetched the first time a file is opened.
#[component]
pub fn EvidenceDrawer() -> impl IntoView {
    let drawer = expect_context::<Drawer>();
    view! {
        <Show when=move || drawer.open.with(Option::is_some)>
            {Suspend::new(drawer_dialog())}
        </Show>
    }
    .into_any()
}

/// The open drawer; unmounted (with its Escape listener) when it closes.
#[leptos::lazy]
fn drawer_dialog() -> AnyView {
    let drawer = expect_context::<Drawer>();
    let file = LocalResource::new(move || {
        let open = drawer.open.get();
        async move {
            match open {
                Some(r) => Some(crate::board_api::open_company_file(r).await),
                None => None,
            }
        }
    });
    let close_button = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if drawer.open.get().is_some() {
            if let Some(button) = close_button.get() {
                let _ = button.focus();
            }
        }
    });
    let on_escape = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" && drawer.open.get_untracked().is_some() {
            ev.prevent_default();
            drawer.close();
        }
    });
    on_cleanup(move || on_escape.remove());

    view! {
            <div class="fixed inset-0 z-40 bg-slate-900/40" aria-hidden="true" on:click=move |_| drawer.close()></div>
            <div
                role="dialog"
                aria-modal="true"
                aria-labelledby="drawer-title"
                data-testid="evidence-drawer"
                class="fixed inset-y-0 right-0 z-50 flex w-full max-w-lg flex-col bg-white shadow-2xl dark:bg-slate-900"
            >
                <header class="flex items-start justify-between gap-3 border-b border-slate-200 p-4 dark:border-slate-800">
                    <div class="min-w-0">
                        <p class="text-xs font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Expediente"</p>
                        <h2 id="drawer-title" class="truncate text-lg font-semibold">
                            {move || match file.get() {
                                Some(Some(Ok(f))) => f.name,
                                Some(Some(Err(_))) => "Expediente no disponible".to_owned(),
                                _ => "Cargando el expediente…".to_owned(),
                            }}
                        </h2>
                    </div>
                    <button
                        node_ref=close_button
                        type="button"
                        data-testid="drawer-close"
                        class="rounded-lg px-3 py-1 text-sm text-slate-700 ring-1 ring-slate-300 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-slate-200 dark:ring-slate-700 dark:hover:bg-slate-800"
                        on:click=move |_| drawer.close()
                    >
                        "Cerrar"
                    </button>
                </header>
                // Focusable so the file scrolls from the keyboard too.
                <div class="flex-1 space-y-6 overflow-y-auto p-4 focus-visible:outline-2 focus-visible:outline-indigo-500" tabindex="0">
                    {move || match file.get() {
                        Some(Some(Ok(f))) => file_view(f).into_any(),
                        Some(Some(Err(e))) => view! {
                            <p role="alert" class="rounded-xl bg-rose-50 p-3 text-sm text-rose-800 dark:bg-rose-950 dark:text-rose-200">{e.message()}</p>
                        }.into_any(),
                        _ => view! { <p class="text-sm text-slate-500 dark:text-slate-400" role="status">"Cargando el expediente…"</p> }.into_any(),
                    }}
                </div>
            </div>
    }
    .into_any()
}

fn file_view(f: CompanyFile) -> impl IntoView {
    let facts: Vec<String> = [
        f.rfc.clone().map(|r| format!("RFC {r}")),
        f.place,
        f.activity,
    ]
    .into_iter()
    .flatten()
    .collect();
    let shown = f.awards.len();
    let more = (f.awards_count as usize).saturating_sub(shown);
    view! {
        {(!facts.is_empty()).then(|| view! { <p class="text-sm text-slate-600 dark:text-slate-400">{facts.join(" · ")}</p> })}
        <section aria-labelledby="drawer-awards" class="space-y-3" data-testid="drawer-awards">
            <h3 id="drawer-awards" class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">
                "Adjudicaciones · "{f.awards_count}" por "{mxn(f.awards_total_mxn)}
            </h3>
            {if f.awards.is_empty() {
                view! { <p class="text-sm text-slate-600 dark:text-slate-400">"No tiene adjudicaciones registradas."</p> }.into_any()
            } else {
                view! {
                    <BarChart title="Montos por año" buckets=f.by_year orientation=Orientation::Columns />
                    <BarChart title="Montos por comprador" buckets=f.by_buyer orientation=Orientation::Rows />
                    <ul class="divide-y divide-slate-100 text-sm dark:divide-slate-800">
                        {f.awards.into_iter().take(10).map(|a| view! {
                            <li class="py-2" data-ref=a.reference>
                                <p class="font-medium">{a.title}</p>
                                <p class="text-xs text-slate-600 dark:text-slate-400">
                                    {a.buyer}
                                    {a.date.map(|d| format!(" · {}", date_es(&d)))}
                                    {a.amount_mxn.map(|m| format!(" · {}", mxn(m)))}
                                </p>
                                {a.provenance.map(|p| view! {
                                    <p class="select-all break-all text-xs text-slate-500 dark:text-slate-400" data-testid="award-provenance"
                                        title="Selecciona para copiar los identificadores del registro original">{p.line()}</p>
                                })}
                            </li>
                        }).collect_view()}
                    </ul>
                    {(shown > 10 || more > 0).then(|| view! {
                        <p class="text-xs text-slate-500 dark:text-slate-400">
                            {format!("Gráficas con las {shown} adjudicaciones más recientes de {}.", f.awards_count)}
                        </p>
                    })}
                }.into_any()
            }}
        </section>
        <section aria-labelledby="drawer-marks" class="space-y-2" data-testid="drawer-marks">
            <h3 id="drawer-marks" class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Marcas de riesgo"</h3>
            {if f.marks.is_empty() {
                view! { <p class="text-sm text-emerald-800 dark:text-emerald-300">"Sin marcas de riesgo registradas."</p> }.into_any()
            } else {
                view! {
                    <ul class="space-y-1 text-sm">
                        {f.marks.into_iter().map(|m| {
                            let tone = if m.adverse { "text-rose-800 dark:text-rose-300" } else { "text-slate-600 dark:text-slate-400" };
                            view! {
                                <li class=tone data-ref=m.reference>
                                    <span class="font-medium">{m.label}</span>
                                    " · "{m.source}
                                    {m.date.map(|d| format!(" · {}", date_es(&d)))}
                                    {(!m.adverse).then_some(" (ya no pesa en contra)")}
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
        <section aria-labelledby="drawer-permits" class="space-y-2">
            <h3 id="drawer-permits" class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Registros"</h3>
            {if f.permits.is_empty() {
                view! { <p class="text-sm text-slate-600 dark:text-slate-400">"Sin registros ni permisos conocidos."</p> }.into_any()
            } else {
                view! {
                    <ul class="space-y-1 text-sm">
                        {f.permits.into_iter().map(|p| view! {
                            <li data-ref=p.reference>
                                <span class="font-medium">{p.permit_type}</span>
                                {p.number.map(|n| format!(" {n}"))}
                                " · "{p.status}
                                {p.date.map(|d| format!(" · {}", date_es(&d)))}
                            </li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
        {(!f.crm.is_empty()).then(|| view! {
            <section aria-labelledby="drawer-crm" class="space-y-2" data-testid="drawer-crm">
                <h3 id="drawer-crm" class="text-sm font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">"Historial en tu CRM"</h3>
                {f.crm.into_iter().map(timeline).collect_view()}
            </section>
        })}
        <p class="text-xs text-slate-500 dark:text-slate-400">"Abrir un expediente cuenta 1 lectura y 1 crédito de inteligencia."</p>
    }
}

fn timeline(t: CrmTimeline) -> impl IntoView {
    view! {
        <div class="rounded-xl border border-slate-200 p-3 text-sm dark:border-slate-800">
            <p class="font-medium">{t.collection}" · "{t.stage}</p>
            <ol class="mt-2 space-y-1 text-xs text-slate-600 dark:text-slate-400">
                {t.entries.into_iter().map(|e| view! {
                    <li>{luna_protocol::evidence::date_from_ms(e.at)}" · "{e.who}": "{e.what}</li>
                }).collect_view()}
            </ol>
        </div>
    }
}
