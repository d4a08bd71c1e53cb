//! The request body limit: a body over `max_body_size` is refused with 413
//! and an errors body (declared by Content-Length or sent chunked), and
//! nothing is written.

mod support;

use serde_json::json;
use support::{Server, uuid};

#[tokio::test]
async fn oversized_bodies_are_413_with_an_errors_body() {
    let s = Server::start_with(|c| c.max_body_size = 1024).await;
    let rp = uuid();
    // Just under the limit: served.
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": "small", "uuid": rp}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // Over the limit with Content-Length.
    let big = "x".repeat(2000);
    let other = uuid();
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": big, "uuid": other}),
        )
        .await;
    assert_eq!(r.status, 413, "{r:?}");
    assert_eq!(r.body["errors"][0]["status"], 413);
    assert_eq!(r.body["errors"][0]["title"], "Payload Too Large");
    assert!(r.detail().contains("limit of 1024 bytes"), "{r:?}");
    assert_eq!(r.header("openstack-api-version"), Some("placement 1.20"));
    // Over the limit, chunked (no Content-Length), over a raw connection.
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut request = format!(
        "POST /resource_providers HTTP/1.1\r\nhost: {addr}\r\nx-auth-token: admin\r\n\
         openstack-api-version: placement 1.20\r\ncontent-type: application/json\r\n\
         transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    );
    for _ in 0..40 {
        let chunk = "{\"name\": \"0123456789012345678901234567890123456789\", ";
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("0\r\n\r\n");
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"errors\""), "{answer}");
    let r = s.get(&format!("/resource_providers/{other}"), "1.20").await;
    assert_eq!(r.status, 404);
}
