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
    // Under the limit: served.
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": format!("small-{rp}"), "uuid": rp}),
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
    assert_eq!(r.body["errors"][0]["title"], "Request Entity Too Large");
    assert!(r.message().contains("limit of 1024 bytes"), "{r:?}");
    assert_eq!(r.header("openstack-api-version"), Some("placement 1.20"));
    assert_eq!(r.header("connection"), Some("close"));
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

/// Sends `request` on `conn` and reads one response (headers and a body of
/// `content-length` bytes); `None` when the server closed the connection.
/// The head and the body are sent in two writes, as many clients do.
async fn exchange(conn: &mut tokio::net::TcpStream, request: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let split = request.find("\r\n\r\n").map_or(request.len(), |i| i + 4);
    if conn.write_all(&request.as_bytes()[..split]).await.is_err() {
        return None;
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    if conn.write_all(&request.as_bytes()[split..]).await.is_err() {
        return None;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(text);
            }
        }
        match conn.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A request refused before its body is read (a bad version, no token)
/// leaves the keep-alive connection usable: the next request on it is
/// answered. Before the body was read ahead of those checks, the server
/// closed the connection without saying so, and the client's next request
/// met a broken pipe.
#[tokio::test]
async fn refused_requests_with_a_body_keep_the_connection() {
    let s = Server::start().await;
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let rp = uuid();
    let body = format!("{{\"name\": \"n-{rp}\", \"uuid\": \"{rp}\"}}");
    for (version, token, status) in [
        ("1.01", "admin", "400"),
        ("1.99", "admin", "406"),
        ("1.20", "", "401"),
        ("1.20", "admin", "200"),
    ] {
        let token = if token.is_empty() {
            String::new()
        } else {
            format!("x-auth-token: {token}\r\n")
        };
        let request = format!(
            "POST /resource_providers HTTP/1.1\r\nhost: {addr}\r\n{token}\
             openstack-api-version: placement {version}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        );
        let answer = exchange(&mut conn, &request).await.unwrap_or_else(|| {
            panic!("connection closed before the answer to {version} {token:?}")
        });
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{answer}"
        );
    }
    // The next request is still answered on the same connection: the
    // provider the last one made (not the list of every provider, which
    // on a database shared with the other tests is megabytes long).
    let request = format!(
        "GET /resource_providers/{rp} HTTP/1.1\r\nhost: {addr}\r\nx-auth-token: admin\r\n\r\n"
    );
    let answer = exchange(&mut conn, &request).await.expect("still open");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(&rp), "{answer}");
}
