//! Ajustes › «Cobertura de datos»: what market data Luna has — rows and date range per
//! kind, Proveedores and Adjudicaciones per state (all 32, those without data listed),
//! Licitaciones and Adjudicaciones per year, and how fresh each source is. The same
//! figures the `market_capabilities` tool gives Luna (`luna_protocol::coverage`).

use leptos::prelude::*;
use luna_protocol::coverage::{ago_es, Coverage};
use luna_protocol::evidence::{date_from_ms, mxn};

use crate::coverage_api::market_coverage;

#[component]
pub fn CoverageSection() -> impl IntoView {
    let data = crate::codec::resource(|| (), |_| market_coverage());
    view! {
        <section aria-labelledby="coverage-title" class="space-y-3" data-testid="coverage">
            <h2 id="coverage-title" class="text-lg font-medium">"Cobertura de datos"</h2>
            <Suspense fallback=|| view! { <p class="text-sm text-slate-500 dark:text-slate-400">"Cargando…"</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <p role="alert" class="text-sm">{e.message()}</p> }.into_any(),
                        Ok(c) => tables(c, now_ms()).into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

fn now_ms() -> i64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(feature = "hydrate"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default()
    }
}

/// «hace 3 días (02/12/2026)», or «nunca».
fn when(at: Option<i64>, now: i64) -> String {
    match at {
        Some(at) => format!("{} ({})", ago_es(at, now), date_from_ms(at)),
        None => "nunca".to_owned(),
    }
}

fn tables(c: Coverage, now: i64) -> impl IntoView {
    let th = "py-1 pr-3";
    let td = "py-1 pr-3";
    let tr = "border-t border-slate-200 dark:border-slate-800";
    let range = |f: &Option<String>, t: &Option<String>| match (f, t) {
        (Some(f), Some(t)) => format!("{f} a {t}"),
        _ => "—".to_owned(),
    };
    view! {
        <p class="text-sm text-slate-600 dark:text-slate-400" data-testid="coverage-summary">{c.summary.clone()}</p>
        <p class="text-sm" data-testid="coverage-last-import">"Última importación: " {when(c.last_import_at, now)}</p>
        <table class="w-full text-left text-sm" data-testid="coverage-kinds">
            <caption class="text-left font-medium">"Por tipo"</caption>
            <thead><tr><th class=th>"Tipo"</th><th class=th>"Registros"</th><th class=th>"Fechas"</th></tr></thead>
            <tbody>
                {c.kinds.iter().map(|k| view! {
                    <tr class=tr><td class=td>{k.label.clone()}</td><td class=td>{k.rows}</td><td class=td>{range(&k.date_from, &k.date_to)}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        <table class="w-full text-left text-sm" data-testid="coverage-years">
            <caption class="text-left font-medium">"Por año"</caption>
            <thead><tr><th class=th>"Año"</th><th class=th>"Licitaciones"</th><th class=th>"Adjudicaciones"</th><th class=th>"Monto adjudicado"</th></tr></thead>
            <tbody>
                {c.years.iter().map(|y| view! {
                    <tr class=tr><td class=td>{y.year.clone()}</td><td class=td>{y.opportunities}</td><td class=td>{y.awards}</td><td class=td>{mxn(y.awards_amount_mxn)}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        <table class="w-full text-left text-sm" data-testid="coverage-states">
            <caption class="text-left font-medium">{format!("Por estado ({} de 32 con datos)", c.states.len())}</caption>
            <thead><tr><th class=th>"Estado"</th><th class=th>"Proveedores"</th><th class=th>"Adjudicaciones"</th></tr></thead>
            <tbody>
                {c.states.iter().map(|s| view! {
                    <tr class=tr><td class=td>{s.state.clone()}</td><td class=td>{s.suppliers}</td><td class=td>{s.awards}</td></tr>
                }).collect_view()}
                {c.states_without_data.iter().map(|s| view! {
                    <tr class=tr><td class=td>{s.clone()}</td><td class=td colspan="2">"Sin datos"</td></tr>
                }).collect_view()}
            </tbody>
        </table>
        <table class="w-full text-left text-sm" data-testid="coverage-sources">
            <caption class="text-left font-medium">"Fuentes"</caption>
            <thead><tr><th class=th>"Fuente"</th><th class=th>"Importaciones"</th><th class=th>"Última importación"</th><th class=th>"Publicado hasta"</th></tr></thead>
            <tbody>
                {c.sources.iter().map(|s| view! {
                    <tr class=tr><td class=td>{s.label.clone()}</td><td class=td>{s.imports}</td><td class=td>{when(Some(s.last_import_at), now)}</td><td class=td>"—"</td></tr>
                }).collect_view()}
                {c.imports.iter().map(|f| view! {
                    <tr class=tr>
                        <td class=td>{f.publisher.clone().unwrap_or_else(|| f.source.clone())}</td>
                        <td class=td>{format!("{} archivos", f.files)}</td>
                        <td class=td>{when(f.last_import_at, now)}</td>
                        <td class=td>{f.newest_release.as_deref().map(|d| d.get(..10).unwrap_or(d).to_owned()).unwrap_or_else(|| "—".to_owned())}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        {c.last_sync.map(|s| view! {
            <p class="text-sm" data-testid="coverage-sync">
                {format!("Última sincronización: {} — {} archivos nuevos, {} ya importados, {} con error.",
                    when(s.finished_at.or(Some(s.started_at)), now), s.imported, s.already, s.failed)}
            </p>
        })}
    }
}
