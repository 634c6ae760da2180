//! `spawn_app()`: Luna's router on an ephemeral port with a fresh, seeded database.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::StreamExt;
use leptos::config::LeptosOptions;
use luna_app::server::CookiePolicy;
use luna_engine::accounts::Caller;
use luna_engine::demo::{seed_if_empty, DEMO_PASSWORD};
use luna_engine::{Engine, Store};
use luna_protocol::event::{SessionEvent, UserMessage};
use luna_protocol::stream::StreamMessage;
use luna_server::client_ip::TrustedProxies;
use luna_server::sockets::Sockets;
use luna_server::{app, AppState};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::COOKIE;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct TestApp {
    pub addr: SocketAddr,
    pub engine: Engine,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_behind(TrustedProxies::default()).await
}

/// `spawn_app` whose `X-Forwarded-For` is believed from `proxies` (`LUNA_TRUSTED_PROXIES`).
pub async fn spawn_app_behind(proxies: TrustedProxies) -> TestApp {
    let engine = Engine::from_store(Store::open_temp().await.expect("temp db"));
    seed_if_empty(&engine.accounts).await.expect("demo seed");
    serve(engine, proxies, Sockets::default()).await
}

/// `spawn_app()` whose live sockets re-check their caller every `every` (the default
/// is `RECHECK_EVERY`, too long to wait for in a test).
pub async fn spawn_app_rechecking_every(every: Duration) -> TestApp {
    let engine = Engine::from_store(Store::open_temp().await.expect("temp db"));
    seed_if_empty(&engine.accounts).await.expect("demo seed");
    serve(engine, TrustedProxies::default(), Sockets::new(every)).await
}

/// A second app instance on `first`'s database (several instances share one
/// PostgreSQL database; each follows the others' appends like `luna-server` does).
pub async fn spawn_instance_of(first: &TestApp) -> TestApp {
    let store = Store::open(first.engine.store.url())
        .await
        .expect("the same database");
    serve(
        Engine::from_store(store),
        TrustedProxies::default(),
        Sockets::default(),
    )
    .await
}

async fn serve(engine: Engine, proxies: TrustedProxies, sockets: Sockets) -> TestApp {
    if engine.store.backend() == luna_engine::store::Backend::Postgres {
        tokio::spawn(luna_engine::session::bus::listen(
            engine.sessions.clone(),
            engine.store.url().to_string(),
        ));
    }
    let state = AppState {
        leptos_options: LeptosOptions::builder().output_name("luna").build(),
        engine: engine.clone(),
        cookie: CookiePolicy::default(),
        proxies,
        guard: Default::default(),
        sockets,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = app(state).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, service).await });
    TestApp { addr, engine }
}

impl TestApp {
    /// Logs a demo user in; returns the cookie token and the caller.
    pub async fn login(&self, email: &str) -> (String, Caller) {
        self.engine
            .accounts
            .login(email, DEMO_PASSWORD, luna_engine::accounts::ClientIp::LOCAL)
            .await
            .expect("demo login")
    }

    /// Opens the events websocket, with the session cookie when `token` is given.
    pub async fn connect(
        &self,
        token: Option<&str>,
        session_id: &str,
        since: u64,
    ) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
        let url = format!(
            "ws://{}/api/sessions/{session_id}/events?since={since}",
            self.addr
        );
        let mut request = url.into_client_request()?;
        if let Some(token) = token {
            let cookie = HeaderValue::from_str(&format!("luna_session={token}")).unwrap();
            request.headers_mut().insert(COOKIE, cookie);
        }
        tokio_tungstenite::connect_async(request)
            .await
            .map(|(socket, _)| socket)
    }
}

/// The HTTP status a refused websocket handshake answered with.
pub fn handshake_status(err: tokio_tungstenite::tungstenite::Error) -> u16 {
    match err {
        tokio_tungstenite::tungstenite::Error::Http(response) => response.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {other}"),
    }
}

/// The HTTP status and JSON body a refused websocket handshake answered with.
pub fn handshake_error(err: tokio_tungstenite::tungstenite::Error) -> (u16, serde_json::Value) {
    match err {
        tokio_tungstenite::tungstenite::Error::Http(response) => {
            let body = response
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(serde_json::Value::Null);
            (response.status().as_u16(), body)
        }
        other => panic!("expected an HTTP refusal, got {other}"),
    }
}

/// The next stream message, or `None` if nothing arrives within `wait`.
pub async fn next_message(socket: &mut Socket, wait: Duration) -> Option<StreamMessage> {
    loop {
        let frame = tokio::time::timeout(wait, socket.next()).await.ok()??;
        match frame.expect("websocket frame") {
            Message::Text(text) => {
                return Some(serde_json::from_str(&text).expect("a stream message"));
            }
            Message::Close(_) => return None,
            _ => continue,
        }
    }
}

/// Reads messages until one with `seq >= until` arrives; fails after 10 s of silence.
pub async fn read_until(socket: &mut Socket, until: u64) -> Vec<StreamMessage> {
    let mut out = Vec::new();
    loop {
        let msg = next_message(socket, Duration::from_secs(10))
            .await
            .expect("the stream went silent before reaching the expected seq");
        let seq = msg.seq();
        out.push(msg);
        if seq.is_some_and(|seq| seq >= until) {
            return out;
        }
    }
}

pub fn message(i: u64) -> SessionEvent {
    SessionEvent::UserMessage(UserMessage {
        turn_id: format!("turn_{i}"),
        text: format!("Mensaje número {i}"),
        steering: false,
    })
}

pub fn seqs(messages: &[StreamMessage]) -> Vec<u64> {
    messages.iter().filter_map(StreamMessage::seq).collect()
}

/// The router alone (for `tower::ServiceExt::oneshot`), with a fresh seeded database.
pub async fn router() -> (axum::Router, Engine) {
    router_serving(".").await
}

/// [`router`] with its static files served from `site_root` (as `LEPTOS_SITE_ROOT`).
pub async fn router_serving(site_root: &str) -> (axum::Router, Engine) {
    let engine = Engine::from_store(Store::open_temp().await.expect("temp db"));
    seed_if_empty(&engine.accounts).await.expect("demo seed");
    let state = AppState {
        leptos_options: LeptosOptions::builder()
            .output_name("luna")
            .site_root(site_root)
            .build(),
        engine: engine.clone(),
        cookie: CookiePolicy::default(),
        proxies: Default::default(),
        guard: Default::default(),
        sockets: Sockets::default(),
    };
    (app(state), engine)
}

/// A POST with a form body, as the browser sends server functions and the login form.
pub fn form(path: &str, body: &str, cookie: Option<&str>) -> axum::http::Request<axum::body::Body> {
    use axum::http::header;
    let mut req = axum::http::Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    req.body(axum::body::Body::from(body.to_owned())).unwrap()
}
