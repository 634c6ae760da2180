//! One-click unsubscribe over HTTP (RFC 8058): the link's page works without a login and
//! changes nothing; the one-click POST (no Origin, or a webmail's) and the page's button
//! suppress the address at once and idempotently; tampered tokens get a 404 page.

use crate::helpers;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use luna_engine::sequences::{unsubscribe, Step};
use luna_engine::testkit;
use luna_protocol::account::{Plan, Role};
use tower::ServiceExt;

async fn text(res: axum::response::Response) -> String {
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn one_click(path: &str, origin: Option<&str>) -> Request<Body> {
    let mut req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::HOST, "luna.test");
    if let Some(o) = origin {
        req = req
            .header(header::ORIGIN, o)
            .header("sec-fetch-site", "cross-site");
    }
    req.body(Body::from("List-Unsubscribe=One-Click")).unwrap()
}

async fn count(engine: &luna_engine::Engine, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(engine.store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn the_link_confirms_in_one_click_without_login_and_tampered_tokens_are_refused() {
    let (app, engine) = helpers::router().await;
    let caller = testkit::caller(&engine, Plan::Founder, Role::Member)
        .await
        .unwrap();
    let steps = [
        Step {
            delay_days: 0,
            subject: "Hola {{nombre}}".into(),
            body: "¿Platicamos?".into(),
        },
        Step {
            delay_days: 3,
            subject: "Seguimiento".into(),
            body: "Sigo aquí.".into(),
        },
    ];
    let (_, emails) =
        testkit::authorized_sequence(&engine, &caller, &["EBA010101AB1", "CJA050505XY2"], &steps)
            .await;
    let (send_id, email): (String, String) =
        sqlx::query_as("select id, email from sequence_sends where step = 0 and email = $1")
            .bind(&emails[0])
            .fetch_one(engine.store.pool())
            .await
            .unwrap();
    let link = unsubscribe::link(&engine, &send_id, &caller.workspace_id, &email)
        .await
        .unwrap();
    let path = link
        .split_once("/baja/")
        .map(|(_, t)| format!("/baja/{t}"))
        .unwrap();

    // The page: no session needed, nothing changes, one button.
    let res = app
        .clone()
        .oneshot(Request::get(&path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let html = text(res).await;
    assert!(
        html.contains("¿Darte de baja?") && html.contains("<form method=\"post\""),
        "{html}"
    );
    assert!(!html.contains(&email), "the address is masked");
    assert_eq!(
        count(&engine, "select count(*) from email_suppressions").await,
        0
    );

    // Tampered signature, other send's id, garbage: 404 pages, nothing suppressed.
    let (id, mac) = path.trim_start_matches("/baja/").split_once('.').unwrap();
    let flipped: String = mac
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i == 5 {
                if c == 'x' {
                    'y'
                } else {
                    'x'
                }
            } else {
                c
            }
        })
        .collect();
    for bad in [
        format!("/baja/{id}.{flipped}"),
        format!("/baja/snd_otro.{mac}"),
        "/baja/nada".to_owned(),
    ] {
        let res = app.clone().oneshot(one_click(&bad, None)).await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{bad}");
        assert!(text(res).await.contains("no es válido"));
        let res = app
            .clone()
            .oneshot(Request::get(&bad).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{bad}");
    }
    assert_eq!(
        count(&engine, "select count(*) from email_suppressions").await,
        0
    );

    // The one-click POST as a mail provider sends it: no Origin, no cookie.
    let res = app.clone().oneshot(one_click(&path, None)).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(text(res).await.contains("te diste de baja"));
    assert_eq!(
        count(
            &engine,
            "select count(*) from email_suppressions where reason = 'unsubscribed'"
        )
        .await,
        1
    );
    // Both of that recipient's steps are cancelled with the reason; the other's wait.
    let cancelled: Vec<(String, String)> = sqlx::query_as(
        "select email, error from sequence_sends where status = 'cancelled' order by step",
    )
    .fetch_all(engine.store.pool())
    .await
    .unwrap();
    assert_eq!(
        cancelled,
        vec![
            (email.clone(), "se dio de baja".to_owned()),
            (email.clone(), "se dio de baja".to_owned())
        ]
    );
    assert_eq!(
        count(
            &engine,
            "select count(*) from sequence_sends where status = 'pending'"
        )
        .await,
        2
    );

    // Again, from a webmail tab on another site: accepted on purpose, nothing new.
    let res = app
        .clone()
        .oneshot(one_click(&path, Some("https://mail.example.com")))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        count(&engine, "select count(*) from email_suppressions").await,
        1
    );
    // The page now says it is done, with no button.
    let res = app
        .oneshot(Request::get(&path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let html = text(res).await;
    assert!(
        html.contains("te diste de baja") && !html.contains("<form"),
        "{html}"
    );
}
