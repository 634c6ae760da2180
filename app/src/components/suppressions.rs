//! Ajustes › «Correos excluidos»: the workspace's suppression list. Admins see who
//! never gets a sequence email again and why, exclude an address by hand, import a
//! CSV (`correo[,motivo[,nota]]`) and take an address off the list (audited).

use leptos::prelude::*;
use luna_protocol::evidence::date_from_ms;

use crate::suppressions_api::{list_suppressions, ImportReport, SuppressionView};

use super::Outcome;

#[component]
pub fn SuppressionsSection() -> impl IntoView {
    let (version, set_version) = signal(0u32);
    let list = crate::codec::resource(move || version.get(), |_| list_suppressions());
    let (email, set_email) = signal(String::new());
    let (reason, set_reason) = signal("manual".to_owned());
    let (note, set_note) = signal(String::new());
    let (csv, set_csv) = signal(String::new());
    let (status, set_status) = signal(None::<Result<String, String>>);

    let add = move |_| {
        let (e, r, n) = (
            email.get_untracked(),
            reason.get_untracked(),
            note.get_untracked(),
        );
        set_status.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let out = crate::suppressions_api::add_suppression(e, r, Some(n)).await;
            if out.is_ok() {
                set_email.set(String::new());
                set_note.set(String::new());
                set_version.update(|v| *v += 1);
            }
            set_status.set(Some(
                out.map(|added| {
                    if added {
                        "Correo excluido: no recibirá más correos de secuencias.".to_owned()
                    } else {
                        "Ese correo ya estaba excluido.".to_owned()
                    }
                })
                .map_err(|e| e.message()),
            ));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (e, r, n, set_version);
    };
    let import = move |_| {
        let text = csv.get_untracked();
        set_status.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let out = crate::suppressions_api::import_suppressions(text).await;
            if out.is_ok() {
                set_csv.set(String::new());
                set_version.update(|v| *v += 1);
            }
            set_status.set(Some(
                out.map(|r| import_summary(&r)).map_err(|e| e.message()),
            ));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (text, set_version);
    };
    let remove = move |address: String| {
        set_status.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let out = crate::suppressions_api::remove_suppression(address.clone()).await;
            if out.is_ok() {
                set_version.update(|v| *v += 1);
            }
            set_status.set(Some(
                out.map(|_| format!("{address} puede volver a recibir correos."))
                    .map_err(|e| e.message()),
            ));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (address, set_version);
    };

    let field = "rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950";
    view! {
        <section aria-labelledby="suppressions-title" class="space-y-3" data-testid="suppressions">
            <h2 id="suppressions-title" class="text-lg font-medium">"Correos excluidos"</h2>
            <p class="text-sm text-slate-600 dark:text-slate-400">
                "Nadie en esta lista recibe correos de secuencias: quien se dio de baja, cuyo correo rebotó o que se quejó, y quien excluyas a mano. Se revisa al autorizar cada paso y otra vez al enviarlo."
            </p>
            <div class="flex flex-wrap items-end gap-3 text-sm">
                <label class="flex flex-col">
                    "Correo"
                    <input type="email" data-testid="suppression-email" class=field
                        prop:value=email on:input=move |ev| set_email.set(event_target_value(&ev)) />
                </label>
                <label class="flex flex-col">
                    "Motivo"
                    <select data-testid="suppression-reason" class=field
                        on:change=move |ev| set_reason.set(event_target_value(&ev))>
                        <option value="manual" selected=true>"Exclusión manual"</option>
                        <option value="complained">"Se quejó"</option>
                        <option value="unsubscribed">"Pidió la baja"</option>
                    </select>
                </label>
                <label class="flex flex-col">
                    "Nota (opcional)"
                    <input type="text" maxlength="500" data-testid="suppression-note" class=field
                        prop:value=note on:input=move |ev| set_note.set(event_target_value(&ev)) />
                </label>
                <button type="button" data-testid="suppression-add" on:click=add
                    class="rounded-lg bg-indigo-600 px-4 py-2 text-white hover:bg-indigo-700">"Excluir"</button>
            </div>
            <label class="flex flex-col text-sm">
                "Importar CSV (una fila por correo: correo, motivo, nota)"
                <textarea rows="3" data-testid="suppression-csv" class=field
                    placeholder="correo,motivo,nota"
                    prop:value=csv on:input=move |ev| set_csv.set(event_target_value(&ev))></textarea>
            </label>
            <button type="button" data-testid="suppression-import" on:click=import
                class="rounded-lg border border-slate-300 px-4 py-2 text-sm hover:bg-slate-50 dark:border-slate-700 dark:hover:bg-slate-900">"Importar"</button>
            <Outcome status=status />
            <Suspense fallback=|| view! { <p class="text-sm text-slate-500 dark:text-slate-400">"Cargando…"</p> }>
                {move || Suspend::new(async move {
                    match list.await {
                        Err(e) => view! { <p role="alert" class="text-sm">{e.message()}</p> }.into_any(),
                        Ok(rows) if rows.is_empty() => view! {
                            <p class="text-sm text-slate-500 dark:text-slate-400">"Nadie está excluido todavía."</p>
                        }.into_any(),
                        Ok(rows) => view! {
                            <table class="w-full text-left text-sm" data-testid="suppression-list">
                                <thead><tr>
                                    <th class="py-1">"Correo"</th><th>"Motivo"</th><th>"Desde"</th><th><span class="sr-only">"Acciones"</span></th>
                                </tr></thead>
                                <tbody>
                                    {rows.into_iter().map(|s| row(s, remove)).collect_view()}
                                </tbody>
                            </table>
                        }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

fn row(s: SuppressionView, remove: impl Fn(String) + Copy + 'static) -> impl IntoView {
    let address = s.email.clone();
    let why = match &s.detail {
        Some(d) => format!("{} ({d})", s.label),
        None => s.label.clone(),
    };
    view! {
        <tr data-testid="suppression-row" class="border-t border-slate-200 dark:border-slate-800">
            <td class="py-1">{s.email.clone()}</td>
            <td>{why}</td>
            <td>{date_from_ms(s.created_at)}</td>
            <td>
                {if !s.removable {
                    view! {
                        <span class="text-sm text-slate-500" data-testid="suppression-by-recipient"
                            title="La pidió el destinatario: nadie del equipo puede quitarla">
                            "Del destinatario"
                        </span>
                    }.into_any()
                } else {
                    view! {
                        <button type="button" class="text-sm underline" data-testid="suppression-remove"
                            aria-label=format!("Quitar {} de la lista", s.email)
                            on:click=move |_| remove(address.clone())>"Quitar"</button>
                    }.into_any()
                }}
            </td>
        </tr>
    }
}

/// The sentence an import ends with.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))] // imports run in the browser only
fn import_summary(r: &ImportReport) -> String {
    let mut s = format!("Importados: {}. Ya estaban: {}.", r.added, r.already);
    if r.rejected_count > 0 {
        s.push_str(&format!(
            " Rechazados: {} — {}",
            r.rejected_count,
            r.rejected.join("; ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_says_what_it_added_and_why_rows_were_refused() {
        let r = ImportReport {
            added: 2,
            already: 1,
            rejected: vec!["Línea 3: no es un correo válido".into()],
            rejected_count: 1,
        };
        assert_eq!(
            import_summary(&r),
            "Importados: 2. Ya estaban: 1. Rechazados: 1 — Línea 3: no es un correo válido"
        );
    }
}
