//! The checkboxes of decision kinds that may run without a card: the same list in the
//! session's "Ajuste fino" panel (what the workspace allows) and in Ajustes (the
//! workspace policy, every auto-capable kind).

use leptos::prelude::*;
use luna_protocol::decision::DecisionKind;

/// One checkbox per kind in `kinds`; ticking one adds it to `chosen`.
#[component]
pub fn KindChecks(
    /// The kinds offered.
    #[prop(into)]
    kinds: Signal<Vec<DecisionKind>>,
    chosen: ReadSignal<Vec<DecisionKind>>,
    set_chosen: WriteSignal<Vec<DecisionKind>>,
    legend: &'static str,
    /// Classes of the fieldset, the legend and each label.
    fieldset_class: &'static str,
    legend_class: &'static str,
    label_class: &'static str,
) -> impl IntoView {
    view! {
        <fieldset class=fieldset_class>
            <legend class=legend_class>{legend}</legend>
            {move || kinds.get().into_iter().map(|k| view! {
                <label class=label_class>
                    <input type="checkbox" data-kind=k.as_str()
                        prop:checked=move || chosen.with(|c| c.contains(&k))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            set_chosen.update(|c| {
                                c.retain(|x| *x != k);
                                if on { c.push(k); }
                            });
                        } />
                    {k.label()}
                </label>
            }).collect_view()}
        </fieldset>
    }
}
