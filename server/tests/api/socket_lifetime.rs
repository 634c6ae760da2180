//! The events websocket does not outlive its caller's right to it: a logout or a
//! removal from the workspace closes it, one person holds a bounded number of them,
//! and a client cannot push large frames into it.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use luna_server::sockets::MAX_SOCKETS_PER_USER;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::{
    handshake_error, message, read_until, spawn_app, spawn_app_rechecking_every, Socket,
};

const RECHECK: Duration = Duration::from_millis(200);

/// How the server ended the socket: the close frame's code and reason, or `None` for
/// a dropped connection. Panics if it is still open after `wait`.
async fn closed_within(socket: &mut Socket, wait: Duration) -> Option<(CloseCode, String)> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let frame = tokio::time::timeout_at(deadline, socket.next())
            .await
            .expect("the socket is still open");
        match frame {
            Some(Ok(Message::Close(frame))) => {
                return frame.map(|f| (f.code, f.reason.to_string()));
            }
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return None,
        }
    }
}

#[tokio::test]
async fn logging_out_closes_the_open_socket() {
    let app = spawn_app_rechecking_every(RECHECK).await;
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();
    app.engine
        .sessions
        .append_one(&session, message(1))
        .await
        .unwrap();
    read_until(&mut socket, 1).await;

    // The browser's logout (the server function the top bar calls).
    let res = reqwest::Client::new()
        .post(format!("http://{}/api/logout", app.addr))
        .header("cookie", format!("luna_session={token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success() || res.status().is_redirection());
    assert!(app
        .engine
        .accounts
        .session_caller(&token)
        .await
        .unwrap()
        .is_none());

    let (code, reason) = closed_within(&mut socket, Duration::from_secs(3))
        .await
        .expect("a close frame");
    assert_eq!(code, CloseCode::Policy);
    assert!(reason.contains("sesión"), "{reason}");
    // The session's events no longer reach the logged-out browser.
    app.engine
        .sessions
        .append_one(&session, message(2))
        .await
        .unwrap();
    let after = tokio::time::timeout(Duration::from_millis(500), socket.next()).await;
    assert!(
        matches!(after, Ok(None | Some(Err(_)))),
        "the socket kept delivering: {after:?}"
    );
}

#[tokio::test]
async fn removal_from_the_workspace_closes_the_members_socket_only() {
    let app = spawn_app_rechecking_every(RECHECK).await;
    let (owner_token, owner) = app.login("duena@demo.luna.mx").await;
    let (member_token, member) = app.login("ventas@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let mut owner_socket = app.connect(Some(&owner_token), &session, 0).await.unwrap();
    let mut member_socket = app.connect(Some(&member_token), &session, 0).await.unwrap();

    sqlx::query("delete from memberships where workspace_id = $1 and user_id = $2")
        .bind(&member.workspace_id)
        .bind(&member.user_id)
        .execute(app.engine.store.pool())
        .await
        .unwrap();

    let (code, _) = closed_within(&mut member_socket, Duration::from_secs(3))
        .await
        .expect("a close frame");
    assert_eq!(code, CloseCode::Policy);
    // The owner, still a member, keeps following the session.
    app.engine
        .sessions
        .append_one(&session, message(1))
        .await
        .unwrap();
    read_until(&mut owner_socket, 1).await;
}

#[tokio::test]
async fn one_person_gets_a_bounded_number_of_sockets() {
    let app = spawn_app().await;
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let (other_token, _) = app.login("ventas@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let mut open = Vec::new();
    for _ in 0..MAX_SOCKETS_PER_USER {
        open.push(app.connect(Some(&token), &session, 0).await.unwrap());
    }

    let err = app.connect(Some(&token), &session, 0).await.unwrap_err();
    let (status, body) = handshake_error(err);
    assert_eq!(status, 429);
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("pestañas")));
    assert!(body["error"]["hint"].is_string());
    // Another person is not affected.
    let _other = app.connect(Some(&other_token), &session, 0).await.unwrap();

    // Closing one frees its slot (once the server has seen the close).
    let mut first = open.remove(0);
    first.close(None).await.unwrap();
    drop(first);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    loop {
        match app.connect(Some(&token), &session, 0).await {
            Ok(_socket) => break,
            Err(e) if tokio::time::Instant::now() < deadline => {
                assert_eq!(handshake_error(e).0, 429);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("the closed socket's slot was not freed: {e}"),
        }
    }
}

#[tokio::test]
async fn an_oversized_frame_from_the_client_closes_the_connection() {
    let app = spawn_app().await;
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();

    socket
        .send(Message::Text("x".repeat(64 * 1024).into()))
        .await
        .unwrap();
    closed_within(&mut socket, Duration::from_secs(3)).await;

    // A well-behaved client on the same session is unaffected.
    let mut fine = app.connect(Some(&token), &session, 0).await.unwrap();
    app.engine
        .sessions
        .append_one(&session, message(1))
        .await
        .unwrap();
    read_until(&mut fine, 1).await;
}
