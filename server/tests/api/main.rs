//! Full-stack tests: the real router on port 0 with a fresh database.

mod adversarial;
mod gateway;
mod helpers;
mod http;
mod scene;
mod send_window;
mod session_events;
mod socket_lifetime;
mod unsubscribe;
