//! A cloud in simulation: N compute nodes' Nova report clients and a
//! scheduler booting and deleting instances, against one Placement
//! service (ours or upstream's), for `scripts/bench-load.sh --part cloud`.
//!
//! ```sh
//! cargo run --release -p placement --example cloud -- seed --url http://127.0.0.1:8778 --nodes 1000
//! cargo run --release -p placement --example cloud -- run --url http://127.0.0.1:8778 --nodes 1000 --seconds 75
//! ```
//!
//! The requests are those of Nova 34.0.0's report client at its defaults,
//! read from its code (`nova/scheduler/client/report.py`,
//! `nova/compute/resource_tracker.py`, `nova/scheduler/manager.py`); the
//! list with each one's rate is in BENCHMARKS.md, "A cloud in
//! simulation".
//!
//! `seed` brings nodes `--from` to `--nodes` up as a new nova-compute
//! does (the provider looked up, created, its inventory and traits set),
//! then gives each node `--instances` instances (allocations written in
//! batches of 100 consumers: `POST /allocations`, not measured). Nodes
//! and seeded instances have UUIDs derived from their numbers, so a
//! database seeded to N nodes can be seeded on to more.
//!
//! `run` plays, for `--seconds`, every node's periodic
//! `update_available_resource` (each node at its own phase of the 60 s
//! period, with the 0-2 s jitter; its association cache refreshed every
//! 300 s, at its own phase), and a scheduler: boots arrive at random
//! (Poisson) at one per node per `--lifetime-hours` / `--instances` hours,
//! so that the cloud stays at its size, and as many deletes. Every
//! request is timed from when it was due (a request waiting for a
//! connection counts that wait) and the result printed as one JSON
//! object: requests, their rate, p50, p99 and the largest latency in ms,
//! the answers no Nova would accept (`errors`, with the first few), boots
//! that found no host, and the same by kind of request.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use rand::RngExt as _;
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

#[derive(Parser)]
#[command(about = "A simulated cloud of Nova compute nodes and a scheduler against one Placement")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Brings nodes up and gives them instances.
    Seed {
        #[command(flatten)]
        cloud: Cloud,
        /// The first node to bring up (those before it exist).
        #[arg(long, default_value_t = 0)]
        from: usize,
        /// Requests in flight while seeding.
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
    },
    /// Plays the cloud for a while and prints what it measured.
    Run {
        #[command(flatten)]
        cloud: Cloud,
        /// How long to play.
        #[arg(long, default_value_t = 75)]
        seconds: u64,
        /// Requests in flight at most (more wait, and their wait counts).
        #[arg(long, default_value_t = 256)]
        in_flight: usize,
    },
}

#[derive(clap::Args, Clone)]
struct Cloud {
    /// The Placement service's root URL.
    #[arg(long)]
    url: String,
    /// Compute nodes.
    #[arg(long)]
    nodes: usize,
    /// Instances per node in the steady state.
    #[arg(long, default_value_t = 8)]
    instances: usize,
    /// An instance's mean lifetime: boots and deletes come at
    /// nodes * instances / lifetime.
    #[arg(long, default_value_t = 8.0)]
    lifetime_hours: f64,
    /// The token sent as `X-Auth-Token` (the services run noauth2).
    #[arg(long, default_value = "admin")]
    token: String,
}

/// Nova's periodic `update_available_resource`: oslo.service's default
/// spacing, and the jitter it adds after each run.
const PERIOD: Duration = Duration::from_secs(60);
const JITTER_SECONDS: f64 = 2.0;
/// `[compute] resource_provider_association_refresh`.
const ASSOCIATION_REFRESH: Duration = Duration::from_secs(300);
/// `[scheduler] max_placement_results`.
const PLACEMENT_RESULTS: usize = 1000;
/// The report client's claim: four tries on a provider generation race.
const CLAIM_TRIES: u32 = 4;
/// Hosts the scheduler tries before NoValidHost (its list is longer;
/// more than this many capacity failures in a row would be a finding).
const HOSTS_TRIED: usize = 10;

/// A node: its inventory as the libvirt driver reports it, and its traits.
const FLAVOR: [(&str, u64); 3] = [("DISK_GB", 20), ("MEMORY_MB", 4096), ("VCPU", 2)];
const TRAITS: [&str; 18] = [
    "COMPUTE_ACCELERATORS",
    "COMPUTE_DEVICE_TAGGING",
    "COMPUTE_IMAGE_TYPE_QCOW2",
    "COMPUTE_IMAGE_TYPE_RAW",
    "COMPUTE_NET_ATTACH_INTERFACE",
    "COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG",
    "COMPUTE_NET_VIF_MODEL_VIRTIO",
    "COMPUTE_NODE",
    "COMPUTE_RESCUE_BFV",
    "COMPUTE_STORAGE_BUS_SCSI",
    "COMPUTE_STORAGE_BUS_VIRTIO",
    "COMPUTE_TRUSTED_CERTS",
    "COMPUTE_VOLUME_ATTACH_WITH_TAG",
    "COMPUTE_VOLUME_EXTEND",
    "COMPUTE_VOLUME_MULTI_ATTACH",
    "HW_CPU_X86_AVX2",
    "HW_CPU_X86_SSE42",
    "OWNER_NOVA",
];
const PROJECT: &str = "5c9d2ab3-0c30-4a61-9f45-d07bc0a1c1a1";
const USER: &str = "2e1f0f36-4c5c-4f34-8a2f-7fb0bd2f4a0b";

fn node_uuid(node: usize) -> String {
    format!("c0000000-0000-4000-8000-{node:012x}")
}

fn seeded_instance(node: usize, j: usize) -> String {
    format!("10000000-0000-4000-8000-{:012x}", node * 4096 + j)
}

fn inventories() -> Value {
    json!({
        "VCPU": {"total": 64, "reserved": 0, "min_unit": 1, "max_unit": 64, "step_size": 1, "allocation_ratio": 4.0},
        "MEMORY_MB": {"total": 262144, "reserved": 512, "min_unit": 1, "max_unit": 262144, "step_size": 1, "allocation_ratio": 1.5},
        "DISK_GB": {"total": 2000, "reserved": 0, "min_unit": 1, "max_unit": 2000, "step_size": 1, "allocation_ratio": 1.0},
    })
}

/// What a request is, for the report by kind.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    ProviderAllocations,
    ConsumerAllocations,
    InTree,
    Inventories,
    Aggregates,
    Traits,
    Candidates,
    Claim,
    Delete,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ProviderAllocations => "GET /resource_providers/{uuid}/allocations",
            Kind::ConsumerAllocations => "GET /allocations/{consumer}",
            Kind::InTree => "GET /resource_providers?in_tree=",
            Kind::Inventories => "GET /resource_providers/{uuid}/inventories",
            Kind::Aggregates => "GET /resource_providers/{uuid}/aggregates",
            Kind::Traits => "GET /resource_providers/{uuid}/traits",
            Kind::Candidates => "GET /allocation_candidates",
            Kind::Claim => "PUT /allocations/{consumer}",
            Kind::Delete => "DELETE /allocations/{consumer}",
        }
    }
}

/// Latencies (microseconds) by kind, and the answers no Nova would take.
#[derive(Default)]
struct Record {
    latencies: BTreeMap<Kind, Vec<u32>>,
    errors: u64,
    first_errors: Vec<String>,
}

struct Sim {
    client: Client,
    base: String,
    token: String,
    in_flight: Semaphore,
    record: Mutex<Record>,
    /// Live instances: (consumer, node). Deletes take one at random.
    instances: Mutex<Vec<(String, usize)>>,
    boots: AtomicU64,
    no_valid_host: AtomicU64,
    claim_retries: AtomicU64,
    deletes: AtomicU64,
}

impl Sim {
    /// One request, timed from now (its wait for a slot included).
    /// `None` version: no `OpenStack-API-Version` header, as Nova sends
    /// some of its reads.
    async fn call(
        &self,
        kind: Kind,
        method: Method,
        path: &str,
        version: Option<&str>,
        body: Option<&Value>,
    ) -> Option<(StatusCode, Value)> {
        let due = Instant::now();
        let _slot = self.in_flight.acquire().await.ok()?;
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.base))
            .header("x-auth-token", &self.token)
            .header("accept", "application/json");
        if let Some(version) = version {
            request = request.header("openstack-api-version", format!("placement {version}"));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let answer = match request.send().await {
            Ok(response) => {
                let status = response.status();
                match response.bytes().await {
                    Ok(bytes) => Ok((
                        status,
                        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                    )),
                    Err(e) => Err(format!("{method} {path}: reading the answer: {e}")),
                }
            }
            Err(e) => Err(format!("{method} {path}: {e}")),
        };
        let micros = u32::try_from(due.elapsed().as_micros()).unwrap_or(u32::MAX);
        let mut record = self.record.lock().expect("record");
        record.latencies.entry(kind).or_default().push(micros);
        match answer {
            Ok(answer) => Some(answer),
            Err(e) => {
                record.error(&e);
                None
            }
        }
    }

    /// A request whose answer must be 2xx.
    async fn expect(
        &self,
        kind: Kind,
        method: Method,
        path: &str,
        version: Option<&str>,
    ) -> Option<Value> {
        let (status, body) = self.call(kind, method.clone(), path, version, None).await?;
        if status.is_success() {
            return Some(body);
        }
        self.error(&format!("{method} {path}: {status} {body}"));
        None
    }

    fn error(&self, what: &str) {
        self.record.lock().expect("record").error(what);
    }

    /// The resource tracker's `_update_to_placement` with nothing
    /// changed: the association refresh when due, then the tree's
    /// allocations and each consumer's.
    async fn update_to_placement(&self, node: usize, refresh: bool) {
        let rp = node_uuid(node);
        if refresh {
            let path = format!("/resource_providers?in_tree={rp}");
            self.expect(Kind::InTree, Method::GET, &path, Some("1.14"))
                .await;
            let path = format!("/resource_providers/{rp}/inventories");
            self.expect(Kind::Inventories, Method::GET, &path, None)
                .await;
            let path = format!("/resource_providers/{rp}/aggregates");
            self.expect(Kind::Aggregates, Method::GET, &path, Some("1.19"))
                .await;
            let path = format!("/resource_providers/{rp}/traits");
            self.expect(Kind::Traits, Method::GET, &path, Some("1.6"))
                .await;
        }
        let path = format!("/resource_providers/{rp}/allocations");
        let Some(doc) = self
            .expect(Kind::ProviderAllocations, Method::GET, &path, None)
            .await
        else {
            return;
        };
        let consumers: Vec<String> = doc["allocations"]
            .as_object()
            .map(|a| a.keys().cloned().collect())
            .unwrap_or_default();
        for consumer in consumers {
            let path = format!("/allocations/{consumer}");
            self.expect(Kind::ConsumerAllocations, Method::GET, &path, Some("1.28"))
                .await;
        }
    }

    /// One periodic `update_available_resource` of a node.
    async fn periodic(&self, node: usize, refresh: bool) {
        let path = format!("/resource_providers/{}/allocations", node_uuid(node));
        // `_remove_deleted_instances_allocations`: read, nothing to remove.
        self.expect(Kind::ProviderAllocations, Method::GET, &path, None)
            .await;
        self.update_to_placement(node, refresh).await;
    }

    /// The scheduler's boot of one instance, then the compute node's
    /// part: its claim checked and its tree's allocations read again.
    async fn boot(&self) {
        let resources = FLAVOR
            .iter()
            .map(|(class, amount)| format!("{class}:{amount}"))
            .collect::<Vec<_>>()
            .join(",");
        let path = format!(
            "/allocation_candidates?limit={PLACEMENT_RESULTS}&resources={resources}\
             &root_required=OWNER_NOVA,!COMPUTE_STATUS_DISABLED"
        );
        let Some(doc) = self
            .expect(Kind::Candidates, Method::GET, &path, Some("1.36"))
            .await
        else {
            return;
        };
        let mut candidates: Vec<Value> = doc["allocation_requests"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // The weighers spread instances: a host picked at random from the
        // candidates stands in for the emptiest.
        let instance = uuid::Uuid::new_v4().to_string();
        self.boots.fetch_add(1, Ordering::Relaxed);
        for _ in 0..HOSTS_TRIED {
            if candidates.is_empty() {
                break;
            }
            let pick = rand::rng().random_range(0..candidates.len());
            let candidate = candidates.swap_remove(pick);
            match self.claim(&instance, &candidate).await {
                Claim::Done => {
                    let node = candidate["allocations"]
                        .as_object()
                        .and_then(|a| a.keys().next())
                        .and_then(|rp| usize::from_str_radix(&rp[24..], 16).ok())
                        .unwrap_or(0);
                    let path = format!("/allocations/{instance}");
                    self.expect(Kind::ConsumerAllocations, Method::GET, &path, Some("1.28"))
                        .await;
                    self.update_to_placement(node, false).await;
                    self.instances
                        .lock()
                        .expect("instances")
                        .push((instance, node));
                    return;
                }
                Claim::NextHost => {}
                Claim::Failed => return,
            }
        }
        self.no_valid_host.fetch_add(1, Ordering::Relaxed);
    }

    /// `claim_resources`: the consumer read, then its allocations put;
    /// a provider generation race retried after a random sleep, a
    /// capacity refusal sends the scheduler to the next host.
    async fn claim(&self, instance: &str, candidate: &Value) -> Claim {
        let mut body = candidate.clone();
        body["project_id"] = json!(PROJECT);
        body["user_id"] = json!(USER);
        body["consumer_generation"] = Value::Null;
        let path = format!("/allocations/{instance}");
        for attempt in 0..CLAIM_TRIES {
            if attempt > 0 {
                self.claim_retries.fetch_add(1, Ordering::Relaxed);
                let pause = rand::rng().random_range(0.0..2.0 * f64::from(attempt));
                tokio::time::sleep(Duration::from_secs_f64(pause)).await;
            }
            if self
                .expect(Kind::ConsumerAllocations, Method::GET, &path, Some("1.28"))
                .await
                .is_none()
            {
                return Claim::Failed;
            }
            let Some((status, answer)) = self
                .call(Kind::Claim, Method::PUT, &path, Some("1.36"), Some(&body))
                .await
            else {
                return Claim::Failed;
            };
            if status == StatusCode::NO_CONTENT {
                return Claim::Done;
            }
            let code = answer["errors"][0]["code"].as_str().unwrap_or("");
            let detail = answer["errors"][0]["detail"].as_str().unwrap_or("");
            if status == StatusCode::CONFLICT && code == "placement.concurrent_update" {
                if detail.contains("consumer generation conflict") {
                    self.error(&format!("PUT {path}: {status} {answer}"));
                    return Claim::Failed;
                }
                continue;
            }
            if status == StatusCode::CONFLICT {
                return Claim::NextHost;
            }
            self.error(&format!("PUT {path}: {status} {answer}"));
            return Claim::Failed;
        }
        Claim::NextHost
    }

    /// A delete: the node's usage updated (its tree's allocations read),
    /// then the instance's allocations deleted (`reclaim_instance_interval`
    /// 0: forced, no version header).
    async fn delete(&self) {
        let picked = {
            let mut instances = self.instances.lock().expect("instances");
            if instances.is_empty() {
                None
            } else {
                let pick = rand::rng().random_range(0..instances.len());
                Some(instances.swap_remove(pick))
            }
        };
        let Some((instance, node)) = picked else {
            return;
        };
        self.update_to_placement(node, false).await;
        let path = format!("/allocations/{instance}");
        if let Some((status, body)) = self
            .call(Kind::Delete, Method::DELETE, &path, None, None)
            .await
        {
            if status != StatusCode::NO_CONTENT && status != StatusCode::NOT_FOUND {
                self.error(&format!("DELETE {path}: {status} {body}"));
            }
        }
        self.deletes.fetch_add(1, Ordering::Relaxed);
    }
}

enum Claim {
    Done,
    NextHost,
    Failed,
}

impl Record {
    fn error(&mut self, what: &str) {
        self.errors += 1;
        if self.first_errors.len() < 5 {
            self.first_errors.push(what.chars().take(400).collect());
        }
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

fn client() -> Client {
    Client::builder()
        .pool_max_idle_per_host(1024)
        .timeout(Duration::from_secs(120))
        .build()
        .expect("an HTTP client")
}

/// Seeding's requests: any answer but 2xx stops it.
async fn must(
    client: &Client,
    cloud: &Cloud,
    method: Method,
    path: &str,
    version: &str,
    body: Option<Value>,
) -> Value {
    let mut request = client
        .request(method.clone(), format!("{}{path}", cloud.url))
        .header("x-auth-token", &cloud.token)
        .header("openstack-api-version", format!("placement {version}"));
    if let Some(body) = &body {
        request = request.json(body);
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    assert!(status.is_success(), "{method} {path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A new nova-compute's start, as far as placement sees it.
async fn bring_up(client: &Client, cloud: &Cloud, node: usize) {
    let rp = node_uuid(node);
    must(
        client,
        cloud,
        Method::GET,
        &format!("/resource_providers?in_tree={rp}"),
        "1.14",
        None,
    )
    .await;
    let name = format!("compute{node:06}");
    must(
        client,
        cloud,
        Method::POST,
        "/resource_providers",
        "1.20",
        Some(json!({"uuid": rp, "name": name})),
    )
    .await;
    must(
        client,
        cloud,
        Method::GET,
        &format!("/resource_providers/{rp}/allocations"),
        "1.0",
        None,
    )
    .await;
    let body = json!({"resource_provider_generation": 0, "inventories": inventories()});
    let put = must(
        client,
        cloud,
        Method::PUT,
        &format!("/resource_providers/{rp}/inventories"),
        "1.26",
        Some(body),
    )
    .await;
    let names = TRAITS.join(",");
    must(
        client,
        cloud,
        Method::GET,
        &format!("/traits?name=in:{names}"),
        "1.6",
        None,
    )
    .await;
    let body = json!({"resource_provider_generation": put["resource_provider_generation"], "traits": TRAITS});
    must(
        client,
        cloud,
        Method::PUT,
        &format!("/resource_providers/{rp}/traits"),
        "1.6",
        Some(body),
    )
    .await;
}

async fn seed(cloud: Cloud, from: usize, concurrency: usize) {
    let client = client();
    let start = Instant::now();
    let next = Arc::new(AtomicU64::new(from as u64));
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, cloud, next) = (client.clone(), cloud.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let node = next.fetch_add(1, Ordering::Relaxed) as usize;
                    if node >= cloud.nodes {
                        break;
                    }
                    bring_up(&client, &cloud, node).await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("a seeding worker");
    }
    let consumers: Vec<(usize, usize)> = (from..cloud.nodes)
        .flat_map(|node| (0..cloud.instances).map(move |j| (node, j)))
        .collect();
    let batches: Vec<Vec<(usize, usize)>> = consumers.chunks(100).map(<[_]>::to_vec).collect();
    let batches = Arc::new(Mutex::new(batches));
    let workers: Vec<_> = (0..concurrency.min(4))
        .map(|_| {
            let (client, cloud, batches) = (client.clone(), cloud.clone(), batches.clone());
            tokio::spawn(async move {
                loop {
                    let Some(batch) = batches.lock().expect("batches").pop() else { break };
                    let body: serde_json::Map<String, Value> = batch
                        .iter()
                        .map(|&(node, j)| {
                            let resources: serde_json::Map<String, Value> =
                                FLAVOR.iter().map(|(class, amount)| ((*class).to_owned(), json!(amount))).collect();
                            (
                                seeded_instance(node, j),
                                json!({
                                    "allocations": {node_uuid(node): {"resources": resources}},
                                    "project_id": PROJECT, "user_id": USER, "consumer_generation": null,
                                }),
                            )
                        })
                        .collect();
                    must(&client, &cloud, Method::POST, "/allocations", "1.28", Some(Value::Object(body))).await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("a seeding worker");
    }
    eprintln!(
        "seeded nodes {from} to {} ({} instances each) in {:.0} s",
        cloud.nodes,
        cloud.instances,
        start.elapsed().as_secs_f64()
    );
}

/// The seeded instances live now: the first `instances` of each node
/// (a run's deletes may have taken some; those answer 404, as Nova takes).
fn seeded(cloud: &Cloud) -> Vec<(String, usize)> {
    (0..cloud.nodes)
        .flat_map(|node| (0..cloud.instances).map(move |j| (seeded_instance(node, j), node)))
        .collect()
}

async fn run(cloud: Cloud, seconds: u64, in_flight: usize) {
    let sim = Arc::new(Sim {
        client: client(),
        base: cloud.url.trim_end_matches('/').to_owned(),
        token: cloud.token.clone(),
        in_flight: Semaphore::new(in_flight),
        record: Mutex::default(),
        instances: Mutex::new(seeded(&cloud)),
        boots: AtomicU64::new(0),
        no_valid_host: AtomicU64::new(0),
        claim_retries: AtomicU64::new(0),
        deletes: AtomicU64::new(0),
    });
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    let mut tasks = Vec::with_capacity(cloud.nodes + 2);
    for node in 0..cloud.nodes {
        let sim = sim.clone();
        tasks.push(tokio::spawn(async move {
            // The node's phase in the period, and which of its next
            // periodics finds the association cache stale (one in five).
            let (phase, stale_after) = {
                let mut rng = rand::rng();
                let runs = (ASSOCIATION_REFRESH.as_secs() / PERIOD.as_secs()) as u32;
                (
                    rng.random_range(0.0..PERIOD.as_secs_f64()),
                    rng.random_range(0..runs),
                )
            };
            let mut due = start + Duration::from_secs_f64(phase);
            let mut refresh_due = due + PERIOD * stale_after;
            while due < end {
                tokio::time::sleep_until(due.into()).await;
                let refresh = due >= refresh_due;
                if refresh {
                    refresh_due = due + ASSOCIATION_REFRESH;
                }
                sim.periodic(node, refresh).await;
                let jitter = rand::rng().random_range(0.0..JITTER_SECONDS);
                due += PERIOD + Duration::from_secs_f64(jitter);
            }
        }));
    }
    // Boots and deletes: Poisson arrivals at the churn that keeps the
    // cloud at its size.
    let per_second = cloud.nodes as f64 * cloud.instances as f64 / (cloud.lifetime_hours * 3600.0);
    for deleting in [false, true] {
        let sim = sim.clone();
        tasks.push(tokio::spawn(async move {
            let mut due = start;
            let mut spawned = Vec::new();
            loop {
                let gap: f64 = -rand::rng().random_range(f64::EPSILON..1.0f64).ln() / per_second;
                due += Duration::from_secs_f64(gap);
                if due >= end {
                    break;
                }
                tokio::time::sleep_until(due.into()).await;
                let sim = sim.clone();
                spawned.push(tokio::spawn(async move {
                    if deleting {
                        sim.delete().await;
                    } else {
                        sim.boot().await;
                    }
                }));
            }
            for task in spawned {
                let _ = task.await;
            }
        }));
    }
    for task in tasks {
        task.await.expect("a simulated node");
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mut record = std::mem::take(&mut *sim.record.lock().expect("record"));
    let mut all: Vec<u32> = Vec::new();
    let mut by_kind = serde_json::Map::new();
    for (kind, latencies) in &mut record.latencies {
        latencies.sort_unstable();
        all.extend_from_slice(latencies);
        by_kind.insert(
            kind.name().to_owned(),
            json!({"requests": latencies.len(), "p50_ms": percentile(latencies, 50.0),
                   "p99_ms": percentile(latencies, 99.0)}),
        );
    }
    all.sort_unstable();
    let report = json!({
        "nodes": cloud.nodes,
        "instances_per_node": cloud.instances,
        "seconds": elapsed,
        "requests": all.len(),
        "per_second": all.len() as f64 / elapsed,
        "p50_ms": percentile(&all, 50.0),
        "p99_ms": percentile(&all, 99.0),
        "max_ms": percentile(&all, 100.0),
        "errors": record.errors,
        "first_errors": record.first_errors,
        "boots": sim.boots.load(Ordering::Relaxed),
        "no_valid_host": sim.no_valid_host.load(Ordering::Relaxed),
        "claim_retries": sim.claim_retries.load(Ordering::Relaxed),
        "deletes": sim.deletes.load(Ordering::Relaxed),
        "by_kind": by_kind,
    });
    println!("{report}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    match args.command {
        Command::Seed {
            mut cloud,
            from,
            concurrency,
        } => {
            cloud.url = cloud.url.trim_end_matches('/').to_owned();
            seed(cloud, from, concurrency).await;
        }
        Command::Run {
            cloud,
            seconds,
            in_flight,
        } => run(cloud, seconds, in_flight).await,
    }
}
