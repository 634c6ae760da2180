//! Ajustes › «Perfil comercial»: what the team sells, the giros it sells to, its
//! territory, the government buyers it targets, a typical deal and whom not to look
//! for. Luna reads it in every turn and never asks what it already says.

use leptos::prelude::*;
use luna_protocol::session::CommercialProfile;

use super::Outcome;

/// "a, b, c" → ["a", "b", "c"] (empty items dropped; the server cleans the rest).
fn split_list(text: &str) -> Vec<String> {
    text.split([',', ';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The profile as the form sends it.
fn profile_from(
    oferta: String,
    giros: &str,
    estados: &str,
    compradores: &str,
    ticket: &str,
    exclusiones: String,
) -> Result<CommercialProfile, String> {
    let digits: String = ticket
        .chars()
        .filter(|c| !matches!(c, ',' | ' ' | '$'))
        .collect();
    let ticket_mxn = match digits.as_str() {
        "" => None,
        d => Some(d.parse::<u64>().map_err(|_| {
            "El ticket típico debe ser un monto en pesos, sin centavos.".to_owned()
        })?),
    };
    Ok(CommercialProfile {
        oferta,
        giros: split_list(giros),
        estados: split_list(estados),
        compradores: split_list(compradores),
        ticket_mxn,
        exclusiones,
    })
}

const INPUT: &str = "w-full rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950";

#[component]
pub fn ProfileSection() -> impl IntoView {
    let (oferta, set_oferta) = signal(String::new());
    let (giros, set_giros) = signal(String::new());
    let (estados, set_estados) = signal(String::new());
    let (compradores, set_compradores) = signal(String::new());
    let (ticket, set_ticket) = signal(String::new());
    let (exclusiones, set_exclusiones) = signal(String::new());
    let (status, set_status) = signal(None::<Result<String, String>>);
    let show = move |p: CommercialProfile| {
        set_oferta.set(p.oferta);
        set_giros.set(p.giros.join(", "));
        set_estados.set(p.estados.join(", "));
        set_compradores.set(p.compradores.join(", "));
        set_ticket.set(p.ticket_mxn.map(|t| t.to_string()).unwrap_or_default());
        set_exclusiones.set(p.exclusiones);
    };
    let loaded = crate::codec::resource(|| (), |_| crate::profile_api::get_commercial_profile());
    Effect::new(move |_| {
        if let Some(Ok(p)) = loaded.get() {
            show(p);
        }
    });
    let save = move |_| {
        set_status.set(None);
        let profile = match profile_from(
            oferta.get_untracked(),
            &giros.get_untracked(),
            &estados.get_untracked(),
            &compradores.get_untracked(),
            &ticket.get_untracked(),
            exclusiones.get_untracked(),
        ) {
            Ok(p) => p,
            Err(m) => return set_status.set(Some(Err(m))),
        };
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let r = crate::profile_api::set_commercial_profile(profile).await;
            set_status.set(Some(match r {
                Ok(stored) => {
                    show(stored);
                    Ok("Perfil guardado. Luna lo usará desde tu próximo mensaje.".to_owned())
                }
                Err(e) => Err(e.message()),
            }));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (profile, show);
    };
    view! {
        <section aria-labelledby="profile-title" class="space-y-3" data-testid="profile">
            <h2 id="profile-title" class="text-lg font-medium">"Perfil comercial"</h2>
            <p class="text-sm text-slate-600 dark:text-slate-400">
                "Lo que tu equipo vende y a quién. Luna lo lee en cada conversación y no vuelve a preguntar lo que aquí dice; lo que la persona pida en el chat manda sobre el perfil."
            </p>
            <label class="block text-sm">
                "Qué vende tu equipo"
                <textarea rows="2" data-testid="profile-oferta" class=INPUT
                    prop:value=oferta on:input=move |ev| set_oferta.set(event_target_value(&ev))></textarea>
            </label>
            <div class="grid gap-3 sm:grid-cols-2 text-sm">
                <label class="block">
                    "Giros de tus clientes (separados por comas)"
                    <input type="text" data-testid="profile-giros" class=INPUT
                        prop:value=giros on:input=move |ev| set_giros.set(event_target_value(&ev)) />
                </label>
                <label class="block">
                    "Territorio: estados (separados por comas)"
                    <input type="text" data-testid="profile-estados" class=INPUT placeholder="Jalisco, Guanajuato"
                        prop:value=estados on:input=move |ev| set_estados.set(event_target_value(&ev)) />
                </label>
                <label class="block">
                    "Compradores de gobierno que buscas"
                    <input type="text" data-testid="profile-compradores" class=INPUT placeholder="IMSS, CFE"
                        prop:value=compradores on:input=move |ev| set_compradores.set(event_target_value(&ev)) />
                </label>
                <label class="block">
                    "Ticket típico (MXN)"
                    <input type="text" inputmode="numeric" data-testid="profile-ticket" class=INPUT
                        prop:value=ticket on:input=move |ev| set_ticket.set(event_target_value(&ev)) />
                </label>
            </div>
            <label class="block text-sm">
                "A quién no buscar"
                <input type="text" data-testid="profile-exclusiones" class=INPUT
                    prop:value=exclusiones on:input=move |ev| set_exclusiones.set(event_target_value(&ev)) />
            </label>
            <button type="button" data-testid="profile-save"
                class="rounded-lg bg-indigo-600 px-4 py-2 text-white hover:bg-indigo-700"
                on:click=save>"Guardar perfil"</button>
            <Outcome status=status />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_reads_lists_and_a_peso_amount() {
        let p = profile_from(
            "Empaque".into(),
            "alimentos, bebidas,",
            "Jalisco; Guanajuato",
            "",
            "$250,000",
            String::new(),
        )
        .unwrap();
        assert_eq!(p.giros, vec!["alimentos", "bebidas"]);
        assert_eq!(p.estados, vec!["Jalisco", "Guanajuato"]);
        assert!(p.compradores.is_empty());
        assert_eq!(p.ticket_mxn, Some(250_000));
        assert!(profile_from(String::new(), "", "", "", "mucho", String::new()).is_err());
    }
}
