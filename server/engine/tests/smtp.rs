//! Against a real SMTP server (started by `end2end/smtp/run.sh`, aiosmtpd from PyPI):
//! a sequence step authorized by a person goes out through `lettre`, once, with the
//! sender, the recipient, a UTF-8 subject, the Message-ID derived from the send and the
//! personalised body, and the RFC 8058 unsubscribe headers. A 550 for a recipient
//! suppresses the address (`bounced`) and cancels its later steps; a 451 retries.
//! Ignored unless `LUNA_TEST_SMTP_URL` and `LUNA_TEST_MAILDIR` are set.

use std::sync::Arc;

use luna_engine::people::{RevealRequest, RevealVia};
use luna_engine::registry::{Surface, ToolRequest};
use luna_engine::sequences::{self, dispatch, Audience, Smtp, Step};
use luna_engine::testkit;
use luna_protocol::account::{Plan, Role};
use serde_json::json;

fn maildir_messages(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["new", "cur"] {
        if let Ok(entries) = std::fs::read_dir(dir.join(sub)) {
            for e in entries.flatten() {
                out.push(std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
    }
    out
}

/// Undoes RFC 2047 only as far as this test needs: the subject is UTF-8 encoded.
fn header<'a>(msg: &'a str, name: &str) -> Option<&'a str> {
    msg.lines()
        .find(|l| {
            l.to_ascii_lowercase()
                .starts_with(&format!("{}:", name.to_ascii_lowercase()))
        })
        .map(|l| l[name.len() + 1..].trim())
}

/// The message body, decoded from its Content-Transfer-Encoding.
fn body(msg: &str) -> String {
    let normalized = msg.replace("\r\n", "\n");
    let (head, raw) = normalized.split_once("\n\n").unwrap_or((&normalized, ""));
    let cte = header(head, "Content-Transfer-Encoding")
        .unwrap_or("7bit")
        .to_ascii_lowercase();
    match cte.as_str() {
        "base64" => {
            use base64::Engine as _;
            let joined: String = raw.split_whitespace().collect();
            String::from_utf8(
                base64::engine::general_purpose::STANDARD
                    .decode(joined)
                    .unwrap(),
            )
            .unwrap()
        }
        "quoted-printable" => {
            let mut bytes = Vec::new();
            let text = raw.replace("=\n", "");
            let b = text.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'=' && i + 2 < b.len() {
                    if let Ok(v) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                        bytes.push(v);
                        i += 3;
                        continue;
                    }
                }
                bytes.push(b[i]);
                i += 1;
            }
            String::from_utf8(bytes).unwrap()
        }
        _ => raw.to_owned(),
    }
}

#[tokio::test]
#[ignore = "needs an SMTP server: run end2end/smtp/run.sh"]
async fn a_step_goes_out_through_a_real_smtp_server_once() {
    let (Ok(url), Ok(maildir)) = (
        std::env::var("LUNA_TEST_SMTP_URL"),
        std::env::var("LUNA_TEST_MAILDIR"),
    ) else {
        panic!("set LUNA_TEST_SMTP_URL and LUNA_TEST_MAILDIR (end2end/smtp/run.sh does)");
    };
    let smtp = Smtp::from_url(&url).expect("smtp url");
    let engine = testkit::engine().await.unwrap().with_mailer(Arc::new(smtp));
    testkit::insert_supplier(&engine, "EBA010101AB1", "Empaques del Bajío")
        .await
        .unwrap();
    let caller = testkit::caller(&engine, Plan::Founder, Role::Member)
        .await
        .unwrap();
    let c = luna_engine::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        luna_engine::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    let col = format!("collection:{}", c.id);
    let saved = engine
        .call_tool(
            &caller,
            ToolRequest::new(
                "crm_save_companies",
                json!({"collection_id": col, "source": ["company:EBA010101AB1"], "conflict_policy": "skip"}),
                Surface::Ui,
            ),
        )
        .await;
    assert!(saved.outcome.is_ok());
    let person = engine
        .people
        .search(&caller, "company:EBA010101AB1")
        .await
        .unwrap()[0]
        .card
        .handle
        .clone();
    let q = engine.people.quote(&caller, &[person]).await.unwrap();
    let revealed = engine
        .people
        .reveal(
            &caller,
            &RevealRequest {
                quote_id: q.id,
                confirm: true,
                max_credits: q.price,
                idempotency_key: "smtp-1".into(),
            },
            RevealVia {
                surface: "ui",
                auto_policy: None,
                call_ref: None,
            },
        )
        .await
        .unwrap();
    let to = revealed.people[0].email.clone();
    let first_name = revealed.people[0]
        .full_name
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();

    let s = sequences::draft(
        &engine,
        &caller,
        None,
        "Prueba SMTP",
        &Audience {
            collection_id: col,
            record_ids: None,
            stage: None,
        },
        &[Step {
            delay_days: 0,
            subject: "Compras públicas para {{empresa}}".into(),
            body: "Hola {{nombre}}, ¿platicamos? Saludos, {{remitente}}".into(),
        }],
    )
    .await
    .unwrap();
    sequences::authorize(&engine, &caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let now = luna_engine::clock::now_ms() + 1000;
    let r = dispatch::run_once(&engine, "smtp-test", now).await.unwrap();
    assert_eq!(r.sent, 1, "{r:?}");
    // A second pass sends nothing more.
    assert_eq!(
        dispatch::run_once(&engine, "smtp-test", now)
            .await
            .unwrap()
            .sent,
        0
    );

    // The maildir is shared with the other test: only this recipient's messages.
    let messages: Vec<String> = maildir_messages(std::path::Path::new(&maildir))
        .into_iter()
        .filter(|m| header(m, "To").is_some_and(|v| v.contains(&to)))
        .collect();
    assert_eq!(messages.len(), 1, "the server received exactly one message");
    let m = &messages[0];
    assert!(header(m, "To").is_some_and(|v| v.contains(&to)), "{m}");
    assert!(
        header(m, "From").is_some_and(|v| v.contains(&caller.email)),
        "{m}"
    );
    let subject = header(m, "Subject").unwrap_or_default();
    // Non-ASCII words travel RFC 2047-encoded ("públicas" → =?utf-8?b?cMO6YmxpY2Fz?=).
    assert!(
        subject.starts_with("Compras =?utf-8?b?cMO6YmxpY2Fz?= para"),
        "{subject}"
    );
    let send_id: String = sqlx::query_scalar("select id from sequence_sends")
        .fetch_one(engine.store.pool())
        .await
        .unwrap();
    assert_eq!(
        header(m, "Message-ID"),
        Some(format!("<{send_id}@luna.local>").as_str())
    );
    let text = body(m);
    assert!(
        text.starts_with(&format!("Hola {first_name}, ¿platicamos?")),
        "{text}"
    );
    assert!(!text.contains("{{"), "{text}");
}

fn env() -> (String, String) {
    match (
        std::env::var("LUNA_TEST_SMTP_URL"),
        std::env::var("LUNA_TEST_MAILDIR"),
    ) {
        (Ok(url), Ok(maildir)) => (url, maildir),
        _ => panic!("set LUNA_TEST_SMTP_URL and LUNA_TEST_MAILDIR (end2end/smtp/run.sh does)"),
    }
}

#[tokio::test]
#[ignore = "needs an SMTP server: run end2end/smtp/run.sh"]
async fn a_550_suppresses_and_cancels_later_steps_a_451_retries_and_headers_are_one_click() {
    let (url, maildir) = env();
    let engine = testkit::engine()
        .await
        .unwrap()
        .with_mailer(Arc::new(Smtp::from_url(&url).expect("smtp url")))
        .with_public_url("https://luna.example.mx");
    let caller = testkit::caller(&engine, Plan::Founder, Role::Member)
        .await
        .unwrap();
    let (audience, emails) = testkit::revealed_audience(
        &engine,
        &caller,
        &["EBA010101AB1", "CJA050505XY2", "MAB020202CD3"],
    )
    .await;
    // The test server refuses «rebota…» with 550 and «demora…» with 451.
    let tag = luna_engine::ids::random_token(6).to_lowercase();
    let ok = emails[0].clone();
    let bounced = format!("rebota-{tag}@{}", emails[1].rsplit('@').next().unwrap());
    let deferred = format!("demora-{tag}@{}", emails[2].rsplit('@').next().unwrap());
    for (from, to) in [(&emails[1], &bounced), (&emails[2], &deferred)] {
        sqlx::query("update people_reveals set email = $1 where lower(email) = $2")
            .bind(to)
            .bind(from)
            .execute(engine.store.pool())
            .await
            .unwrap();
    }
    let steps = [
        Step {
            delay_days: 0,
            subject: "Compras para {{empresa}}".into(),
            body: "Hola {{nombre}}, ¿platicamos?".into(),
        },
        Step {
            delay_days: 3,
            subject: "Seguimiento".into(),
            body: "Sigo al pendiente, {{nombre}}.".into(),
        },
    ];
    let s = testkit::authorize_all(&engine, &caller, &audience, &steps).await;
    let now = luna_engine::clock::now_ms() + 1000;
    let r = dispatch::run_once(&engine, "smtp-refusals", now)
        .await
        .unwrap();
    assert_eq!((r.sent, r.bounced, r.retried), (1, 1, 1), "{r:?}");

    // Headers present and well-formed on what the server received.
    let messages: Vec<String> = maildir_messages(std::path::Path::new(&maildir))
        .into_iter()
        .filter(|m| header(m, "To").is_some_and(|v| v.contains(&ok)))
        .collect();
    assert_eq!(messages.len(), 1);
    let m = &messages[0];
    let list = header(m, "List-Unsubscribe").expect("List-Unsubscribe");
    let link = list
        .strip_prefix("<https://luna.example.mx/baja/")
        .and_then(|l| l.strip_suffix('>'))
        .unwrap_or_else(|| panic!("one https link in angle brackets: {list}"));
    let (send_id, mac) = link.split_once('.').expect("id.mac");
    assert!(send_id.starts_with("snd_") && mac.len() == 43, "{link}");
    assert!(!list.contains('@'), "no address in the link: {list}");
    assert_eq!(
        header(m, "List-Unsubscribe-Post"),
        Some("List-Unsubscribe=One-Click")
    );
    assert!(
        body(m).contains(&format!(
            "date de baja con un clic: https://luna.example.mx/baja/{link}"
        )),
        "{}",
        body(m)
    );

    // 550: the address is suppressed as bounced and its later step cancelled.
    let status = |email: String, step: i64| {
        let pool = engine.store.pool().clone();
        async move {
            sqlx::query_as::<_, (String, Option<String>, i64)>(
                "select status, error, attempts from sequence_sends where email = $1 and step = $2",
            )
            .bind(email)
            .bind(step)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let (st, err, _) = status(bounced.clone(), 0).await;
    assert_eq!(st, "failed");
    assert!(err.unwrap().contains("550"));
    assert_eq!(
        status(bounced.clone(), 1).await,
        ("cancelled".into(), Some("su correo rebotó".into()), 0)
    );
    let reason: String = sqlx::query_scalar(
        "select reason from email_suppressions where workspace_id = $1 and email = $2",
    )
    .bind(&caller.workspace_id)
    .bind(&bounced)
    .fetch_one(engine.store.pool())
    .await
    .unwrap();
    assert_eq!(reason, "bounced");

    // 451: back to pending with one attempt, nothing suppressed.
    let (st, err, attempts) = status(deferred.clone(), 0).await;
    assert_eq!((st.as_str(), attempts), ("pending", 1));
    assert!(err.unwrap().contains("451"));
    let n: i64 = sqlx::query_scalar("select count(*) from email_suppressions where email = $1")
        .bind(&deferred)
        .fetch_one(engine.store.pool())
        .await
        .unwrap();
    assert_eq!(n, 0);

    // Days later: the good address gets step 2, the bounced one nothing, the deferred
    // one is tried again.
    let later = now + 30 * 86_400_000;
    let r = dispatch::run_once(&engine, "smtp-refusals", later)
        .await
        .unwrap();
    assert_eq!((r.sent, r.bounced), (1, 0), "{r:?}");
    assert!(r.retried >= 1, "{r:?}");
    let _ = s;
}
