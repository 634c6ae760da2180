//! The saved collection on the board (CONTRACT §13): Tablero (kanban columns by stage,
//! cards moved by drag and drop or with the "Mover a…" select) or Tabla (sortable
//! columns). The records are read from the CRM and re-read whenever the session's
//! saved-list projection changes (Luna saved or moved something) or after a move.

use leptos::prelude::*;
use luna_protocol::crm::{sort_records, BoardRecord, CollectionBoard, SortKey};
use luna_protocol::evidence::date_from_ms;

use super::drawer::Drawer;
use super::live::Live;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Layout {
    Board,
    Table,
}

/// Moves one card; shared by drag and drop and the select.
#[derive(Clone, Copy)]
struct Mover {
    /// The session the board belongs to: its saved-list counts follow each move.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    session_id: RwSignal<Option<String>>,
    reload: RwSignal<u32>,
    error: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
    /// The last move, for its receipt and "deshacer": (title, stage, undo token).
    last: RwSignal<Option<(String, String, Option<String>)>>,
}

impl Mover {
    fn run(self, record: &BoardRecord, stage: String) {
        if stage == record.stage || self.busy.get_untracked() {
            return;
        }
        self.busy.set(true);
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        {
            let (record_ref, version) = (record.record_ref.clone(), record.version);
            let title = record.title.clone();
            let session_id = self.session_id.get_untracked();
            leptos::task::spawn_local(async move {
                match crate::board_api::move_record(session_id, record_ref, version, stage).await {
                    Ok(moved) => self.last.set(Some((title, moved.stage, moved.undo_token))),
                    Err(e) => self.error.set(Some(e.message())),
                }
                self.busy.set(false);
                self.reload.update(|n| *n += 1);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (record, stage);
    }

    /// "deshacer" on the last move.
    fn undo(self, token: String) {
        self.busy.set(true);
        self.error.set(None);
        #[cfg(feature = "hydrate")]
        let session_id = self.session_id.get_untracked();
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            match crate::board_api::undo_write(session_id, token).await {
                Ok(_) => self.last.set(None),
                Err(e) => self.error.set(Some(e.message())),
            }
            self.busy.set(false);
            self.reload.update(|n| *n += 1);
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = token;
    }
}

/// The saved list as Tablero or Tabla. Split out of the main wasm: fetched once the
/// session has a saved list.
#[leptos::lazy]
pub fn saved_collection(collection_id: String) -> AnyView {
    view! { <SavedCollectionView collection_id /> }.into_any()
}

#[component]
fn SavedCollectionView(collection_id: String) -> impl IntoView {
    let live = expect_context::<Live>();
    let layout = RwSignal::new(Layout::Board);
    let mover = Mover {
        session_id: live.session_id,
        reload: RwSignal::new(0),
        error: RwSignal::new(None),
        busy: RwSignal::new(false),
        last: RwSignal::new(None),
    };
    // Re-read when the log's saved list changes (Luna saved or moved records).
    let saved = Memo::new(move |_| live.replica.with(|r| r.view.board.saved.clone()));
    let id = StoredValue::new(collection_id);
    let board = LocalResource::new(move || {
        saved.track();
        mover.reload.track();
        let id = id.get_value();
        async move { crate::board_api::read_collection_board(id).await }
    });

    let toggle = move |which: Layout, label: &'static str, testid: &'static str| {
        view! {
            <button
                type="button"
                data-testid=testid
                aria-pressed=move || (layout.get() == which).to_string()
                class=move || {
                    let base = "rounded-md px-3 py-1 text-sm focus-visible:outline-2 focus-visible:outline-indigo-500";
                    if layout.get() == which {
                        format!("{base} bg-white font-medium shadow-sm dark:bg-slate-700")
                    } else {
                        format!("{base} text-slate-600 dark:text-slate-300")
                    }
                }
                on:click=move |_| layout.set(which)
            >
                {label}
            </button>
        }
    };

    view! {
        <div class="space-y-3" data-testid="saved-collection">
            <div role="group" aria-label="Vista de la lista" class="inline-flex rounded-lg bg-slate-100 p-0.5 dark:bg-slate-800">
                {toggle(Layout::Board, "Tablero", "view-board")}
                {toggle(Layout::Table, "Tabla", "view-table")}
            </div>
            <p role="alert" class="text-sm text-rose-700 dark:text-rose-300" data-testid="move-error">{move || mover.error.get()}</p>
            {move || mover.last.get().map(|(title, stage, token)| view! {
                <p role="status" class="flex flex-wrap items-center gap-2 text-sm text-slate-700 dark:text-slate-300" data-testid="move-receipt">
                    {format!("«{title}» pasó a {stage}.")}
                    {token.map(|t| view! {
                        <button
                            type="button"
                            data-testid="move-undo"
                            class="rounded-md px-2 text-xs underline hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:hover:bg-slate-800"
                            disabled=move || mover.busy.get()
                            on:click=move |_| mover.undo(t.clone())
                        >
                            "deshacer"
                        </button>
                    })}
                </p>
            })}
            <Transition fallback=|| view! { <p class="text-sm text-slate-500 dark:text-slate-400" role="status">"Cargando la lista…"</p> }>
                {move || board.get().map(|res| match res {
                    Ok(b) => match layout.get() {
                        Layout::Board => kanban(b, mover).into_any(),
                        Layout::Table => view! { <RecordTable board=b /> }.into_any(),
                    },
                    Err(e) => view! { <p role="alert" class="text-sm text-rose-700 dark:text-rose-300">{e.message()}</p> }.into_any(),
                })}
            </Transition>
        </div>
    }
}

fn kanban(board: CollectionBoard, mover: Mover) -> impl IntoView {
    let dragging = RwSignal::new(None::<BoardRecord>);
    let over = RwSignal::new(None::<String>);
    let stages = board.stages.clone();
    let truncated = board.truncated;
    view! {
        <div class="relative flex gap-3 overflow-x-auto pb-2" data-testid="kanban">
            {stages.iter().map(|stage| {
                let stage = stage.to_owned();
                let cards: Vec<BoardRecord> = board.in_stage(&stage).cloned().collect();
                let count = cards.len();
                let all_stages = stages.clone();
                let drop_stage = stage.clone();
                let over_stage = stage.clone();
                let is_over = {
                    let stage = stage.clone();
                    move || over.with(|o| o.as_deref() == Some(stage.as_str()))
                };
                view! {
                    <section
                        aria-label=format!("{stage} · {count}")
                        data-testid="kanban-column"
                        data-stage=stage.clone()
                        class=move || format!(
                            "flex w-56 shrink-0 flex-col gap-2 rounded-xl p-2 {}",
                            if is_over() { "bg-indigo-50 ring-2 ring-indigo-400 dark:bg-indigo-950" } else { "bg-slate-50 dark:bg-slate-950" }
                        )
                        on:dragover=move |ev| {
                            ev.prevent_default();
                            over.set(Some(over_stage.clone()));
                        }
                        on:dragleave=move |_| over.set(None)
                        on:drop=move |ev| {
                            ev.prevent_default();
                            over.set(None);
                            if let Some(record) = dragging.get_untracked() {
                                mover.run(&record, drop_stage.clone());
                            }
                            dragging.set(None);
                        }
                    >
                        <h3 class="px-1 text-xs font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">
                            {stage.clone()}" · "<span data-testid="kanban-count">{count}</span>
                        </h3>
                        <ul class="flex flex-col gap-2">
                            {cards.into_iter().map(|r| kanban_card(r, all_stages.clone(), mover, dragging)).collect_view()}
                        </ul>
                    </section>
                }
            }).collect_view()}
        </div>
        {truncated.then(|| view! { <p class="text-xs text-slate-500 dark:text-slate-400">"Se muestran los primeros 200 registros."</p> })}
    }
}

fn kanban_card(
    record: BoardRecord,
    stages: Vec<String>,
    mover: Mover,
    dragging: RwSignal<Option<BoardRecord>>,
) -> impl IntoView {
    let drawer = expect_context::<Drawer>();
    let select_id = format!("move-{}", record.record_ref.replace(':', "-"));
    let for_drag = record.clone();
    let for_select = StoredValue::new(record.clone());
    let company = record.company_ref.clone();
    let title = record.title.clone();
    view! {
        <li
            draggable="true"
            data-testid="kanban-card"
            data-record=record.record_ref.clone()
            class="cursor-grab rounded-lg border border-slate-200 bg-white p-2 text-sm shadow-sm active:cursor-grabbing dark:border-slate-700 dark:bg-slate-900"
            on:dragstart=move |ev| {
                // Firefox only starts a drag that carries data. Reached through
                // `Reflect` rather than web-sys's `DataTransfer` feature, which would
                // rebuild the whole wasm dependency tree for one call.
                #[cfg(feature = "hydrate")]
                {
                    use wasm_bindgen::{JsCast, JsValue};
                    if let Ok(dt) = js_sys::Reflect::get(&ev, &JsValue::from_str("dataTransfer")) {
                        if let Ok(set) = js_sys::Reflect::get(&dt, &JsValue::from_str("setData"))
                            .and_then(|f| f.dyn_into::<js_sys::Function>())
                        {
                            let _ = set.call2(
                                &dt,
                                &JsValue::from_str("text/plain"),
                                &JsValue::from_str(&for_drag.record_ref),
                            );
                        }
                    }
                }
                #[cfg(not(feature = "hydrate"))]
                let _ = &ev;
                dragging.set(Some(for_drag.clone()));
            }
            on:dragend=move |_| dragging.set(None)
        >
            {match company {
                Some(c) => view! {
                    <button
                        type="button"
                        class="text-left font-medium hover:underline focus-visible:outline-2 focus-visible:outline-indigo-500"
                        data-open-ref=c.clone()
                        on:click=move |_| drawer.show(c.clone())
                    >
                        {title.clone()}
                    </button>
                }.into_any(),
                None => view! { <p class="font-medium">{title.clone()}</p> }.into_any(),
            }}
            <label for=select_id.clone() class="sr-only">{format!("Mover «{}» a", record.title)}</label>
            <select
                id=select_id
                data-testid="kanban-move"
                class="mt-1 w-full rounded-md border border-slate-300 bg-white px-1 py-0.5 text-xs dark:border-slate-700 dark:bg-slate-950"
                disabled=move || mover.busy.get()
                on:change=move |ev| {
                    let stage = event_target_value(&ev);
                    if !stage.is_empty() {
                        mover.run(&for_select.get_value(), stage);
                    }
                }
            >
                <option value="" selected=true>"Mover a…"</option>
                {stages.into_iter().filter(|s| *s != record.stage).map(|s| view! { <option value=s.clone()>{s.clone()}</option> }).collect_view()}
            </select>
        </li>
    }
}

#[component]
fn RecordTable(board: CollectionBoard) -> impl IntoView {
    let drawer = expect_context::<Drawer>();
    let sort = RwSignal::new((SortKey::Stage, false));
    let board = StoredValue::new(board);
    let rows = move || {
        let (key, desc) = sort.get();
        board.with_value(|b| sort_records(b, key, desc))
    };
    let header = move |key: SortKey, label: String| {
        let aria = move || match sort.get() {
            (k, false) if k == key => "ascending",
            (k, true) if k == key => "descending",
            _ => "none",
        };
        view! {
            <th scope="col" aria-sort=aria class="px-2 py-1 text-left font-medium">
                <button
                    type="button"
                    class="hover:underline focus-visible:outline-2 focus-visible:outline-indigo-500"
                    on:click=move |_| sort.update(|(k, d)| {
                        if *k == key { *d = !*d } else { *k = key; *d = false }
                    })
                >
                    {label}
                    <span aria-hidden="true">{move || match aria() { "ascending" => " ▲", "descending" => " ▼", _ => "" }}</span>
                </button>
            </th>
        }
    };
    let columns = board.with_value(|b| b.columns.clone());
    view! {
        <div class="relative overflow-x-auto">
            <table class="w-full text-sm" data-testid="record-table">
                <thead class="border-b border-slate-200 text-xs text-slate-600 dark:border-slate-800 dark:text-slate-400">
                    <tr>
                        {header(SortKey::Title, "Empresa".into())}
                        {header(SortKey::Stage, "Etapa".into())}
                        {header(SortKey::Updated, "Actualizado".into())}
                        {columns.iter().enumerate().map(|(i, c)| header(SortKey::Column(i), c.label.clone())).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {move || rows().into_iter().map(|r| {
                        let company = r.company_ref.clone();
                        view! {
                            <tr class="border-b border-slate-100 dark:border-slate-800" data-testid="table-row">
                                <td class="px-2 py-1">
                                    {match company {
                                        Some(c) => view! {
                                            <button type="button" class="text-left hover:underline" data-open-ref=c.clone() on:click=move |_| drawer.show(c.clone())>{r.title.clone()}</button>
                                        }.into_any(),
                                        None => r.title.clone().into_any(),
                                    }}
                                </td>
                                <td class="px-2 py-1">{r.stage.clone()}</td>
                                <td class="px-2 py-1 whitespace-nowrap">{date_from_ms(r.updated_at)}</td>
                                {r.values.iter().map(|v| view! { <td class="px-2 py-1">{v.clone()}</td> }).collect_view()}
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
