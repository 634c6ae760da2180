//! `luna-server`: starts Luna. All set-up lives in the library so tests can reuse it.

#[tokio::main]
async fn main() {
    std::process::exit(luna_server::routes::main_entry().await);
}
