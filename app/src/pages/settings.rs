//! The admin settings page: commercial profile, auto-mode policy, the sending window,
//! excluded email addresses, members and MCP API keys.
//! Owners and admins only: anyone else gets a 403 page.

use leptos::prelude::*;
use leptos_meta::Title;

use luna_protocol::account::ApiScope;
use luna_protocol::evidence::date_from_ms;

use crate::api::{settings, ApiKeyView, CreateApiKey, MemberView, RevokeApiKey};
use crate::components::coverage::CoverageSection;
use crate::components::kind_checks::KindChecks;
use crate::components::profile::ProfileSection;
use crate::components::send_window::SendWindowSection;
use crate::components::suppressions::SuppressionsSection;
use crate::components::{Forbidden, Outcome, TopBar};

#[component]
pub fn SettingsPage() -> impl IntoView {
    let create = ServerAction::<CreateApiKey>::new();
    let revoke = ServerAction::<RevokeApiKey>::new();
    let data = crate::codec::resource(
        move || (create.version().get(), revoke.version().get()),
        |_| settings(),
    );
    let new_secret = move || create.value().get().and_then(|r| r.ok());
    let create_error = move || {
        create
            .value()
            .get()
            .and_then(|r| r.err())
            .map(|e| e.message())
    };

    view! {
        <Title text="Ajustes · Luna" />
        <div class="flex min-h-screen flex-col">
            <TopBar />
            <main class="mx-auto w-full max-w-3xl space-y-8 p-4 md:p-8">
                <h1 class="text-2xl font-semibold">"Ajustes del espacio de trabajo"</h1>
                <Suspense fallback=|| view! { <p class="text-slate-500 dark:text-slate-400">"Cargando…"</p> }>
                    {move || Suspend::new(async move {
                        match data.await {
                            Err(e) => view! { <Forbidden message=e.message() /> }.into_any(),
                            Ok(view) => view! {
                                <ProfileSection />
                                <AutoPolicySection />
                                <SendWindowSection />
                                <SuppressionsSection />
                                <CoverageSection />
                                <section aria-labelledby="members-title" class="space-y-2">
                                    <h2 id="members-title" class="text-lg font-medium">"Miembros de " {view.workspace_name.clone()}</h2>
                                    <ul class="divide-y divide-slate-200 rounded-xl border border-slate-200 dark:divide-slate-800 dark:border-slate-800">
                                        {view.members.into_iter().map(|m| view! { <MemberRow member=m /> }).collect_view()}
                                    </ul>
                                </section>
                                <section aria-labelledby="keys-title" class="space-y-3">
                                    <h2 id="keys-title" class="text-lg font-medium">"Llaves de API (MCP)"</h2>
                                    <p class="text-sm text-slate-600 dark:text-slate-400">
                                        "Los agentes externos usan estas llaves para llamar las herramientas de Luna por MCP. Una llave solo lee, salvo los permisos que marques; fusionar conocimiento siempre lo hace una persona aquí."
                                    </p>
                                    <ActionForm action=create attr:class="space-y-3" attr:data-testid="key-form">
                                        <div class="flex gap-2">
                                            <label class="sr-only" for="key-name">"Nombre de la llave"</label>
                                            <input id="key-name" name="name" required placeholder="Nombre, p. ej. «Agente de prospección»"
                                                class="flex-1 rounded-lg border border-slate-300 bg-white px-3 py-2 dark:border-slate-700 dark:bg-slate-950" />
                                            <button type="submit" class="rounded-lg bg-indigo-600 px-4 py-2 text-white hover:bg-indigo-700">"Crear llave"</button>
                                        </div>
                                        <fieldset class="space-y-1 text-sm">
                                            <legend class="font-medium">"Permisos además de leer"</legend>
                                            {ApiScope::ALL.into_iter().map(|s| view! {
                                                <label class="flex items-center gap-2">
                                                    <input type="checkbox" name=s.as_str().replace(':', "_") value="1" />
                                                    {s.label()}" "<code class="text-xs text-slate-500 dark:text-slate-400">{s.as_str()}</code>
                                                </label>
                                            }).collect_view()}
                                        </fieldset>
                                        <div class="flex flex-wrap gap-4 text-sm">
                                            <label class="flex flex-col">
                                                "Tope de créditos al mes (opcional)"
                                                <input type="number" min="0" name="budget" data-testid="key-budget"
                                                    class="w-40 rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950" />
                                            </label>
                                            <label class="flex flex-col">
                                                "Vale hasta (opcional)"
                                                <input type="date" name="expires" data-testid="key-expires"
                                                    class="w-44 rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950" />
                                            </label>
                                        </div>
                                    </ActionForm>
                                    {move || new_secret().map(|s| view! {
                                        <p role="status" class="rounded-lg bg-emerald-50 p-3 text-sm text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100">
                                            "Copia la llave ahora; no se volverá a mostrar: " <code class="break-all font-mono">{s}</code>
                                        </p>
                                    })}
                                    {move || create_error().map(|m| view! { <p role="alert" class="text-sm text-rose-700 dark:text-rose-300">{m}</p> })}
                                    {if view.api_keys.is_empty() {
                                        view! { <p class="text-sm text-slate-500 dark:text-slate-400">"Aún no hay llaves."</p> }.into_any()
                                    } else {
                                        view! {
                                            <ul class="divide-y divide-slate-200 rounded-xl border border-slate-200 dark:divide-slate-800 dark:border-slate-800">
                                                {view.api_keys.into_iter().map(|k| {
                                                    let id = k.id.clone();
                                                    let facts = key_facts(&k);
                                                    view! {
                                                        <li class="flex flex-wrap items-center justify-between gap-2 px-4 py-2" data-testid="key-row">
                                                            <div>
                                                                <span>{k.name}" "<code class="text-sm text-slate-500 dark:text-slate-400">{k.prefix}"…"</code></span>
                                                                <ul class="text-xs text-slate-600 dark:text-slate-400">
                                                                    {facts.into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}
                                                                </ul>
                                                            </div>
                                                            {if k.revoked {
                                                                view! { <span class="text-sm text-slate-500 dark:text-slate-400">"Revocada"</span> }.into_any()
                                                            } else {
                                                                view! {
                                                                    <ActionForm action=revoke>
                                                                        <input type="hidden" name="id" value=id />
                                                                        <button type="submit" class="text-sm text-rose-700 underline dark:text-rose-300">"Revocar"</button>
                                                                    </ActionForm>
                                                                }.into_any()
                                                            }}
                                                        </li>
                                                    }
                                                }).collect_view()}
                                            </ul>
                                        }.into_any()
                                    }}
                                </section>
                            }.into_any(),
                        }
                    })}
                </Suspense>
            </main>
        </div>
    }
}

/// The date in central Mexico (UTC−6) of a Unix ms instant.
fn mx_date(ms: i64) -> String {
    date_from_ms(ms - 6 * 3_600_000)
}

/// What Ajustes says about a key: scopes, budget and spend, expiry and last use.
fn key_facts(k: &ApiKeyView) -> Vec<String> {
    let scopes = if k.scopes.is_empty() {
        "Permisos: solo lectura".to_owned()
    } else {
        format!("Permisos: lectura, {}", k.scopes.join(", "))
    };
    let budget = match k.credit_budget {
        Some(b) => format!("Gastado este mes: {} de {b} créditos", k.spent),
        None => format!("Gastado este mes: {} créditos (sin tope)", k.spent),
    };
    let expiry = match k.expires_at {
        // The key works through the day before the instant it expires.
        Some(at) if k.expired => format!("Venció el {}", mx_date(at - 1)),
        Some(at) => format!("Vale hasta el {}", mx_date(at - 1)),
        None => "Sin vencimiento".to_owned(),
    };
    let used = match k.last_used_at {
        Some(at) => format!("Último uso: {}", mx_date(at)),
        None => "Sin usar todavía".to_owned(),
    };
    vec![scopes, budget, expiry, used]
}

/// The workspace's auto-mode policy: allowed or not, default caps per session, the
/// ceilings no member's session budget may pass, and
/// which decision classes may run without a card. Saved on the server (audited).
#[component]
fn AutoPolicySection() -> impl IntoView {
    use luna_protocol::decision::DecisionKind;
    use luna_protocol::session::AutoPolicy;

    let (allowed, set_allowed) = signal(true);
    let (credits, set_credits) = signal(String::new());
    let (contacts, set_contacts) = signal(String::new());
    let (max_credits, set_max_credits) = signal(String::new());
    let (max_contacts, set_max_contacts) = signal(String::new());
    let (classes, set_classes) = signal(Vec::<DecisionKind>::new());
    let (status, set_status) = signal(None::<Result<String, String>>);
    let loaded = crate::codec::resource(|| (), |_| crate::decisions_api::workspace_auto_policy());
    Effect::new(move |_| {
        if let Some(Ok(p)) = loaded.get() {
            set_allowed.set(p.allowed);
            set_credits.set(p.default_credit_cap.to_string());
            set_contacts.set(p.default_contact_cap.to_string());
            set_max_credits.set(p.max_credit_cap.to_string());
            set_max_contacts.set(p.max_contact_cap.to_string());
            set_classes.set(p.classes);
        }
    });
    let save = move |_| {
        let policy = AutoPolicy {
            allowed: allowed.get_untracked(),
            default_credit_cap: credits.get_untracked().trim().parse().unwrap_or(0),
            default_contact_cap: contacts.get_untracked().trim().parse().unwrap_or(0),
            max_credit_cap: max_credits.get_untracked().trim().parse().unwrap_or(0),
            max_contact_cap: max_contacts.get_untracked().trim().parse().unwrap_or(0),
            classes: classes.get_untracked(),
        };
        set_status.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let r = crate::decisions_api::set_auto_policy(policy).await;
            set_status.set(Some(
                r.map(|_| "Política guardada.".to_owned())
                    .map_err(|e| e.message()),
            ));
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = policy;
    };
    view! {
        <section aria-labelledby="auto-title" class="space-y-3" data-testid="auto-policy">
            <h2 id="auto-title" class="text-lg font-medium">"Modo automático"</h2>
            <p class="text-sm text-slate-600 dark:text-slate-400">
                "El presupuesto que Luna puede gastar sin preguntar en cada sesión, y qué acciones pueden correr en automático. Enviar correos y fusionar conocimiento siempre piden una decisión."
            </p>
            <label class="flex items-center gap-2 text-sm">
                <input type="checkbox" data-testid="auto-allowed" prop:checked=allowed
                    on:change=move |ev| set_allowed.set(event_target_checked(&ev)) />
                "Permitir el modo automático en este espacio de trabajo"
            </label>
            <div class="flex flex-wrap gap-4 text-sm">
                <label class="flex flex-col">
                    "Tope de créditos por sesión"
                    <input type="number" min="0" data-testid="policy-credit-cap"
                        class="w-32 rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950"
                        prop:value=credits on:input=move |ev| set_credits.set(event_target_value(&ev)) />
                </label>
                <label class="flex flex-col">
                    "Tope de contactos por sesión"
                    <input type="number" min="0" data-testid="policy-contact-cap"
                        class="w-32 rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950"
                        prop:value=contacts on:input=move |ev| set_contacts.set(event_target_value(&ev)) />
                </label>
                <label class="flex flex-col">
                    "Máximo de créditos por sesión"
                    <input type="number" min="0" data-testid="policy-max-credit-cap"
                        class="w-32 rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950"
                        prop:value=max_credits on:input=move |ev| set_max_credits.set(event_target_value(&ev)) />
                </label>
                <label class="flex flex-col">
                    "Máximo de contactos por sesión"
                    <input type="number" min="0" data-testid="policy-max-contact-cap"
                        class="w-32 rounded-lg border border-slate-300 bg-white px-3 py-1.5 dark:border-slate-700 dark:bg-slate-950"
                        prop:value=max_contacts on:input=move |ev| set_max_contacts.set(event_target_value(&ev)) />
                </label>
            </div>
            <p class="text-xs text-slate-500 dark:text-slate-400">
                "Los topes son el presupuesto con que empieza cada sesión; los máximos, lo más que un miembro puede fijar."
            </p>
            <KindChecks
                kinds=Signal::derive(|| DecisionKind::ALL.into_iter().filter(|k| k.auto_capable()).collect::<Vec<_>>())
                chosen=classes
                set_chosen=set_classes
                legend="Acciones que pueden correr en automático"
                fieldset_class="space-y-1 text-sm"
                legend_class="font-medium"
                label_class="flex items-center gap-2"
            />
            <button type="button" data-testid="policy-save"
                class="rounded-lg bg-indigo-600 px-4 py-2 text-white hover:bg-indigo-700"
                on:click=save>"Guardar política"</button>
            <Outcome status=status />
        </section>
    }
}

/// One member: name, email and role; owners and admins switch others between
/// Miembro and Administrador (the owner's and one's own role stay as they are).
#[component]
fn MemberRow(member: MemberView) -> impl IntoView {
    use luna_protocol::account::Role;

    let editable = member.role != Role::Owner && !member.you;
    let (role, set_role) = signal(member.role);
    let (error, set_error) = signal(None::<String>);
    let user_id = StoredValue::new(member.user_id.clone());
    let change = move |value: String| {
        let Some(next) = Role::parse(&value) else {
            return;
        };
        let previous = role.get_untracked();
        set_role.set(next);
        set_error.set(None);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Err(e) = crate::api::set_member_role(user_id.get_value(), next).await {
                set_role.set(previous);
                set_error.set(Some(e.message()));
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (previous, user_id);
    };
    let label = format!("Rol de {}", member.display_name);
    view! {
        <li class="flex flex-wrap items-center justify-between gap-2 px-4 py-2" data-testid="member-row">
            <span>{member.display_name}" "<span class="text-sm text-slate-500 dark:text-slate-400">{member.email}</span></span>
            {if editable {
                view! {
                    <select aria-label=label class="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm dark:border-slate-700 dark:bg-slate-950"
                        prop:value=move || role.get().as_str()
                        on:change=move |ev| change(event_target_value(&ev))>
                        <option value="member">{Role::Member.label()}</option>
                        <option value="admin">{Role::Admin.label()}</option>
                    </select>
                }.into_any()
            } else {
                view! { <span class="text-sm">{member.role.label()}</span> }.into_any()
            }}
            {move || error.get().map(|e| view! { <p role="alert" class="w-full text-sm text-rose-700 dark:text-rose-300">{e}</p> })}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ApiKeyView {
        ApiKeyView {
            id: "k".into(),
            name: "Agente".into(),
            prefix: "luna_ab".into(),
            revoked: false,
            scopes: Vec::new(),
            credit_budget: None,
            spent: 0,
            expires_at: None,
            expired: false,
            last_used_at: None,
        }
    }

    #[test]
    fn a_key_shows_its_scopes_budget_expiry_and_last_use() {
        assert_eq!(
            key_facts(&key()),
            [
                "Permisos: solo lectura",
                "Gastado este mes: 0 créditos (sin tope)",
                "Sin vencimiento",
                "Sin usar todavía"
            ]
        );
        let k = ApiKeyView {
            scopes: vec!["revelar contactos (contacts:reveal)".into()],
            credit_budget: Some(100),
            spent: 3,
            // Works through 31 dic 2026 in central Mexico.
            expires_at: Some(1_798_783_200_000),
            last_used_at: Some(1_798_700_000_000),
            ..key()
        };
        assert_eq!(
            key_facts(&k),
            [
                "Permisos: lectura, revelar contactos (contacts:reveal)",
                "Gastado este mes: 3 de 100 créditos",
                "Vale hasta el 31 dic 2026",
                "Último uso: 31 dic 2026"
            ]
        );
    }
}
