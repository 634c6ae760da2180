//! Server functions for the workspace's sending window: the days and hours sequence
//! steps go out in each recipient's time zone, the daily cap per sender mailbox and
//! the workspace's zone. Any member reads it; owners and admins change it (audited).
//! Thin wrappers over `luna_engine::sequences::window`.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// The sending window as Ajustes shows and edits it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct SendWindowView {
    /// ISO weekdays, 1 = lunes … 7 = domingo. Defaults to none, so that a form with
    /// every day unticked (an empty list is not encoded at all) reaches the engine's
    /// Spanish refusal instead of a transport error.
    #[serde(default)]
    pub days: Vec<u8>,
    /// First hour a step may go out (0–23), in the recipient's local time.
    pub start_hour: u32,
    /// The hour sending stops (1–24).
    pub end_hour: u32,
    /// Most steps one sender mailbox sends a day.
    pub daily_cap: u32,
    /// IANA zone for recipients whose state is unknown, e.g. `America/Mexico_City`.
    pub time_zone: String,
}

/// A zone a workspace may choose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct ZoneChoice {
    /// IANA name, e.g. `America/Cancun`.
    pub id: String,
    /// Spanish label, e.g. «Zona Sureste (Quintana Roo)».
    pub label: String,
}

/// The zones a workspace may choose.
#[server(prefix = "/api", endpoint = "send_window_zones", output = crate::codec::Answer)]
pub async fn send_window_zones() -> Result<Vec<ZoneChoice>, AppError> {
    caller()?;
    Ok(luna_engine::sequences::zones::CHOICES
        .iter()
        .map(|(tz, label)| ZoneChoice {
            id: tz.name().to_owned(),
            label: (*label).to_owned(),
        })
        .collect())
}

/// The workspace's sending window (its defaults when never set).
#[server(prefix = "/api", endpoint = "send_window", output = crate::codec::Answer)]
pub async fn send_window() -> Result<SendWindowView, AppError> {
    let caller = caller()?;
    let w = luna_engine::sequences::window::get(&engine()?, &caller)
        .await
        .map_err(fail)?;
    Ok(SendWindowView {
        days: w.weekdays(),
        start_hour: w.start_hour,
        end_hour: w.end_hour,
        daily_cap: w.daily_cap,
        time_zone: w.time_zone.name().to_owned(),
    })
}

/// Replaces the workspace's sending window. Owners and admins only; bad input is a
/// typed error in Spanish.
#[server(prefix = "/api", endpoint = "set_send_window", output = crate::codec::Answer)]
pub async fn set_send_window(window: SendWindowView) -> Result<(), AppError> {
    use luna_engine::sequences::window::{self, Window};
    let caller = caller()?;
    caller.require_admin().map_err(fail)?;
    let w = Window::new(
        &window.days,
        window.start_hour,
        window.end_hour,
        window.daily_cap,
        &window.time_zone,
    )
    .map_err(fail)?;
    window::set(&engine()?, &caller, &w).await.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::json::conformance::check;
    use serde_json::json;

    /// Ajustes reads the window and the zones in the browser with `FromJson`: it must
    /// read what serde reads.
    #[test]
    fn the_window_reads_in_the_browser_as_serde_reads_it() {
        check::<SendWindowView>(&json!({
            "days": [1, 2, 3, 4, 5], "start_hour": 9, "end_hour": 18, "daily_cap": 200,
            "time_zone": "America/Mexico_City"
        }));
        check::<Vec<ZoneChoice>>(&json!([
            {"id": "America/Cancun", "label": "Zona Sureste (Quintana Roo)"}
        ]));
    }
}
