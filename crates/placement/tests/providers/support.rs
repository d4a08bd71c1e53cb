//! The service on loopback, a client, and direct database access for
//! what other resources (allocations) would write.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use placement::app::{AppState, router};
use placement::config::Config;
use placement::db::{Dialect, Store};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::Row;

/// The running service.
pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) store: Store,
    client: reqwest::Client,
    file: Option<PathBuf>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
            }
        }
    }
}

/// A response, read whole.
#[derive(Debug)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: Value,
}

impl Resp {
    /// The `detail` of the first error.
    pub(crate) fn detail(&self) -> &str {
        self.body["errors"][0]["detail"]
            .as_str()
            .unwrap_or_default()
    }

    /// The `code` of the first error.
    pub(crate) fn code(&self) -> &str {
        self.body["errors"][0]["code"].as_str().unwrap_or_default()
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A fresh uuid.
pub(crate) fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

async fn listener() -> tokio::net::TcpListener {
    if let Ok(range) = std::env::var("PLACEMENT_TEST_PORTS") {
        let (first, last) = range
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<u16>().ok()?, b.parse::<u16>().ok()?)))
            .expect("PLACEMENT_TEST_PORTS is FIRST-LAST");
        for port in first..=last {
            if let Ok(l) =
                tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await
            {
                return l;
            }
        }
        panic!("no free port in {range}");
    }
    tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback")
}

impl Server {
    /// A server with the legacy policy on a fresh database.
    pub(crate) async fn start() -> Server {
        let (database, file) = match std::env::var("PLACEMENT_TEST_DATABASE") {
            Ok(url) if !url.is_empty() => (url, None),
            _ => {
                let file = std::env::temp_dir().join(format!(
                    "placement-providers-test-{}-{}.db",
                    std::process::id(),
                    COUNTER.fetch_add(1, Ordering::SeqCst)
                ));
                (format!("sqlite:///{}", file.display()), Some(file))
            }
        };
        let config = Config {
            database,
            enforce_new_defaults: false,
            ..Config::default()
        };
        let state = AppState::new(config).await.expect("the database opens");
        placement::db::schema::sync(&state.store)
            .await
            .expect("schema");
        // Servers started at once on one shared database race to add the
        // standard rows; the loser finds them there when it tries again.
        let mut synced = placement::db::standard::sync(&state.store).await;
        for _ in 0..5 {
            if synced.is_ok() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            synced = placement::db::standard::sync(&state.store).await;
        }
        synced.expect("standard classes and traits");
        let store = state.store.clone();
        let app = router(state).expect("routes");
        let listener = listener().await;
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serve");
        });
        Server {
            base: format!("http://{addr}"),
            store,
            client: reqwest::Client::new(),
            file,
        }
    }

    /// Sends a request as the admin at `version`.
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        version: &str,
        body: Option<&Value>,
    ) -> Resp {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("accept", "application/json")
            .header("x-auth-token", "admin")
            .header("openstack-api-version", format!("placement {version}"));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let r = req.send().await.expect("the request is answered");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("a body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp {
            status,
            headers,
            body,
        }
    }

    pub(crate) async fn get(&self, path: &str, version: &str) -> Resp {
        self.call(Method::GET, path, version, None).await
    }

    pub(crate) async fn put(&self, path: &str, version: &str, body: &Value) -> Resp {
        self.call(Method::PUT, path, version, Some(body)).await
    }

    pub(crate) async fn post(&self, path: &str, version: &str, body: &Value) -> Resp {
        self.call(Method::POST, path, version, Some(body)).await
    }

    pub(crate) async fn delete(&self, path: &str, version: &str) -> Resp {
        self.call(Method::DELETE, path, version, None).await
    }

    /// Creates a provider through the API (1.20: 200 with the body).
    pub(crate) async fn provider(&self, name: &str, parent: Option<&str>) -> Value {
        let mut body = json!({"name": name});
        if let Some(parent) = parent {
            body["parent_provider_uuid"] = json!(parent);
        }
        let r = self.post("/resource_providers", "1.20", &body).await;
        assert_eq!(r.status, 200, "create {name}: {:?}", r.body);
        r.body
    }

    /// Sets the provider's inventory through the API: `(class, total)`.
    pub(crate) async fn inventory(&self, uuid: &str, inventories: &[(&str, i64)]) -> i64 {
        let generation = self
            .get(&format!("/resource_providers/{uuid}"), "1.20")
            .await
            .body["generation"]
            .as_i64()
            .expect("generation");
        let mut body = json!({"resource_provider_generation": generation, "inventories": {}});
        for (class, total) in inventories {
            body["inventories"][*class] = json!({"total": total});
        }
        let r = self
            .put(
                &format!("/resource_providers/{uuid}/inventories"),
                "1.20",
                &body,
            )
            .await;
        assert_eq!(r.status, 200, "inventory: {:?}", r.body);
        r.body["resource_provider_generation"]
            .as_i64()
            .expect("generation")
    }

    fn sql(&self, text: &str) -> String {
        match self.store.dialect() {
            Dialect::Postgres => {
                let mut out = String::new();
                let mut n = 0;
                for c in text.chars() {
                    if c == '?' {
                        n += 1;
                        out.push_str(&format!("${n}"));
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            _ => text.to_owned(),
        }
    }

    /// Writes an allocation row directly (what the allocations API would
    /// write), with the provider's generation moved as that API does.
    pub(crate) async fn allocate(&self, provider: &str, class: &str, used: i64) {
        let mut tx = self.store.begin().await.expect("tx");
        let rp: i64 = sqlx::query(&self.sql("SELECT id FROM resource_providers WHERE uuid = ?"))
            .bind(provider)
            .fetch_one(&mut *tx)
            .await
            .expect("provider")
            .try_get("id")
            .expect("id");
        let rc: i64 = sqlx::query(&self.sql("SELECT id FROM resource_classes WHERE name = ?"))
            .bind(class)
            .fetch_one(&mut *tx)
            .await
            .expect("class")
            .try_get("id")
            .expect("id");
        sqlx::query(&self.sql(
            "INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (?, ?, ?, ?)",
        ))
        .bind(rp)
        .bind(uuid())
        .bind(rc)
        .bind(used)
        .execute(&mut *tx)
        .await
        .expect("allocation");
        sqlx::query(
            &self.sql("UPDATE resource_providers SET generation = generation + 1 WHERE id = ?"),
        )
        .bind(rp)
        .execute(&mut *tx)
        .await
        .expect("generation");
        tx.commit().await.expect("commit");
    }

    /// The internal id of the provider `uuid`.
    pub(crate) async fn provider_id(&self, uuid: &str) -> i64 {
        sqlx::query(&self.sql("SELECT id FROM resource_providers WHERE uuid = ?"))
            .bind(uuid)
            .fetch_one(self.store.reader())
            .await
            .expect("provider")
            .try_get("id")
            .expect("id")
    }

    /// How many inventory rows the provider with internal id `id` has.
    pub(crate) async fn inventory_rows(&self, id: i64) -> i64 {
        sqlx::query(
            &self.sql("SELECT COUNT(*) AS n FROM inventories WHERE resource_provider_id = ?"),
        )
        .bind(id)
        .fetch_one(self.store.reader())
        .await
        .expect("count")
        .try_get("n")
        .expect("n")
    }

    /// Removes every allocation of the provider.
    pub(crate) async fn deallocate(&self, provider: &str) {
        let mut tx = self.store.begin().await.expect("tx");
        sqlx::query(&self.sql(
            "DELETE FROM allocations WHERE resource_provider_id = (SELECT id FROM resource_providers WHERE uuid = ?)",
        ))
        .bind(provider)
        .execute(&mut *tx)
        .await
        .expect("delete allocations");
        tx.commit().await.expect("commit");
    }
}
