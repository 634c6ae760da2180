//! Ajustes forms over HTTP, encoded as the browser sends them (a list left empty is not
//! sent at all): admins save the sending window and the commercial profile, members are
//! refused, and bad input comes back as a typed error in Spanish.

use crate::helpers;

use axum::http::{header, StatusCode};
use luna_engine::demo::DEMO_PASSWORD;
use tower::ServiceExt;

async fn login(app: &axum::Router, email: &str) -> String {
    let body = format!(
        "email={}&password={DEMO_PASSWORD}",
        email.replace('@', "%40")
    );
    let res = app
        .clone()
        .oneshot(helpers::form("/api/login", &body, None))
        .await
        .unwrap();
    res.headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("luna_session="))
        .and_then(|v| v.split(';').next())
        .unwrap()
        .to_owned()
}

async fn post(app: &axum::Router, path: &str, body: &str, cookie: &str) -> (StatusCode, String) {
    let res = app
        .clone()
        .oneshot(helpers::form(path, body, Some(cookie)))
        .await
        .unwrap();
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn window(days: &[u8], start: u32, end: u32, cap: u32, zone: &str) -> String {
    let mut parts: Vec<String> = days
        .iter()
        .enumerate()
        .map(|(i, d)| format!("window[days][{i}]={d}"))
        .collect();
    parts.push(format!("window[start_hour]={start}"));
    parts.push(format!("window[end_hour]={end}"));
    parts.push(format!("window[daily_cap]={cap}"));
    parts.push(format!("window[time_zone]={}", zone.replace('/', "%2F")));
    parts.join("&")
}

#[tokio::test]
async fn admins_save_the_sending_window_and_bad_input_is_a_typed_spanish_error() {
    let (app, _) = helpers::router().await;
    let member = login(&app, "ventas@demo.luna.mx").await;
    let admin = login(&app, "admin@demo.luna.mx").await;
    let good = window(&[1, 2, 3, 4, 5, 6], 8, 17, 120, "America/Tijuana");

    let (status, _) = post(&app, "/api/set_send_window", &good, &member).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    for (bad, says) in [
        (
            window(&[1], 18, 9, 120, "America/Tijuana"),
            "La hora de inicio debe ser antes que la de fin.",
        ),
        (
            window(&[], 9, 18, 120, "America/Tijuana"),
            "Elige al menos un día de envío.",
        ),
        (
            window(&[1], 9, 18, 0, "America/Tijuana"),
            "El tope diario por buzón va de 1 a 5000 correos.",
        ),
    ] {
        let (status, text) = post(&app, "/api/set_send_window", &bad, &admin).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
        assert!(
            text.contains("INVALID_ARGUMENT") && text.contains(says),
            "{text}"
        );
    }

    let (status, text) = post(&app, "/api/set_send_window", &good, &admin).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    // Any member reads it back.
    let (status, text) = post(&app, "/api/send_window", "", &member).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let w: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(w["days"], serde_json::json!([1, 2, 3, 4, 5, 6]));
    assert_eq!(
        (&w["start_hour"], &w["end_hour"], &w["daily_cap"]),
        (
            &serde_json::json!(8),
            &serde_json::json!(17),
            &serde_json::json!(120)
        )
    );
    assert_eq!(w["time_zone"], "America/Tijuana");
}

#[tokio::test]
async fn the_commercial_profile_saves_with_empty_lists_and_a_bad_state_is_named() {
    let (app, _) = helpers::router().await;
    let member = login(&app, "ventas@demo.luna.mx").await;
    let admin = login(&app, "admin@demo.luna.mx").await;
    // The browser's form encoding leaves out empty lists (no buyers here).
    let good = "profile[oferta]=Empaque%20corrugado&profile[giros][0]=alimentos\
                &profile[estados][0]=jalisco&profile[ticket_mxn]=250000&profile[exclusiones]=";
    let (status, _) = post(&app, "/api/set_commercial_profile", good, &member).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let bad = "profile[oferta]=x&profile[estados][0]=Narnia&profile[exclusiones]=";
    let (status, text) = post(&app, "/api/set_commercial_profile", bad, &admin).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
    assert!(
        text.contains("INVALID_ARGUMENT") && text.contains("«Narnia» no es una entidad federativa"),
        "{text}"
    );
    assert!(
        text.contains("Jalisco"),
        "the valid states are listed: {text}"
    );

    let (status, text) = post(&app, "/api/set_commercial_profile", good, &admin).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let (status, text) = post(&app, "/api/get_commercial_profile", "", &member).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let p: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(p["estados"], serde_json::json!(["Jalisco"]));
    assert_eq!(p["compradores"], serde_json::json!([]));
    assert_eq!(p["ticket_mxn"], 250000);
}

#[tokio::test]
async fn admins_get_the_market_coverage_and_members_get_the_typed_refusal() {
    let (app, engine) = helpers::router().await;
    engine.market.ensure_demo().await.unwrap();
    let member = login(&app, "ventas@demo.luna.mx").await;
    let admin = login(&app, "admin@demo.luna.mx").await;

    let (status, text) = post(&app, "/api/market_coverage", "", &member).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("administrador"), "{text}");

    let (status, text) = post(&app, "/api/market_coverage", "", &admin).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let cov: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kinds = cov["kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 5, "{text}");
    assert!(
        kinds
            .iter()
            .any(|k| k["kind"] == "awards" && k["rows"].as_u64() > Some(0)),
        "{text}"
    );
    let states = cov["states"].as_array().unwrap().len()
        + cov["states_without_data"].as_array().unwrap().len();
    assert_eq!(states, 32, "{text}");
    // Per-year figures add up to the kinds' totals.
    let years = cov["years"].as_array().unwrap();
    assert!(!years.is_empty(), "{text}");
    let awards_by_year: u64 = years.iter().map(|y| y["awards"].as_u64().unwrap()).sum();
    let dated = kinds.iter().find(|k| k["kind"] == "awards").unwrap()["rows"]
        .as_u64()
        .unwrap();
    assert!(
        awards_by_year > 0 && awards_by_year <= dated,
        "{awards_by_year} {dated}"
    );
    assert!(cov["summary"].as_str().unwrap().contains("Adjudicaciones"));
}
