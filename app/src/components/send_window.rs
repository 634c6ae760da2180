//! Ajustes › «Horario de envío»: the days and hours sequence steps go out (in each
//! recipient's local time), the most steps one sender mailbox sends a day, and the
//! workspace's zone for recipients whose state is unknown. Admins save it; the
//! server refuses bad input with a Spanish message shown by `Outcome`.

use leptos::prelude::*;

use crate::send_window_api::SendWindowView;

use super::Outcome;

/// Spanish weekday names, 1 = lunes.
pub const WEEKDAYS: [(u8, &str); 7] = [
    (1, "Lunes"),
    (2, "Martes"),
    (3, "Miércoles"),
    (4, "Jueves"),
    (5, "Viernes"),
    (6, "Sábado"),
    (7, "Domingo"),
];

/// Hours as a select shows them: 9 → «09:00».
pub fn hour_label(h: u32) -> String {
    format!("{h:02}:00")
}

#[component]
pub fn SendWindowSection() -> impl IntoView {
    let (days, set_days) = signal(Vec::<u8>::new());
    let (start, set_start) = signal(String::new());
    let (end, set_end) = signal(String::new());
    let (cap, set_cap) = signal(String::new());
    let (zone, set_zone) = signal(String::new());
    let (status, set_status) = signal(None::<Result<String, String>>);
    let loaded = crate::codec::resource(|| (), |_| crate::send_window_api::send_window());
    let zones = crate::codec::resource(|| (), |_| crate::send_window_api::send_window_zones());
    Effect::new(move |_| {
        if let Some(Ok(w)) = loaded.get() {
            set_days.set(w.days);
            set_start.set(w.start_hour.to_string());
            set_end.set(w.end_hour.to_string());
            set_cap.set(w.daily_cap.to_string());
            set_zone.set(w.time_zone);
        }
    });
    let save = move |_| {
        // Unparsable numbers go to the server as out of range and come back as its
        // typed, Spanish refusal.
        let window = SendWindowView {
            days: days.get_untracked(),
            start_hour: start.get_untracked().trim().parse().unwrap_or(u32::MAX),
            end_hour: end.get_untracked().trim().parse().unwrap_or(u32::MAX),
            daily_cap: cap.get_untracked().trim().parse().unwrap_or(0),
            time_zone: zone.get_untracked(),
        };
        set_status.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let r = crate::send_window_api::set_send_window(window).await;
            set_status.set(Some(
                r.map(|_| "Horario de envío guardado.".to_owned())
                    .map_err(|e| e.message()),
            ));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = window;
    };
    let field = "rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950";
    view! {
        <section aria-labelledby="window-title" class="space-y-3" data-testid="send-window">
            <h2 id="window-title" class="text-lg font-medium">"Horario de envío"</h2>
            <p class="text-sm text-slate-600 dark:text-slate-400">
                "Los pasos de una secuencia salen solo en estos días y horas, en la hora local de cada destinatario (según el estado de su empresa). Lo que toque fuera del horario, o pase del tope diario, sale en la siguiente apertura."
            </p>
            <fieldset class="flex flex-wrap gap-3 text-sm">
                <legend class="mb-1 font-medium">"Días de envío"</legend>
                {WEEKDAYS.into_iter().map(|(d, name)| view! {
                    <label class="flex items-center gap-1">
                        <input type="checkbox" data-testid=format!("window-day-{d}")
                            prop:checked=move || days.with(|ds| ds.contains(&d))
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                set_days.update(|ds| {
                                    ds.retain(|x| *x != d);
                                    if on {
                                        ds.push(d);
                                        ds.sort_unstable();
                                    }
                                });
                            } />
                        {name}
                    </label>
                }).collect_view()}
            </fieldset>
            <div class="flex flex-wrap gap-4 text-sm">
                <label class="flex flex-col">
                    "Desde"
                    <select data-testid="window-start" class=field
                        prop:value=start on:change=move |ev| set_start.set(event_target_value(&ev))>
                        {(0..24u32).map(|h| view! { <option value=h.to_string()>{hour_label(h)}</option> }).collect_view()}
                    </select>
                </label>
                <label class="flex flex-col">
                    "Hasta"
                    <select data-testid="window-end" class=field
                        prop:value=end on:change=move |ev| set_end.set(event_target_value(&ev))>
                        {(1..=24u32).map(|h| view! { <option value=h.to_string()>{hour_label(h)}</option> }).collect_view()}
                    </select>
                </label>
                <label class="flex flex-col">
                    "Tope diario por buzón"
                    <input type="number" min="1" data-testid="window-cap" class=format!("w-32 {field}")
                        prop:value=cap on:input=move |ev| set_cap.set(event_target_value(&ev)) />
                </label>
                <label class="flex flex-col">
                    "Zona del espacio de trabajo"
                    <select data-testid="window-zone" class=field
                        prop:value=zone on:change=move |ev| set_zone.set(event_target_value(&ev))>
                        {move || zones.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|z| {
                            let id = z.id.clone();
                            view! { <option value=z.id selected=move || zone.get() == id>{z.label}</option> }
                        }).collect_view()}
                    </select>
                </label>
            </div>
            <p class="text-xs text-slate-500 dark:text-slate-400">
                "La zona del espacio de trabajo se usa para quien no tiene estado conocido y para contar el tope de cada día."
            </p>
            <button type="button" data-testid="window-save"
                class="rounded-lg bg-indigo-600 px-4 py-2 text-white hover:bg-indigo-700"
                on:click=save>"Guardar horario"</button>
            <Outcome status=status />
        </section>
    }
}
