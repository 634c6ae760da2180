//! The router (`app`) and start-up (`main_entry`).

use std::time::Duration;

use axum::extract::FromRef;
use axum::http::{HeaderName, Request};
use axum::routing::get;
use axum::Router;
use leptos::config::{get_configuration, LeptosOptions};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use luna_app::server::CookiePolicy;
use luna_app::{shell, App};
use luna_engine::Engine;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::client_ip::{self, TrustedProxies};
use crate::config::Config;
use crate::guard::{self, Guard};
use crate::{events_ws, health, mcp, session, unsubscribe};

/// Shared state of every route. Cheap to clone.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub engine: Engine,
    pub cookie: CookiePolicy,
    /// Proxies whose `X-Forwarded-For` names the client (`LUNA_TRUSTED_PROXIES`).
    pub proxies: TrustedProxies,
    /// Origin check, body limits and security headers ([`crate::guard`]).
    pub guard: Guard,
    /// The events websockets open on this instance and their limits.
    pub sockets: crate::sockets::Sockets,
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Builds the whole HTTP surface for `state`.
pub fn app(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let context = {
        let engine = state.engine.clone();
        let cookie = state.cookie;
        move || {
            provide_context(engine.clone());
            provide_context(cookie);
        }
    };
    let shell_options = state.leptos_options.clone();
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/api/sessions/{id}/events", get(events_ws::session_events))
        .route("/baja/{token}", get(unsubscribe::page).post(unsubscribe::confirm))
        .nest_service("/mcp", mcp::router(state.engine.clone()))
        .leptos_routes_with_context(&state, routes, context, move || shell(shell_options.clone()))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(axum::middleware::from_fn_with_state(state.engine.clone(), session::resolve_caller))
        .layer(axum::middleware::from_fn_with_state(state.proxies.clone(), client_ip::resolve))
        .layer(axum::middleware::from_fn_with_state(state.guard.clone(), guard::guard))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            let id = req.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
            tracing::info_span!("http", method = %req.method(), path = %req.uri().path(), request_id = %id, workspace = tracing::field::Empty)
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .with_state(state)
}

/// Reads configuration, opens the database, seeds the demo and serves. Returns the exit code.
pub async fn main_entry() -> i32 {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn,tower_http=info".into()),
        )
        .init();

    let leptos_conf = match get_configuration(None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("configuración inválida: Leptos: {e}");
            return 2;
        }
    };
    let mut config = match Config::from_env(leptos_conf.leptos_options.site_addr) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if let Err(e) = config.ensure_secret() {
        eprintln!("{e}");
        return 2;
    }

    let args: Vec<String> = std::env::args().skip(1).collect();
    let open = async {
        let engine = Engine::open(&config.database_url, &config.secret)
            .await
            .map_err(|e| {
                format!(
                    "no se pudo abrir la base de datos {}: {e}",
                    luna_engine::store::redact(&config.database_url)
                )
            })?;
        if config.seeds_demo() {
            luna_engine::demo::seed_if_empty(&engine.accounts)
                .await
                .map_err(|e| format!("no se pudo sembrar la demo: {e}"))?;
        }
        Ok(engine)
    };
    if let Some(code) = crate::cli::run(&args, open).await {
        return code;
    }

    let mut engine = match Engine::open(&config.database_url, &config.secret).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!(
                "no se pudo abrir la base de datos {}: {e}",
                luna_engine::store::redact(&config.database_url)
            );
            return 1;
        }
    };
    engine.turn_stale = config.turn_stale;
    engine.research.set_lease(config.research_lease);
    if let Ok(date) = std::env::var("LUNA_ALIAS_RELEASE_DATE") {
        match luna_engine::registry::alias::parse_release_date(&date) {
            Some(d) => engine.registry.set_alias_release_date(d),
            None => {
                eprintln!("configuración inválida: LUNA_ALIAS_RELEASE_DATE: «{date}» no es una fecha AAAA-MM-DD");
                return 2;
            }
        }
    }
    if config.seeds_demo() {
        match luna_engine::demo::seed_all(&engine).await {
            Ok(seeded) => {
                if seeded.logins {
                    print_demo_logins();
                }
                if seeded.market {
                    println!("Datos de demostración de Proveedores y Adjudicaciones generados.");
                }
            }
            Err(e) => {
                eprintln!("no se pudo sembrar la demo: {e}");
                return 1;
            }
        }
    }

    if !config.bind.ip().is_loopback() {
        let published = match luna_engine::demo::published_logins(&engine.store).await {
            Ok(p) => p,
            Err(e) => {
                eprintln!("no se pudieron revisar las cuentas de demostración: {e}");
                return 1;
            }
        };
        if let Err(line) = config.check_demo_exposure(&published) {
            eprintln!("{line}");
            return 2;
        }
    }

    if let Some(model) = config.model.clone() {
        match luna_engine::turn::openai::OpenAiGateway::new(model, engine.store.clone()) {
            Ok(gateway) => {
                engine.model = luna_engine::turn::gateway::ModelHandle(std::sync::Arc::new(gateway))
            }
            Err(e) => {
                eprintln!("{e}");
                return 1;
            }
        }
    }

    // Unsubscribe links point at the public URL, else at the address this serves on.
    let public_url = config
        .public_origin
        .clone()
        .unwrap_or_else(|| format!("http://{}", config.bind));
    let engine = match crate::mail::mailer(&config) {
        Ok(m) => engine.with_mailer(m).with_public_url(public_url),
        Err(e) => {
            eprintln!("configuración inválida: {e}");
            return 2;
        }
    };
    let _dispatcher = crate::mail::start_dispatcher(&engine);
    // Turns a dead process left running are closed in their sessions' logs: at start-up
    // (on SQLite, one instance: every running turn is a dead one), then every half of
    // `LUNA_TURN_STALE_SECS`.
    let first_sweep = match engine.store.backend() {
        luna_engine::store::Backend::Sqlite => 0,
        luna_engine::store::Backend::Postgres => engine.turn_stale.as_millis() as i64,
    };
    match luna_engine::turn::service::close_interrupted(&engine, first_sweep).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(turns = n, "closed turns interrupted by the last shutdown"),
        Err(e) => tracing::error!(error = %e, "could not close interrupted turns"),
    }
    {
        let engine = engine.clone();
        tokio::spawn(async move {
            let stale = engine.turn_stale.as_millis() as i64;
            let mut tick = tokio::time::interval(engine.turn_stale / 2);
            tick.tick().await;
            loop {
                tick.tick().await;
                if let Err(e) = luna_engine::turn::service::close_interrupted(&engine, stale).await
                {
                    tracing::error!(error = %e, "could not close interrupted turns");
                }
                // Research runs whose instance died (their lease expired) continue here.
                if let Err(e) = luna_engine::research::resume_all(
                    &engine,
                    luna_engine::research::Takeover::Expired,
                )
                .await
                {
                    tracing::error!(error = %e, "could not take over research runs");
                }
            }
        });
    }
    // Several instances on one PostgreSQL database: follow what the others append, so
    // a browser on this instance sees a turn another instance runs.
    if engine.store.backend() == luna_engine::store::Backend::Postgres {
        tokio::spawn(luna_engine::session::bus::listen(
            engine.sessions.clone(),
            engine.store.url().to_string(),
        ));
    }
    // Research runs left running by the previous process continue from their last
    // checkpoint (or are failed and reported on their card).
    let takeover = match engine.store.backend() {
        luna_engine::store::Backend::Sqlite => luna_engine::research::Takeover::All,
        luna_engine::store::Backend::Postgres => luna_engine::research::Takeover::Expired,
    };
    match luna_engine::research::resume_all(&engine, takeover).await {
        Ok(resumed) => tracing::info!(runs = resumed.len(), "research runs resumed"),
        Err(e) => tracing::error!(error = %e, "could not resume research runs"),
    }

    let mut leptos_options = leptos_conf.leptos_options;
    leptos_options.site_addr = config.bind;
    let state = AppState {
        leptos_options,
        engine,
        cookie: CookiePolicy {
            secure: config.cookie_secure,
        },
        proxies: config.trusted_proxies.clone(),
        guard: Guard {
            public_origin: config.public_origin.clone(),
        },
        sockets: crate::sockets::Sockets::default(),
    };
    let listener = match tokio::net::TcpListener::bind(config.bind).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("no se pudo escuchar en {}: {e}", config.bind);
            return 1;
        }
    };
    println!("Luna está lista en http://{}", config.bind);
    tracing::info!(addr = %config.bind, model = config.model.is_some(), "serving");
    let served = axum::serve(
        listener,
        app(state).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    match served {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("el servidor se detuvo: {e}");
            tokio::time::sleep(Duration::from_millis(10)).await;
            1
        }
    }
}

fn print_demo_logins() {
    println!(
        "Espacio de trabajo de demostración creado. Entradas (contraseña: {}):",
        luna_engine::demo::DEMO_PASSWORD
    );
    for (email, name, ws, role) in luna_engine::demo::DEMO_USERS {
        let (ws_name, plan) = luna_engine::demo::DEMO_WORKSPACES[*ws];
        println!(
            "  {email:<24} {name} · {} · {ws_name} ({})",
            role.label(),
            plan.label()
        );
    }
}
