//! A placement service over loopback on a fresh database, an HTTP client
//! for it, providers and inventories set up through the API, and reads of
//! what the API does not show (consumer rows).
//!
//! The database is a temporary SQLite file, or, when
//! `PLACEMENT_TEST_DATABASE` names one, an existing database holding
//! upstream's schema (tests then create only rows with fresh names and
//! uuids). Servers listen on an ephemeral port, or on the first free port
//! of `PLACEMENT_TEST_PORTS` (`FIRST-LAST`) when set.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;

use microversion_server::openapi::ResponseValidation;
use microversion_test_support::{Scratch, serve_on};
use placement::config::{AuthStrategy, Config};
use placement::db::Store;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::Row;

/// The running service.
pub struct Server {
    pub base: String,
    pub store: Store,
    /// Connections of the tests' own to the server's database, for rows
    /// the API does not show or write.
    db: sqlx::AnyPool,
    /// The database URL, in upstream's form.
    pub database: String,
    client: reqwest::Client,
    /// The directory of the SQLite file (and its `-wal` and `-shm`),
    /// removed with the server.
    database_dir: Option<Scratch>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Resp {
    /// Reads a response whole.
    pub async fn read(r: reqwest::Response) -> Self {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("a body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp {
            status,
            headers,
            body,
            text,
        }
    }

    /// The `detail` of the first error, whole.
    pub fn detail(&self) -> &str {
        self.body["errors"][0]["detail"]
            .as_str()
            .unwrap_or_default()
    }

    /// The message of the first error: its `detail` without webob's page
    /// around it (the status's explanation and a blank line before, the
    /// two spaces after), its newlines spaces. Panics on a detail of
    /// another shape (`tests/error_texts.rs` checks the pages whole).
    pub fn message(&self) -> &str {
        let detail = self.detail();
        let (_, message) = detail
            .split_once("\n\n ")
            .unwrap_or_else(|| panic!("not webob's page: {detail:?}"));
        message.strip_suffix("  ").unwrap_or(message)
    }

    /// The `code` of the first error.
    pub fn code(&self) -> &str {
        self.body["errors"][0]["code"].as_str().unwrap_or_default()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A fresh uuid.
pub fn uuid() -> String {
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
    /// A server with the legacy policy (what most of upstream's tests use).
    pub async fn start() -> Server {
        Server::start_with(|_| {}).await
    }

    /// A server with settings changed by `configure`.
    pub async fn start_with(configure: impl FnOnce(&mut Config)) -> Server {
        // The service's log goes to the test's captured output, so a test
        // that fails shows what the service said (a write's retries, say).
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_ansi(false)
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn,placement=debug"))
            .try_init();
        let (database, database_dir) = match std::env::var("PLACEMENT_TEST_DATABASE") {
            Ok(url) if !url.is_empty() => (url, None),
            _ => {
                let dir = Scratch::new("placement-test");
                let file = dir.join("placement.db");
                (format!("sqlite:///{}", file.display()), Some(dir))
            }
        };
        let mut config = Config {
            database: database.clone(),
            enforce_new_defaults: false,
            enforce_scope: false,
            auth_strategy: AuthStrategy::Noauth2,
            // Every answer of every test is checked against its version's
            // OpenAPI document: a drift between the two fails the test.
            response_validation: ResponseValidation::Error,
            ..Config::default()
        };
        configure(&mut config);
        // Servers started at once on one shared database race to add the
        // standard rows; `ready` tries again for the loser.
        let (state, app) = placement::app::ready(config)
            .await
            .expect("the service starts");
        let store = state.store;
        let base = serve_on(listener().await, app);
        sqlx::any::install_default_drivers();
        let (_, url) = placement::db::translate_url(&database).expect("database URL");
        let db = sqlx::any::AnyPoolOptions::new()
            .max_connections(2)
            .connect_lazy(&url)
            .expect("the tests' own connections");
        Server {
            base,
            store,
            db,
            database,
            client: reqwest::Client::new(),
            database_dir,
        }
    }

    /// Sends a request as the admin, at `version` (none: the default).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        version: Option<&str>,
        body: Option<&Value>,
    ) -> Resp {
        self.call_as(&[("x-auth-token", "admin")], method, path, version, body)
            .await
    }

    /// Sends a request with `headers`.
    pub async fn call_as(
        &self,
        headers: &[(&str, &str)],
        method: Method,
        path: &str,
        version: Option<&str>,
        body: Option<&Value>,
    ) -> Resp {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("accept", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(v) = version {
            req = req.header("openstack-api-version", format!("placement {v}"));
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        Resp::read(req.send().await.expect("the request is answered")).await
    }

    pub async fn get(&self, path: &str, version: &str) -> Resp {
        self.call(Method::GET, path, Some(version), None).await
    }

    pub async fn put(&self, path: &str, version: &str, body: &Value) -> Resp {
        self.call(Method::PUT, path, Some(version), Some(body))
            .await
    }

    pub async fn post(&self, path: &str, version: &str, body: &Value) -> Resp {
        self.call(Method::POST, path, Some(version), Some(body))
            .await
    }

    pub async fn delete(&self, path: &str, version: &str) -> Resp {
        self.call(Method::DELETE, path, Some(version), None).await
    }

    /// Creates a provider (generation 0) through the API.
    pub async fn provider(&self, uuid: &str, parent: Option<&str>) {
        let mut body = serde_json::json!({"name": format!("rp-{uuid}"), "uuid": uuid});
        if let Some(p) = parent {
            body["parent_provider_uuid"] = serde_json::json!(p);
        }
        let r = self.post("/resource_providers", "1.20", &body).await;
        assert_eq!(r.status, 200, "{r:?}");
    }

    /// Adds inventory of `class` to the provider through the API (which
    /// moves its generation): `[total, reserved, min, max, step]`.
    pub async fn inventory(&self, uuid: &str, class: &str, amounts: [i64; 5], ratio: f64) {
        let body = serde_json::json!({
            "resource_class": class,
            "total": amounts[0], "reserved": amounts[1], "min_unit": amounts[2],
            "max_unit": amounts[3], "step_size": amounts[4], "allocation_ratio": ratio
        });
        let r = self
            .post(
                &format!("/resource_providers/{uuid}/inventories"),
                "1.20",
                &body,
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }

    /// Inventory of `total` with upstream's defaults.
    pub async fn simple_inventory(&self, uuid: &str, class: &str, total: i64) {
        self.inventory(uuid, class, [total, 0, 1, 0x7FFF_FFFF, 1], 1.0)
            .await;
    }

    /// Creates a custom resource class through the API.
    pub async fn custom_class(&self, name: &str) {
        let r = self
            .call(
                Method::PUT,
                &format!("/resource_classes/{name}"),
                Some("1.7"),
                None,
            )
            .await;
        assert!(r.status == 201 || r.status == 204, "{r:?}");
    }

    /// The provider's generation, read through the API.
    pub async fn generation(&self, uuid: &str) -> i64 {
        let r = self
            .get(&format!("/resource_providers/{uuid}"), "1.20")
            .await;
        r.body["generation"].as_i64().expect("a provider")
    }

    /// Creates a provider named `name` through the API (1.20: 200 with
    /// the body, which it returns).
    pub async fn provider_named(&self, name: &str, parent: Option<&str>) -> Value {
        let mut body = json!({"name": name});
        if let Some(parent) = parent {
            body["parent_provider_uuid"] = json!(parent);
        }
        let r = self.post("/resource_providers", "1.20", &body).await;
        assert_eq!(r.status, 200, "create {name}: {:?}", r.body);
        r.body
    }

    /// Makes `(class, total)` the provider's whole inventory through the
    /// API; returns the new generation.
    pub async fn set_inventories(&self, uuid: &str, inventories: &[(&str, i64)]) -> i64 {
        let mut body = json!({
            "resource_provider_generation": self.generation(uuid).await,
            "inventories": {}
        });
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

    /// `text` with its `?` placeholders written for the server's database.
    pub fn sql(&self, text: &str) -> String {
        match self.store.dialect() {
            placement::db::Dialect::Postgres => {
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
    pub async fn allocate(&self, provider: &str, class: &str, used: i64) {
        let mut tx = self.db.begin().await.expect("tx");
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
    pub async fn provider_id(&self, uuid: &str) -> i64 {
        sqlx::query(&self.sql("SELECT id FROM resource_providers WHERE uuid = ?"))
            .bind(uuid)
            .fetch_one(&self.db)
            .await
            .expect("provider")
            .try_get("id")
            .expect("id")
    }

    /// How many inventory rows the provider with internal id `id` has.
    pub async fn inventory_rows(&self, id: i64) -> i64 {
        sqlx::query(
            &self.sql("SELECT COUNT(*) AS n FROM inventories WHERE resource_provider_id = ?"),
        )
        .bind(id)
        .fetch_one(&self.db)
        .await
        .expect("count")
        .try_get("n")
        .expect("n")
    }

    /// Removes every allocation of the provider.
    pub async fn deallocate(&self, provider: &str) {
        let mut tx = self.db.begin().await.expect("tx");
        sqlx::query(&self.sql(
            "DELETE FROM allocations WHERE resource_provider_id = (SELECT id FROM resource_providers WHERE uuid = ?)",
        ))
        .bind(provider)
        .execute(&mut *tx)
        .await
        .expect("delete allocations");
        tx.commit().await.expect("commit");
    }

    /// Counts rows of `table` matching `condition` (with one text value).
    pub async fn count(&self, table: &str, condition: &str, value: &str) -> i64 {
        let q = self.sql(&format!("SELECT COUNT(*) FROM {table} WHERE {condition}"));
        let (n,): (i64,) = sqlx::query_as(&q)
            .bind(value)
            .fetch_one(&self.db)
            .await
            .expect("count");
        n
    }
}

impl Server {
    /// A connection of its own to the server's database, as another
    /// process (upstream's workers, `placement-manage`) would have.
    pub async fn other_connection(&self) -> sqlx::AnyConnection {
        use sqlx::Connection;
        let (_, url) = placement::db::translate_url(&self.database).expect("database URL");
        sqlx::AnyConnection::connect(&url)
            .await
            .expect("another connection")
    }
}

/// What upstream's `AllocationFixture` makes: a provider with 2048 DISK_GB
/// (min 10, max 1000, step 10) and 10 VCPU (max 10), a consumer of 1000
/// DISK_GB, one of 6 VCPU, and one of another user of 20 DISK_GB and 1
/// VCPU, all in one project; the provider is at generation 5 and each
/// consumer at 1.
#[derive(Clone, Debug)]
pub struct AllocationFixture {
    pub rp: String,
    pub project: String,
    pub user: String,
    pub alt_user: String,
    pub consumer_0: String,
    pub consumer_id: String,
    pub alt_consumer_id: String,
}

impl AllocationFixture {
    pub async fn create(s: &Server) -> AllocationFixture {
        let f = AllocationFixture {
            rp: uuid(),
            project: uuid(),
            user: uuid(),
            alt_user: uuid(),
            consumer_0: uuid(),
            consumer_id: uuid(),
            alt_consumer_id: uuid(),
        };
        s.provider(&f.rp, None).await;
        s.inventory(&f.rp, "DISK_GB", [2048, 0, 10, 1000, 10], 1.0)
            .await;
        s.inventory(&f.rp, "VCPU", [10, 0, 1, 10, 1], 1.0).await;
        for (consumer, user, resources) in [
            (&f.consumer_0, &f.user, serde_json::json!({"DISK_GB": 1000})),
            (&f.consumer_id, &f.user, serde_json::json!({"VCPU": 6})),
            (
                &f.alt_consumer_id,
                &f.alt_user,
                serde_json::json!({"DISK_GB": 20, "VCPU": 1}),
            ),
        ] {
            let body = serde_json::json!({
                "allocations": {f.rp.clone(): {"resources": resources}},
                "project_id": f.project, "user_id": user, "consumer_generation": null
            });
            let r = s
                .put(&format!("/allocations/{consumer}"), "1.28", &body)
                .await;
            assert_eq!(r.status, 204, "{r:?}");
        }
        assert_eq!(s.generation(&f.rp).await, 5);
        f
    }
}

impl Server {
    /// Sends `body` as it is (not encoded as JSON: it may be malformed),
    /// declared `application/json`, as the admin at `version`.
    pub async fn call_raw(
        &self,
        method: Method,
        path: &str,
        version: &str,
        body: impl Into<reqwest::Body>,
    ) -> Resp {
        let r = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("accept", "application/json")
            .header("x-auth-token", "admin")
            .header("openstack-api-version", format!("placement {version}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("the request is answered");
        Resp::read(r).await
    }
}
