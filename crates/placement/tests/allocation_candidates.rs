//! `GET /allocation_candidates` over loopback: a single provider, a
//! sharing provider, a nested tree (NUMA nodes and a PF), granular groups,
//! traits, aggregates, `in_tree`, `limit`, `root_required`,
//! `same_subtree`, resourceless groups, trees read listed and scanned, the
//! shapes of each version and the errors with upstream's messages.
//!
//! Each test names its own resource classes and traits (fresh suffixes),
//! so that it sees only its own providers even on a shared database
//! (`PLACEMENT_TEST_DATABASE`).

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Resp, Server, uuid};

/// Fresh custom names for one test.
struct Names(String);

impl Names {
    fn new() -> Names {
        Names(uuid().replace('-', "")[..10].to_ascii_uppercase())
    }

    fn class(&self, base: &str) -> String {
        format!("CUSTOM_{base}_{}", self.0)
    }

    fn trait_(&self, base: &str) -> String {
        format!("CUSTOM_T_{base}_{}", self.0)
    }
}

async fn classes(s: &Server, names: &[&str]) {
    for name in names {
        s.custom_class(name).await;
    }
}

async fn traits(s: &Server, rp: &str, names: &[&str]) {
    for name in names {
        if name.starts_with("CUSTOM_") {
            let r = s
                .call(Method::PUT, &format!("/traits/{name}"), Some("1.6"), None)
                .await;
            assert!(r.status == 201 || r.status == 204, "{r:?}");
        }
    }
    let generation = s.generation(rp).await;
    let r = s
        .put(
            &format!("/resource_providers/{rp}/traits"),
            "1.6",
            &json!({"resource_provider_generation": generation, "traits": names}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
}

async fn aggregates(s: &Server, rp: &str, aggs: &[&str]) {
    let generation = s.generation(rp).await;
    let r = s
        .put(
            &format!("/resource_providers/{rp}/aggregates"),
            "1.19",
            &json!({"resource_provider_generation": generation, "aggregates": aggs}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
}

async fn candidates(s: &Server, query: &str, version: &str) -> Resp {
    s.get(&format!("/allocation_candidates?{query}"), version)
        .await
}

/// The allocation requests (dict form) as sets of
/// `provider:class:amount`, sorted, for comparisons without order.
fn requests(r: &Resp) -> Vec<Vec<String>> {
    assert_eq!(r.status, 200, "{r:?}");
    let mut out: Vec<Vec<String>> = r.body["allocation_requests"]
        .as_array()
        .expect("allocation_requests")
        .iter()
        .map(|ar| {
            let mut parts = Vec::new();
            for (rp, alloc) in ar["allocations"].as_object().expect("dict form") {
                for (class, amount) in alloc["resources"].as_object().expect("resources") {
                    parts.push(format!("{rp}:{class}:{amount}"));
                }
            }
            parts.sort();
            parts
        })
        .collect();
    out.sort();
    out
}

fn summary_uuids(r: &Resp) -> Vec<String> {
    let mut out: Vec<String> = r.body["provider_summaries"]
        .as_object()
        .expect("provider_summaries")
        .keys()
        .cloned()
        .collect();
    out.sort();
    out
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn part(rp: &str, class: &str, amount: i64) -> String {
    format!("{rp}:{class}:{amount}")
}

#[tokio::test]
async fn single_provider_and_shapes_by_version() {
    let s = Server::start().await;
    let n = Names::new();
    let (cpu, mem, disk) = (n.class("CPU"), n.class("MEM"), n.class("DISK"));
    classes(&s, &[&cpu, &mem, &disk]).await;
    let cn = uuid();
    s.provider(&cn, None).await;
    // Capacity (8 - 2) * 2.0 = 12; min 1, max 4, step 1.
    s.inventory(&cn, &cpu, [8, 2, 1, 4, 1], 2.0).await;
    s.inventory(&cn, &mem, [4096, 0, 512, 4096, 512], 1.0).await;
    s.simple_inventory(&cn, &disk, 100).await;
    let hw = n.trait_("HW");
    traits(&s, &cn, &[&hw]).await;
    // Use 3 CPU.
    let body = json!({"allocations": {cn.clone(): {"resources": {cpu.clone(): 3}}},
                      "project_id": "p", "user_id": "u"});
    assert_eq!(
        s.put(&format!("/allocations/{}", uuid()), "1.12", &body)
            .await
            .status,
        204
    );

    let q = format!("resources={cpu}:2,{mem}:1024");
    // 1.10: list form, only the classes asked, no caching headers.
    let r = candidates(&s, &q, "1.10").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.header("cache-control").is_none() && r.header("last-modified").is_none());
    assert_eq!(
        r.body["allocation_requests"],
        json!([{"allocations": [{"resource_provider": {"uuid": cn}, "resources": {cpu.clone(): 2, mem.clone(): 1024}}]}])
    );
    assert_eq!(
        r.body["provider_summaries"],
        json!({cn.clone(): {"resources": {cpu.clone(): {"capacity": 12, "used": 3}, mem.clone(): {"capacity": 4096, "used": 0}}}})
    );
    // 1.12: dict form.
    let r = candidates(&s, &q, "1.12").await;
    assert_eq!(
        r.body["allocation_requests"],
        json!([{"allocations": {cn.clone(): {"resources": {cpu.clone(): 2, mem.clone(): 1024}}}}])
    );
    // 1.15: caching headers.
    let r = candidates(&s, &q, "1.15").await;
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert!(r.header("last-modified").is_some());
    assert_eq!(r.header("content-type"), Some("application/json"));
    // 1.17: traits.
    let r = candidates(&s, &q, "1.17").await;
    assert_eq!(r.body["provider_summaries"][&cn]["traits"], json!([hw]));
    assert!(
        r.body["provider_summaries"][&cn]
            .get("root_provider_uuid")
            .is_none()
    );
    // 1.27: every inventory; 1.29: parent and root.
    let r = candidates(&s, &q, "1.27").await;
    assert_eq!(
        r.body["provider_summaries"][&cn]["resources"][&disk],
        json!({"capacity": 100, "used": 0})
    );
    let r = candidates(&s, &q, "1.29").await;
    assert_eq!(
        r.body["provider_summaries"][&cn]["parent_provider_uuid"],
        Value::Null
    );
    assert_eq!(
        r.body["provider_summaries"][&cn]["root_provider_uuid"],
        json!(cn)
    );
    assert!(r.body["allocation_requests"][0].get("mappings").is_none());
    // 1.34: mappings.
    let r = candidates(&s, &q, "1.34").await;
    assert_eq!(
        r.body["allocation_requests"][0]["mappings"],
        json!({"": [cn]})
    );

    // Capacity, max_unit, min_unit and step_size.
    for (query, found) in [
        (format!("resources={cpu}:4"), 1),
        (format!("resources={cpu}:5"), 0),   // over max_unit
        (format!("resources={mem}:256"), 0), // under min_unit
        (format!("resources={mem}:768"), 0), // not a step
        (format!("resources={mem}:4096"), 1),
        (format!("resources={mem}:4608"), 0), // over capacity
    ] {
        let r = candidates(&s, &query, "1.12").await;
        assert_eq!(requests(&r).len(), found, "{query}: {r:?}");
    }
    // 9 more CPU than the 12 - 3 left: nothing.
    let r = candidates(&s, &format!("resources={cpu}:4&limit=1"), "1.16").await;
    assert_eq!(requests(&r).len(), 1);
    // required / forbidden traits.
    let r = candidates(&s, &format!("{q}&required={hw}"), "1.17").await;
    assert_eq!(requests(&r).len(), 1);
    let r = candidates(&s, &format!("{q}&required=!{hw}"), "1.22").await;
    assert_eq!(requests(&r).len(), 0);
    assert_eq!(r.body["provider_summaries"], json!({}));
    let other = n.trait_("OTHER");
    assert_eq!(
        s.call(Method::PUT, &format!("/traits/{other}"), Some("1.6"), None)
            .await
            .status,
        201
    );
    let r = candidates(&s, &format!("{q}&required={other}"), "1.17").await;
    assert_eq!(requests(&r).len(), 0);
    let r = candidates(&s, &format!("{q}&required=in:{other},{hw}"), "1.39").await;
    assert_eq!(requests(&r).len(), 1);
    let r = candidates(&s, &format!("{q}&required={hw}&required=!{other}"), "1.39").await;
    assert_eq!(requests(&r).len(), 1);
    // member_of.
    let agg = uuid();
    let r = candidates(&s, &format!("{q}&member_of={agg}"), "1.21").await;
    assert_eq!(requests(&r).len(), 0);
    aggregates(&s, &cn, &[&agg]).await;
    let r = candidates(&s, &format!("{q}&member_of={agg}"), "1.21").await;
    assert_eq!(requests(&r).len(), 1);
    let r = candidates(&s, &format!("{q}&member_of=in:{agg},{}", uuid()), "1.21").await;
    assert_eq!(requests(&r).len(), 1);
    let r = candidates(
        &s,
        &format!("{q}&member_of={agg}&member_of={}", uuid()),
        "1.24",
    )
    .await;
    assert_eq!(requests(&r).len(), 0);
    let r = candidates(&s, &format!("{q}&member_of=!{agg}"), "1.32").await;
    assert_eq!(requests(&r).len(), 0);
    let r = candidates(&s, &format!("{q}&member_of=!{}", uuid()), "1.32").await;
    assert_eq!(requests(&r).len(), 1);
}

#[tokio::test]
async fn sharing_provider_via_aggregate() {
    let s = Server::start().await;
    let n = Names::new();
    let (cpu, disk) = (n.class("CPU"), n.class("DISK"));
    classes(&s, &[&cpu, &disk]).await;
    let (cn1, cn2, ss) = (uuid(), uuid(), uuid());
    for rp in [&cn1, &cn2, &ss] {
        s.provider(rp, None).await;
    }
    s.simple_inventory(&cn1, &cpu, 8).await;
    s.simple_inventory(&cn2, &cpu, 8).await;
    s.simple_inventory(&ss, &disk, 500).await;
    let agg = uuid();
    aggregates(&s, &cn1, &[&agg]).await;
    aggregates(&s, &ss, &[&agg]).await;
    let q = format!("resources={cpu}:1,{disk}:100");
    // Not sharing yet.
    let r = candidates(&s, &q, "1.12").await;
    assert_eq!(requests(&r).len(), 0);
    assert_eq!(r.body["provider_summaries"], json!({}));
    traits(&s, &ss, &["MISC_SHARES_VIA_AGGREGATE"]).await;
    for version in ["1.12", "1.29", "1.36"] {
        let r = candidates(&s, &q, version).await;
        assert_eq!(
            requests(&r),
            vec![sorted(vec![part(&cn1, &cpu, 1), part(&ss, &disk, 100)])],
            "{version}"
        );
        assert_eq!(summary_uuids(&r), sorted(vec![cn1.clone(), ss.clone()]));
    }
    let r = candidates(&s, &q, "1.34").await;
    assert_eq!(
        r.body["allocation_requests"][0]["mappings"],
        json!({"": sorted(vec![cn1.clone(), ss.clone()])})
    );
    // The disk alone: from the sharing provider, once.
    let r = candidates(&s, &format!("resources={disk}:100"), "1.29").await;
    assert_eq!(requests(&r), vec![vec![part(&ss, &disk, 100)]]);
    // Granular: CPU from a compute, disk from the sharing provider.
    let r = candidates(
        &s,
        &format!("resources1={cpu}:1&resources2={disk}:100&group_policy=isolate"),
        "1.29",
    )
    .await;
    assert_eq!(
        requests(&r),
        vec![sorted(vec![part(&cn1, &cpu, 1), part(&ss, &disk, 100)])]
    );
    // member_of on the group narrows to the aggregate's trees.
    let r = candidates(&s, &format!("{q}&member_of={agg}"), "1.29").await;
    assert_eq!(requests(&r).len(), 1);
    let r = candidates(&s, &format!("{q}&member_of=!{agg}"), "1.32").await;
    assert_eq!(requests(&r).len(), 0);
}

/// A compute node with two NUMA nodes, a PF under the first:
///
/// ```text
/// cn (CPU:8, root trait)
/// ├── numa0 (MEM:2048, NUMA trait, aggregate)
/// │   └── pf0 (VF:8, PHYS trait)
/// └── numa1 (MEM:2048, NUMA trait)
/// ```
struct Tree {
    cn: String,
    numa0: String,
    numa1: String,
    pf0: String,
    cpu: String,
    mem: String,
    vf: String,
    numa: String,
    phys: String,
    root: String,
}

async fn tree(s: &Server, n: &Names) -> Tree {
    let t = Tree {
        cn: uuid(),
        numa0: uuid(),
        numa1: uuid(),
        pf0: uuid(),
        cpu: n.class("CPU"),
        mem: n.class("MEM"),
        vf: n.class("VF"),
        numa: n.trait_("NUMA"),
        phys: n.trait_("PHYS"),
        root: n.trait_("ROOT"),
    };
    classes(s, &[&t.cpu, &t.mem, &t.vf]).await;
    s.provider(&t.cn, None).await;
    s.provider(&t.numa0, Some(&t.cn)).await;
    s.provider(&t.numa1, Some(&t.cn)).await;
    s.provider(&t.pf0, Some(&t.numa0)).await;
    s.simple_inventory(&t.cn, &t.cpu, 8).await;
    s.simple_inventory(&t.numa0, &t.mem, 2048).await;
    s.simple_inventory(&t.numa1, &t.mem, 2048).await;
    s.simple_inventory(&t.pf0, &t.vf, 8).await;
    traits(s, &t.cn, &[&t.root]).await;
    traits(s, &t.numa0, &[&t.numa]).await;
    traits(s, &t.numa1, &[&t.numa]).await;
    traits(s, &t.pf0, &[&t.phys]).await;
    t
}

#[tokio::test]
async fn nested_tree() {
    let s = Server::start().await;
    let n = Names::new();
    let t = tree(&s, &n).await;
    let q = format!("resources={}:1,{}:1024", t.cpu, t.mem);
    // Before 1.29 a group cannot spread over a tree.
    let r = candidates(&s, &q, "1.28").await;
    assert_eq!(requests(&r).len(), 0);
    let r = candidates(&s, &q, "1.29").await;
    let mut expected = vec![
        sorted(vec![part(&t.cn, &t.cpu, 1), part(&t.numa0, &t.mem, 1024)]),
        sorted(vec![part(&t.cn, &t.cpu, 1), part(&t.numa1, &t.mem, 1024)]),
    ];
    expected.sort();
    assert_eq!(requests(&r), expected);
    // The whole tree is summarized, with parents and roots.
    assert_eq!(
        summary_uuids(&r),
        sorted(vec![
            t.cn.clone(),
            t.numa0.clone(),
            t.numa1.clone(),
            t.pf0.clone()
        ])
    );
    let pf = &r.body["provider_summaries"][&t.pf0];
    assert_eq!(pf["parent_provider_uuid"], json!(t.numa0));
    assert_eq!(pf["root_provider_uuid"], json!(t.cn));
    assert_eq!(pf["traits"], json!([t.phys]));
    assert_eq!(
        pf["resources"],
        json!({t.vf.clone(): {"capacity": 8, "used": 0}})
    );

    // Traits over the tree: the providers used together have them.
    let with_vf = format!("resources={}:1,{}:1", t.cpu, t.vf);
    let r = candidates(&s, &format!("{with_vf}&required={}", t.phys), "1.29").await;
    assert_eq!(requests(&r).len(), 1);
    let r = candidates(&s, &format!("{with_vf}&required=!{}", t.phys), "1.29").await;
    assert_eq!(requests(&r).len(), 0);
    let r = candidates(&s, &format!("{q}&required={}", t.numa), "1.29").await;
    assert_eq!(requests(&r).len(), 2);
    let r = candidates(
        &s,
        &format!("{q}&required=in:{},{}", t.phys, t.numa),
        "1.39",
    )
    .await;
    assert_eq!(requests(&r).len(), 2);

    // Granular groups: isolate versus none.
    let granular = format!(
        "resources={}:1&resources1={}:1024&resources2={}:1024",
        t.cpu, t.mem, t.mem
    );
    let r = candidates(&s, &format!("{granular}&group_policy=isolate"), "1.29").await;
    let both = sorted(vec![
        part(&t.cn, &t.cpu, 1),
        part(&t.numa0, &t.mem, 1024),
        part(&t.numa1, &t.mem, 1024),
    ]);
    assert_eq!(requests(&r), vec![both.clone(), both]);
    // The two orders are two candidates, told apart by their mappings.
    let r = candidates(&s, &format!("{granular}&group_policy=isolate"), "1.34").await;
    assert_eq!(r.body["allocation_requests"].as_array().unwrap().len(), 2);
    let mut mappings: Vec<Value> = r.body["allocation_requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["mappings"].clone())
        .collect();
    mappings.sort_by_key(Value::to_string);
    let mut expected = vec![
        json!({"": [t.cn], "1": [t.numa0], "2": [t.numa1]}),
        json!({"": [t.cn], "1": [t.numa1], "2": [t.numa0]}),
    ];
    expected.sort_by_key(Value::to_string);
    assert_eq!(mappings, expected);
    // none: both on one NUMA node too (2048 fits two 1024).
    let r = candidates(&s, &format!("{granular}&group_policy=none"), "1.29").await;
    let found = requests(&r);
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(found.contains(&sorted(vec![
        part(&t.cn, &t.cpu, 1),
        part(&t.numa0, &t.mem, 2048)
    ])));
    // Three of 1024 cannot fit with isolate (two NUMA nodes).
    let r = candidates(
        &s,
        &format!("{granular}&resources3={}:1024&group_policy=isolate", t.mem),
        "1.29",
    )
    .await;
    assert_eq!(requests(&r).len(), 0);
    // Named suffixes from 1.33.
    let r = candidates(
        &s,
        &format!(
            "resources_CPU={}:1&resources_MEM={}:1024&group_policy=none",
            t.cpu, t.mem
        ),
        "1.33",
    )
    .await;
    assert_eq!(requests(&r).len(), 2);

    // limit.
    let r = candidates(&s, &format!("{q}&limit=1"), "1.29").await;
    assert_eq!(requests(&r).len(), 1);
    assert_eq!(summary_uuids(&r).len(), 4);

    // in_tree, also per group.
    let other = uuid();
    s.provider(&other, None).await;
    s.simple_inventory(&other, &t.cpu, 8).await;
    let r = candidates(&s, &format!("resources={}:1", t.cpu), "1.31").await;
    assert_eq!(requests(&r).len(), 2);
    let r = candidates(
        &s,
        &format!("resources={}:1&in_tree={}", t.cpu, t.numa1),
        "1.31",
    )
    .await;
    assert_eq!(requests(&r), vec![vec![part(&t.cn, &t.cpu, 1)]]);
    let r = candidates(
        &s,
        &format!("resources1={}:1&in_tree1={other}", t.cpu),
        "1.31",
    )
    .await;
    assert_eq!(requests(&r), vec![vec![part(&other, &t.cpu, 1)]]);
    assert_eq!(summary_uuids(&r), vec![other.clone()]);
    let r = candidates(
        &s,
        &format!("resources={}:1&in_tree={}", t.cpu, uuid()),
        "1.31",
    )
    .await;
    assert_eq!(requests(&r).len(), 0);

    // root_required.
    let r = candidates(
        &s,
        &format!("resources={}:1&root_required={}", t.cpu, t.root),
        "1.35",
    )
    .await;
    assert_eq!(requests(&r), vec![vec![part(&t.cn, &t.cpu, 1)]]);
    let r = candidates(
        &s,
        &format!("resources={}:1&root_required=!{}", t.cpu, t.root),
        "1.35",
    )
    .await;
    assert_eq!(requests(&r), vec![vec![part(&other, &t.cpu, 1)]]);
    // A trait of a child is not a trait of the root.
    let r = candidates(
        &s,
        &format!("resources={}:1&root_required={}", t.cpu, t.numa),
        "1.35",
    )
    .await;
    assert_eq!(requests(&r).len(), 0);

    // member_of: each provider used, or its root, must be in the
    // aggregate; a child's aggregate alone does not admit the root's CPU.
    let agg = uuid();
    aggregates(&s, &t.numa0, &[&agg]).await;
    let r = candidates(&s, &format!("{q}&member_of={agg}"), "1.29").await;
    assert_eq!(requests(&r).len(), 0);
    aggregates(&s, &t.cn, &[&agg]).await;
    let r = candidates(&s, &format!("{q}&member_of={agg}"), "1.29").await;
    assert_eq!(requests(&r).len(), 2);
    let r = candidates(&s, &format!("{q}&member_of=!{agg}"), "1.32").await;
    assert_eq!(requests(&r).len(), 0);
}

#[tokio::test]
async fn same_subtree_and_resourceless_groups() {
    let s = Server::start().await;
    let n = Names::new();
    let t = tree(&s, &n).await;
    // Memory and a VF under one NUMA node: only numa0 has the PF.
    let q = format!(
        "resources_MEM={}:1024&resources_VF={}:1&same_subtree=_MEM,_VF&group_policy=none",
        t.mem, t.vf
    );
    let r = candidates(&s, &q, "1.36").await;
    assert_eq!(
        requests(&r),
        vec![sorted(vec![
            part(&t.numa0, &t.mem, 1024),
            part(&t.pf0, &t.vf, 1)
        ])]
    );
    assert_eq!(
        r.body["allocation_requests"][0]["mappings"],
        json!({"_MEM": [t.numa0], "_VF": [t.pf0]})
    );
    // A resourceless group: the NUMA node above the PF.
    let q = format!(
        "required_NUMA={}&resources_VF={}:1&same_subtree=_NUMA,_VF&group_policy=none",
        t.numa, t.vf
    );
    let r = candidates(&s, &q, "1.36").await;
    assert_eq!(requests(&r), vec![vec![part(&t.pf0, &t.vf, 1)]]);
    assert_eq!(
        r.body["allocation_requests"][0]["mappings"],
        json!({"_NUMA": [t.numa0], "_VF": [t.pf0]})
    );
    // The root is above everything.
    let q = format!(
        "required_ROOT={}&resources_VF={}:1&same_subtree=_ROOT,_VF&group_policy=isolate",
        t.root, t.vf
    );
    let r = candidates(&s, &q, "1.36").await;
    assert_eq!(
        r.body["allocation_requests"][0]["mappings"],
        json!({"_ROOT": [t.cn], "_VF": [t.pf0]})
    );
    // Memory of numa1 is not under the PF's NUMA node.
    let q = format!(
        "resources_MEM={}:1024&required_MEM=!{}&resources_VF={}:1&same_subtree=_MEM,_VF&group_policy=none",
        t.mem, t.numa, t.vf
    );
    let r = candidates(&s, &q, "1.36").await;
    assert_eq!(requests(&r).len(), 0);
}

#[tokio::test]
async fn errors() {
    let s = Server::start().await;
    let n = Names::new();
    let cpu = n.class("CPU");
    classes(&s, &[&cpu]).await;
    let bad = |r: &Resp, detail: &str| {
        assert_eq!(r.status, 400, "{r:?}");
        assert!(r.message().contains(detail), "{detail:?} not in {r:?}");
    };
    let r = candidates(&s, "resources=VCPU:1", "1.9").await;
    assert_eq!(r.status, 404, "{r:?}");
    let r = s.get("/allocation_candidates", "1.10").await;
    bad(&r, "'resources' is a required property");
    bad(
        &candidates(&s, "resources=", "1.10").await,
        "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.",
    );
    bad(
        &candidates(&s, "resources=VCPU:0", "1.10").await,
        "Requested resource VCPU requires amount >= 1. Got: 0.",
    );
    let r = candidates(&s, "resources=CUSTOM_NOPE_X:1", "1.10").await;
    assert_eq!(
        r.message(),
        "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE_X."
    );
    bad(
        &candidates(&s, "resources=VCPU:1&limit=5", "1.15").await,
        "'limit' was unexpected",
    );
    for limit in ["0", "-99", "cow"] {
        bad(
            &candidates(&s, &format!("resources=VCPU:1&limit={limit}"), "1.16").await,
            "Failed validating 'pattern'",
        );
    }
    bad(
        &candidates(&s, "resources=VCPU:1&required=HW_CPU_X86_SSE", "1.16").await,
        "'required' was unexpected",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&required=!HW_CPU_X86_SSE", "1.17").await,
        "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !HW_CPU_X86_SSE",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&required=", "1.22").await,
        "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC.",
    );
    let r = candidates(
        &s,
        &format!("resources={cpu}:1&required=CUSTOM_NO_SUCH"),
        "1.17",
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "No such trait(s): CUSTOM_NO_SUCH.");
    bad(
        &candidates(&s, "resources=VCPU:1&required=CUSTOM_A,!CUSTOM_A", "1.22").await,
        "Conflicting required and forbidden traits found in the following traits keys: required: (CUSTOM_A)",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&required=in:A,B", "1.38").await,
        "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:A,B",
    );
    bad(
        &candidates(
            &s,
            &format!("resources=VCPU:1&member_of={}", uuid()),
            "1.20",
        )
        .await,
        "'member_of' was unexpected",
    );
    bad(
        &candidates(
            &s,
            &format!("resources=VCPU:1&member_of={}&member_of={}", uuid(), uuid()),
            "1.23",
        )
        .await,
        "Multiple member_of parameters are not supported",
    );
    bad(
        &candidates(
            &s,
            "resources=VCPU:1&member_of=!in:282d469e-29e2-4a8a-8f2e-31b3202b696a",
            "1.31",
        )
        .await,
        "Forbidden member_of parameters are not supported in the specified microversion",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&member_of=x", "1.21").await,
        "Expected 'member_of' parameter to contain valid UUID(s).",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&resources1=VCPU:1", "1.24").await,
        "'resources1' was unexpected",
    );
    bad(
        &candidates(&s, "resources1=VCPU:1&resources2=VCPU:1", "1.25").await,
        "The \"group_policy\" parameter is required when specifying more than one \"resources{N}\" parameter.",
    );
    bad(
        &candidates(&s, "resources1=VCPU:1&group_policy=nope", "1.25").await,
        "'nope' is not one of ['none', 'isolate']",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&required1=HW_CPU_X86_SSE", "1.25").await,
        "All traits parameters must be associated with resources.  Found the following orphaned traits keys: required1",
    );
    bad(
        &candidates(
            &s,
            &format!("resources=VCPU:1&member_of1={}", uuid()),
            "1.25",
        )
        .await,
        "All member_of parameters must be associated with resources. Found the following orphaned member_of keys: member_of1",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&resources_X=VCPU:1", "1.32").await,
        "Invalid query string parameters",
    );
    bad(
        &candidates(&s, &format!("resources=VCPU:1&in_tree={}", uuid()), "1.30").await,
        "Invalid query string parameters",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&in_tree=life-is-beautiful", "1.31").await,
        "Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: life-is-beautiful",
    );
    bad(
        &candidates(&s, &format!("resources=VCPU:1&in_tree1={}", uuid()), "1.31").await,
        "All request groups must specify resources.",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&root_required=HW_CPU_X86_SSE", "1.34").await,
        "'root_required' does not match any of the regexes",
    );
    let r = candidates(
        &s,
        "resources=VCPU:1&root_required=HW_CPU_X86_SSE&root_required=HW_CPU_X86_SSE2",
        "1.35",
    )
    .await;
    bad(
        &r,
        "Query parameter 'root_required' may be specified only once.",
    );
    assert_eq!(r.code(), "placement.query.duplicate_key");
    let r = candidates(
        &s,
        "resources=VCPU:1&root_required=HW_CPU_X86_SSE,!HW_CPU_X86_SSE",
        "1.35",
    )
    .await;
    bad(
        &r,
        "Conflicting required and forbidden traits found in root_required: HW_CPU_X86_SSE",
    );
    assert_eq!(r.code(), "placement.query.bad_value");
    bad(
        &candidates(&s, "resources=VCPU:1&root_required=in:A,B", "1.39").await,
        "only supported since microversion 1.39",
    );
    let r = candidates(&s, "resources=VCPU:1&root_required=CUSTOM_NO_SUCH", "1.35").await;
    assert_eq!(r.message(), "No such trait(s): CUSTOM_NO_SUCH.");
    bad(
        &candidates(&s, "resources_A=VCPU:1&same_subtree=_A", "1.35").await,
        "'same_subtree' does not match any of the regexes",
    );
    let r = candidates(&s, "resources_A=VCPU:1&same_subtree=_A,", "1.36").await;
    bad(
        &r,
        "Empty string (unsuffixed group) can not be specified in `same_subtree` ",
    );
    assert_eq!(r.code(), "placement.query.bad_value");
    let r = candidates(&s, "required_A=HW_CPU_X86_SSE", "1.36").await;
    bad(
        &r,
        "There must be at least one resources or resources[$S] parameter.",
    );
    assert_eq!(r.code(), "placement.query.missing_value");
    bad(
        &candidates(&s, "resources=VCPU:1&required_A=HW_CPU_X86_SSE", "1.36").await,
        "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['_A'].",
    );
    bad(
        &candidates(&s, "resources=VCPU:1&same_subtree=_A", "1.36").await,
        "Real suffixes should be specified in `same_subtree`: ['_A'] not found in [''].",
    );
}

#[tokio::test]
async fn policy() {
    let s = Server::start().await;
    let path = "/allocation_candidates?resources=VCPU:1";
    let r = s
        .call_as(
            &[("x-auth-token", "user"), ("x-roles", "reader")],
            Method::GET,
            path,
            Some("1.10"),
            None,
        )
        .await;
    assert_eq!(r.status, 403, "{r:?}");
    let r = s.get(path, "1.10").await;
    assert_eq!(r.status, 200, "{r:?}");
}

/// Many interchangeable children under one root and many groups: the
/// pruned walk answers (a plain product would be 8^8 combinations, which
/// would hold the test for minutes; no time is asserted).
#[tokio::test]
async fn wide_tree_stays_fast() {
    let s = Server::start_with(|c| c.max_allocation_candidates = 1000).await;
    let n = Names::new();
    let gpu = n.class("GPU");
    classes(&s, &[&gpu]).await;
    let root = uuid();
    s.provider(&root, None).await;
    for _ in 0..8 {
        let child = uuid();
        s.provider(&child, Some(&root)).await;
        s.simple_inventory(&child, &gpu, 1).await;
    }
    let query: Vec<String> = (1..=8).map(|i| format!("resources{i}={gpu}:1")).collect();
    let r = candidates(
        &s,
        &format!("{}&group_policy=none", query.join("&")),
        "1.29",
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    // 8! candidates, bounded by max_allocation_candidates.
    assert_eq!(
        r.body["allocation_requests"].as_array().unwrap().len(),
        1000
    );
}

/// The traits of a provider summary come in the order upstream's query
/// gives them (trait id, as `GET /resource_providers/{uuid}/traits`
/// lists them), not by name: a standard trait comes before a custom one
/// made later (upstream's allocation-candidates-root-required.yaml).
#[tokio::test]
async fn summary_traits_in_trait_id_order() {
    let s = Server::start().await;
    let n = Names::new();
    let class = n.class("ORDER");
    classes(&s, &[&class]).await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, &class, 4).await;
    let custom = n.trait_("ORDER");
    traits(&s, &rp, &["HW_NUMA_ROOT", &custom]).await;
    let r = candidates(&s, &format!("resources={class}:1"), "1.17").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.body["provider_summaries"][&rp]["traits"],
        json!(["HW_NUMA_ROOT", custom])
    );
    let listed = s
        .get(&format!("/resource_providers/{rp}/traits"), "1.6")
        .await;
    assert_eq!(listed.body["traits"], json!(["HW_NUMA_ROOT", custom]));
}

/// A cloud larger than one statement may bind (SQLite takes 32,766 values,
/// PostgreSQL and MySQL 65,535): every one of 66,000 providers is a
/// candidate and has its summary, where binding all their trees at once
/// failed with a 500.
#[tokio::test]
async fn more_providers_than_one_statement_binds() {
    const PROVIDERS: usize = 66_000;
    let s = Server::start().await;
    let n = Names::new();
    let class = n.class("MANY");
    classes(&s, &[&class]).await;
    // Written straight to the database: 132,000 requests through the API
    // would take minutes.
    let mut conn = s.other_connection().await;
    let prefix = &n.0;
    for first in (0..PROVIDERS).step_by(1000) {
        let values: Vec<String> = (first..first + 1000)
            .map(|i| format!("('{}', 'many-{prefix}-{i}', 1)", many_uuid(prefix, i)))
            .collect();
        sqlx::query(&format!(
            "INSERT INTO resource_providers (uuid, name, generation) VALUES {}",
            values.join(", ")
        ))
        .execute(&mut conn)
        .await
        .expect("insert providers");
    }
    let like = format!("many-{prefix}-%");
    sqlx::query(&s.sql("UPDATE resource_providers SET root_provider_id = id WHERE name LIKE ?"))
        .bind(&like)
        .execute(&mut conn)
        .await
        .expect("roots");
    sqlx::query(&s.sql(
        "INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, \
         min_unit, max_unit, step_size, allocation_ratio) \
         SELECT rp.id, rc.id, 4, 0, 1, 4, 1, 1.0 FROM resource_providers rp, resource_classes rc \
         WHERE rp.name LIKE ? AND rc.name = ?",
    ))
    .bind(&like)
    .bind(&class)
    .execute(&mut conn)
    .await
    .expect("inventories");

    let r = candidates(&s, &format!("resources={class}:1"), "1.39").await;
    assert_eq!(r.status, 200, "{}", &r.text[..r.text.len().min(500)]);
    let requests = r.body["allocation_requests"].as_array().expect("requests");
    assert_eq!(requests.len(), PROVIDERS);
    let summaries = r.body["provider_summaries"].as_object().expect("summaries");
    assert_eq!(summaries.len(), PROVIDERS);
    // The last provider, read in the last statement, is summarized whole.
    let last = many_uuid(prefix, PROVIDERS - 1);
    assert_eq!(
        summaries[&last]["resources"][&class],
        json!({"capacity": 4, "used": 0})
    );
    assert_eq!(summaries[&last]["root_provider_uuid"], json!(last));
}

/// The uuid of provider `i` of [`more_providers_than_one_statement_binds`].
fn many_uuid(prefix: &str, i: usize) -> String {
    format!(
        "{}-0000-4000-8000-{i:012x}",
        &prefix[..8].to_ascii_lowercase()
    )
}

/// `limit` and `max_allocation_candidates` keep the first candidates of
/// the whole answer, and only their summaries, also where a lone group's
/// search stops reading providers early: a provider without room is
/// skipped, not counted.
#[tokio::test]
async fn limit_keeps_the_first_of_the_whole_answer() {
    for max in [None, Some(2)] {
        // A class of its own each time: on a shared database the first
        // server's providers stay.
        let class = Names::new().class("FIRST");
        let s = Server::start_with(|c| {
            if let Some(max) = max {
                c.max_allocation_candidates = max;
            }
        })
        .await;
        classes(&s, &[&class]).await;
        let mut rps = Vec::new();
        for i in 0..6 {
            let rp = uuid();
            s.provider(&rp, None).await;
            // The second provider has no room for 2.
            s.simple_inventory(&rp, &class, if i == 1 { 1 } else { 4 })
                .await;
            rps.push(rp);
        }
        let all = candidates(&s, &format!("resources={class}:2"), "1.39").await;
        assert_eq!(all.status, 200, "{all:?}");
        let every = all.body["allocation_requests"]
            .as_array()
            .expect("requests");
        let expected_len = if max.is_some() { 2 } else { 5 };
        assert_eq!(every.len(), expected_len, "{all:?}");
        let first: Vec<Value> = [0, 2]
            .iter()
            .map(|i| json!({"allocations": {&rps[*i]: {"resources": {&class: 2}}}, "mappings": {"": [&rps[*i]]}}))
            .collect();
        assert_eq!(every[..2], first[..]);
        let limited = candidates(&s, &format!("resources={class}:2&limit=2"), "1.39").await;
        assert_eq!(limited.status, 200, "{limited:?}");
        assert_eq!(limited.body["allocation_requests"], json!(first));
        let mut summarized: Vec<&String> = limited.body["provider_summaries"]
            .as_object()
            .expect("summaries")
            .keys()
            .collect();
        summarized.sort();
        let mut expected = vec![&rps[0], &rps[2]];
        expected.sort();
        assert_eq!(summarized, expected);
    }
}

/// The summaries of trees read with their roots listed (a few of the
/// cloud's trees) and read by a scan (most of them; once more with more
/// than a hundred classes besides the request's, where the scan names
/// the known classes rather than the others): every inventory, the classes
/// not asked for included, and every trait, whichever way.
#[tokio::test]
async fn tree_summaries_whichever_way_the_trees_are_read() {
    let s = Server::start().await;
    let n = Names::new();
    let (cpu, disk, extra) = (n.class("CPU"), n.class("DISK"), n.class("EXTRA"));
    classes(&s, &[&cpu, &disk, &extra]).await;
    let (first, other) = (n.trait_("FIRST"), n.trait_("OTHER"));
    let mut trees = Vec::new();
    for i in 0..5 {
        let (root, child) = (uuid(), uuid());
        s.provider(&root, None).await;
        s.provider(&child, Some(&root)).await;
        s.set_inventories(&root, &[(&cpu, 8), (&extra, 4)]).await;
        s.set_inventories(&child, &[(&disk, 100)]).await;
        let tag = if i == 0 { &first } else { &other };
        traits(&s, &child, &[tag, "HW_NIC_SRIOV"]).await;
        trees.push((root, child, tag.clone()));
    }
    let check = |r: &Resp, trees: &[(String, String, String)]| {
        assert_eq!(requests(r).len(), trees.len(), "{r:?}");
        for (root, child, tag) in trees {
            let summaries = &r.body["provider_summaries"];
            assert_eq!(
                summaries[root]["resources"],
                json!({cpu.clone(): {"capacity": 8, "used": 0}, extra.clone(): {"capacity": 4, "used": 0}}),
                "{r:?}"
            );
            assert_eq!(summaries[root]["traits"], json!([]));
            assert_eq!(
                summaries[child]["resources"],
                json!({disk.clone(): {"capacity": 100, "used": 0}})
            );
            let mut expected = vec!["HW_NIC_SRIOV".to_owned(), tag.clone()];
            let mut got: Vec<String> = summaries[child]["traits"]
                .as_array()
                .expect("traits")
                .iter()
                .map(|t| t.as_str().expect("a name").to_owned())
                .collect();
            expected.sort();
            got.sort();
            assert_eq!(got, expected);
            assert_eq!(summaries[child]["root_provider_uuid"], json!(root));
        }
    };
    let q = format!("resources={cpu}:1,{disk}:10");
    // One tree of five: listed.
    let r = candidates(&s, &format!("{q}&required={first}"), "1.39").await;
    check(&r, &trees[..1]);
    // Five of five: scanned.
    let r = candidates(&s, &q, "1.39").await;
    check(&r, &trees);
    for i in 0..101 {
        s.custom_class(&n.class(&format!("MORE{i}"))).await;
    }
    let r = candidates(&s, &q, "1.39").await;
    check(&r, &trees);
}

/// `[placement] randomize_allocation_candidates`: `limit` keeps a random
/// sample of every candidate (so Nova's `limit` does not send every boot
/// to the same first hosts) with only its summaries, and an answer with
/// nothing to cut is every candidate, shuffled; without it the order is
/// the same on every request. Twenty providers, twelve draws of one: the
/// chance that a fair sample repeats one provider every time is 20^-11.
#[tokio::test]
async fn randomize_samples_within_limit() {
    for randomize in [false, true] {
        let class = Names::new().class("RANDOM");
        let s = Server::start_with(|c| c.randomize_allocation_candidates = randomize).await;
        classes(&s, &[&class]).await;
        let mut rps = Vec::new();
        for _ in 0..20 {
            let rp = uuid();
            s.provider(&rp, None).await;
            s.simple_inventory(&rp, &class, 4).await;
            rps.push(rp);
        }
        rps.sort();
        let mut firsts = std::collections::BTreeSet::new();
        for _ in 0..12 {
            let r = candidates(&s, &format!("resources={class}:1&limit=1"), "1.39").await;
            assert_eq!(r.status, 200, "{r:?}");
            let areqs = r.body["allocation_requests"].as_array().expect("requests");
            assert_eq!(areqs.len(), 1, "{r:?}");
            let chosen = areqs[0]["mappings"][""][0].as_str().unwrap().to_owned();
            let summaries: Vec<&String> = r.body["provider_summaries"]
                .as_object()
                .expect("summaries")
                .keys()
                .collect();
            assert_eq!(summaries, [&chosen], "only the chosen one's summary");
            firsts.insert(chosen);
        }
        if randomize {
            assert!(firsts.len() > 1, "the same provider every time: {firsts:?}");
        } else {
            assert_eq!(firsts.len(), 1, "{firsts:?}");
        }
        // Nothing to cut: every candidate and every summary, in whatever order.
        let all = candidates(&s, &format!("resources={class}:1"), "1.39").await;
        let mut chosen: Vec<String> = all.body["allocation_requests"]
            .as_array()
            .expect("requests")
            .iter()
            .map(|a| a["mappings"][""][0].as_str().unwrap().to_owned())
            .collect();
        chosen.sort();
        assert_eq!(chosen, rps);
        assert_eq!(
            all.body["provider_summaries"].as_object().unwrap().len(),
            20
        );
    }
}

/// A lone group in a flat cloud with `limit` reads the providers a window
/// of ids at a time and stops once it has enough: the answer is the same
/// as the whole search's first candidates, whether the first window has
/// room or not, with `root_required` (traits wanted and forbidden) and
/// with the usage of every provider summarized. On its own database the
/// windows are taken; on a shared one with trees the whole search runs,
/// and the answer must be the same.
#[tokio::test]
async fn limit_in_a_large_flat_cloud_reads_windows() {
    let n = Names::new();
    let (class, wanted) = (n.class("WINDOW"), n.trait_("WANTED"));
    let s = Server::start().await;
    classes(&s, &[&class]).await;
    let mut rps = Vec::new();
    // More providers than the first window's ids: the first hundred
    // without room for 2, then fifty with room; every other one wanted.
    for i in 0..150 {
        let rp = uuid();
        s.provider(&rp, None).await;
        s.simple_inventory(&rp, &class, if i < 100 { 1 } else { 4 })
            .await;
        if i % 2 == 0 {
            traits(&s, &rp, &[&wanted]).await;
        }
        rps.push(rp);
    }
    s.allocate(&rps[101], &class, 1).await;
    let first = |r: &Resp| -> Vec<String> {
        assert_eq!(r.status, 200, "{r:?}");
        r.body["allocation_requests"]
            .as_array()
            .expect("requests")
            .iter()
            .map(|a| a["mappings"][""][0].as_str().expect("a mapping").to_owned())
            .collect()
    };
    let whole = candidates(&s, &format!("resources={class}:2"), "1.39").await;
    assert_eq!(first(&whole), rps[100..].to_vec());
    for (filter, expected) in [
        (String::new(), vec![100, 101, 102]),
        (format!("&root_required={wanted}"), vec![100, 102, 104]),
        (format!("&root_required=!{wanted}"), vec![101, 103, 105]),
    ] {
        let r = candidates(&s, &format!("resources={class}:2&limit=3{filter}"), "1.39").await;
        let expected: Vec<String> = expected.iter().map(|i| rps[*i].clone()).collect();
        assert_eq!(first(&r), expected, "{filter}");
        let summaries = r.body["provider_summaries"].as_object().expect("summaries");
        assert_eq!(
            sorted(summaries.keys().cloned().collect()),
            sorted(expected.clone()),
            "{filter}: the summaries of the candidates kept only"
        );
        for rp in &expected {
            let used = if *rp == rps[101] { 1 } else { 0 };
            assert_eq!(
                summaries[rp]["resources"][&class],
                json!({"capacity": 4, "used": used}),
                "{filter}"
            );
        }
    }
    // A limit above what the cloud holds: every candidate, as without one.
    let r = candidates(&s, &format!("resources={class}:2&limit=1000"), "1.39").await;
    assert_eq!(first(&r), rps[100..].to_vec());
    // A wanted trait no root has ends the search, as before.
    let none = n.trait_("NOBODY");
    let put = s
        .call(Method::PUT, &format!("/traits/{none}"), Some("1.6"), None)
        .await;
    assert_eq!(put.status, 201, "{put:?}");
    let r = candidates(
        &s,
        &format!("resources={class}:2&limit=3&root_required={none}"),
        "1.39",
    )
    .await;
    assert_eq!(first(&r), Vec::<String>::new());
}
