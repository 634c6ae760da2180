//! Full-stack tests: the real router on port 0 with a fresh database.

mod helpers;
mod http;
mod session_events;
