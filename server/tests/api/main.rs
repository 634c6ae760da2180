//! Full-stack tests: the real router on port 0 with a fresh database.

mod adversarial;
mod draft_stage;
mod gateway;
mod helpers;
mod http;
mod replay;
mod scene;
mod sequences_http;
mod session_events;
mod settings_forms;
mod socket_lifetime;
mod stale_click;
mod unsubscribe;
