//! Exact immediate dominators and retained sizes on the fixtures (through the
//! library and through `report --json --objects`), property tests against a
//! brute-force oracle, and a chain long enough to overflow any recursion.

use heaptui_testkit::common;

use std::collections::HashMap;

use proptest::prelude::*;

use heaptui_core::graph::{
    compute_dominators, Csr, DominatorTree, PackedRows, NOT_REACHABLE, ROOTS_KEPT, SUPER_ROOT,
};
use heaptui_core::model::ObjectIdx;
use heaptui_core::progress::Progress;

use common::{analyse_bytes, analyse_fixture, fixture, ix, small_heap, Oracle, SmallHeap};

/// What the tests expect of one object: `Some((idom, retained bytes,
/// retained objects))` with idom `None` for the super-root's children; `None`
/// for an unreachable object.
type Expect = Option<(Option<&'static str>, u64, u64)>;

const SR: Option<&str> = None;

fn check_library(name: &str, expected: &[(&str, Expect)]) {
    let a = analyse_fixture(name);
    let d = a.dump();
    assert_eq!(
        d.objects(),
        expected.len(),
        "{name}: every object is listed"
    );
    for &(id, want) in expected {
        let o = ix(d, id).index();
        let got = match a.dom.idom.get(o) {
            NOT_REACHABLE => None,
            idom => Some((
                (idom != SUPER_ROOT).then(|| d.id_hex(ObjectIdx(idom))),
                a.dom.retained_bytes(o),
                a.dom.retained_objects(o) as u64,
            )),
        };
        let want = want.map(|(i, b, n)| (i.map(str::to_string), b, n));
        assert_eq!(got, want, "{name}: object {id}");
        if want.is_none() {
            assert_eq!(a.dom.retained_bytes(o), 0, "{name}: {id} unreachable");
            assert_eq!(a.dom.retained_objects(o), 0, "{name}: {id} unreachable");
        }
    }
    let reachable: Vec<_> = expected.iter().filter_map(|e| e.1).collect();
    assert_eq!(a.dom.reachable_objects, reachable.len() as u64);
}

fn report_json(path: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let out = common::heaptui()
        .arg("report")
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check_binary(name: &str, expected: &[(&str, Expect)]) {
    let v = report_json(&fixture(name), &["--json", "--objects", "--top", "0"]);
    let objects = v["objects"].as_array().unwrap();
    assert_eq!(objects.len(), expected.len());
    let by_id: HashMap<&str, &serde_json::Value> = objects
        .iter()
        .map(|o| (o["id"].as_str().unwrap(), o))
        .collect();
    for &(id, want) in expected {
        let o = by_id[id];
        match want {
            None => {
                assert_eq!(o["reachable"], false, "{name}: {id}");
                assert!(o.get("idom").is_none(), "{name}: {id} has no idom key");
                assert_eq!(o["retained_bytes"], 0);
                assert_eq!(o["retained_objects"], 0);
            }
            Some((idom, bytes, objects)) => {
                assert_eq!(o["reachable"], true, "{name}: {id}");
                match idom {
                    None => assert!(o["idom"].is_null(), "{name}: {id}"),
                    Some(i) => assert_eq!(o["idom"], i, "{name}: {id}"),
                }
                assert_eq!(o["retained_bytes"], bytes, "{name}: {id}");
                assert_eq!(o["retained_objects"], objects, "{name}: {id}");
            }
        }
    }
    // The super-root's children, by retained bytes descending.
    let mut top: Vec<(u64, &str)> = expected
        .iter()
        .filter_map(|&(id, e)| e.filter(|e| e.0.is_none()).map(|e| (e.1, id)))
        .collect();
    top.sort_by_key(|t| std::cmp::Reverse(t.0));
    let listed: Vec<u64> = v["dominators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["retained_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(listed, top.iter().map(|t| t.0).collect::<Vec<_>>());
}

fn check(name: &str, expected: &[(&str, Expect)]) {
    check_library(name, expected);
    check_binary(name, expected);
}

#[test]
fn devtools_six_nodes() {
    // A and B are the roots; C is reached from both; D only via B, E via C.
    check(
        "devtools_six_nodes.txt",
        &[
            ("a", Some((SR, 2, 1))),
            ("b", Some((SR, 8, 2))),
            ("c", Some((SR, 10, 2))),
            ("d", Some((Some("b"), 5, 1))),
            ("e", Some((Some("c"), 6, 1))),
        ],
    );
}

#[test]
fn lengauer_tarjan_example() {
    // Idoms from the paper: F, G → C; J → G; L → D; the rest → R.
    let r = Some("100");
    check(
        "lengauer_tarjan.txt",
        &[
            ("100", Some((SR, 0x1fff, 13))),
            ("101", Some((r, 0x2, 1))),
            ("102", Some((r, 0x4, 1))),
            ("103", Some((r, 0x8 + 0x40 + 0x80 + 0x400, 4))),
            ("104", Some((r, 0x10 + 0x1000, 2))),
            ("105", Some((r, 0x20, 1))),
            ("106", Some((Some("103"), 0x40, 1))),
            ("107", Some((Some("103"), 0x80 + 0x400, 2))),
            ("108", Some((r, 0x100, 1))),
            ("109", Some((r, 0x200, 1))),
            ("10a", Some((Some("107"), 0x400, 1))),
            ("10b", Some((r, 0x800, 1))),
            ("10c", Some((Some("104"), 0x1000, 1))),
        ],
    );
}

#[test]
fn dominator_shapes() {
    let mut e: Vec<(&str, Expect)> = vec![
        // Diamond 1 → {2, 3} → 4 → 5.
        ("1", Some((SR, 31, 5))),
        ("2", Some((Some("1"), 2, 1))),
        ("3", Some((Some("1"), 4, 1))),
        ("4", Some((Some("1"), 24, 2))),
        ("5", Some((Some("4"), 16, 1))),
        // 10 → 11 ⟲, 11 ⇄ 12, 12 → 13.
        ("10", Some((SR, 15, 4))),
        ("11", Some((Some("10"), 14, 3))),
        ("12", Some((Some("11"), 12, 2))),
        ("13", Some((Some("12"), 8, 1))),
        // Two entries 21, 22 into the loop 21 ⇄ 22; 22 → 23.
        ("20", Some((SR, 15, 4))),
        ("21", Some((Some("20"), 2, 1))),
        ("22", Some((Some("20"), 12, 2))),
        ("23", Some((Some("22"), 8, 1))),
        // 30 → 31 → 33, 30 → 32 → 34, 33 ⇄ 34, 33 → 35: the DFS reaches 33
        // through 31 but 34 can enter it too, so idom(33) is 30, not 31.
        ("30", Some((SR, 63, 6))),
        ("31", Some((Some("30"), 2, 1))),
        ("32", Some((Some("30"), 4, 1))),
        ("33", Some((Some("30"), 40, 2))),
        ("34", Some((Some("30"), 16, 1))),
        ("35", Some((Some("33"), 32, 1))),
        // Parallel edges 50 ⇉ 51 ⇉ 52 and 51's self-loop change nothing.
        ("50", Some((SR, 7, 3))),
        ("51", Some((Some("50"), 6, 2))),
        ("52", Some((Some("51"), 4, 1))),
    ];
    // The chain 40 → 41 → … → 49, one byte each.
    const CHAIN: [&str; 10] = ["40", "41", "42", "43", "44", "45", "46", "47", "48", "49"];
    for k in 0..10 {
        let idom = if k == 0 { None } else { Some(CHAIN[k - 1]) };
        e.push((CHAIN[k], Some((idom, 10 - k as u64, 10 - k as u64))));
    }
    check("dominator_shapes.txt", &e);
}

#[test]
fn seed_004_both_variants() {
    // As printed: only the two rooted strings are reachable.
    check(
        "seed004_as_printed.txt",
        &[
            ("7c79f", None),
            ("7cb42", None),
            ("1ce004", None),
            ("1ce056", None),
            ("22c81e", Some((SR, 0x24, 1))),
            ("22c823", Some((SR, 0x28, 1))),
        ],
    );
    let a = Some("22c81b");
    let arr = Some("1ce056");
    let s = |id| (id, Some((arr, 0x1c, 1)));
    check(
        "seed004_corrected.txt",
        &[
            // 0x30 + (0x118 + 8 × 0x1c) + 0x18
            ("22c81b", Some((SR, 48 + 504 + 24, 11))),
            ("1ce056", Some((a, 504, 9))),
            ("1ce004", Some((a, 24, 1))),
            s("1ce11f"),
            s("1ce14c"),
            s("1ce079"),
            s("1ce113"),
            s("1ce116"),
            s("1ce267"),
            s("1ce26a"),
            s("1ce26d"),
            // Reached through 1ce079 and from the root 22c81e.
            ("7c79f", Some((SR, 100, 1))),
            ("7cb42", None),
            ("22c81e", Some((SR, 0x24, 1))),
            ("22c823", Some((SR, 0x28, 1))),
        ],
    );
}

#[test]
fn two_appdomains() {
    check(
        "two_appdomains.txt",
        &[
            ("100", Some((SR, 0x10, 1))),
            // Referenced from both sections' roots.
            ("108", Some((SR, 0x20, 1))),
            ("200", Some((SR, 0x30 + 0x40 + 8, 3))),
            ("208", Some((Some("200"), 0x40, 1))),
            ("210", Some((Some("200"), 8, 1))),
        ],
    );
}

#[test]
fn weak_roots() {
    check(
        "weak_roots.txt",
        &[
            // 3 is referenced by 1 but also strongly rooted itself.
            ("1", Some((SR, 0x10, 1))),
            ("3", Some((SR, 0x30, 1))),
            // Only weak roots (flags 2 and 3) hold 2, 4 and 5.
            ("2", None),
            ("4", None),
            ("5", None),
        ],
    );
}

#[test]
fn garbage_and_dangling() {
    check(
        "garbage_dangling.txt",
        &[
            ("1", Some((SR, 0x10 + 8 + 8, 3))),
            ("2", Some((Some("1"), 8, 1))),
            ("3", Some((Some("1"), 8, 1))),
            ("4", None),
            ("5", None),
        ],
    );
}

#[test]
fn messy_whitespace_and_unknown_kinds() {
    check(
        "messy_whitespace.txt",
        &[
            ("10", Some((SR, 0x20 + 4, 2))),
            ("18", Some((Some("10"), 4, 1))),
            ("20", Some((SR, 8, 1))),
        ],
    );
    // Kind 9 and flags 0x18 are strong; 0x1a has the weak bit.
    check(
        "unknown_kinds.txt",
        &[
            ("1", Some((SR, 0x10, 1))),
            ("2", Some((SR, 0x10, 1))),
            ("3", None),
        ],
    );
}

/// Library results against the oracle, for one random heap.
fn agrees_with_oracle(h: &SmallHeap) -> Result<(), TestCaseError> {
    if h.n() == 0 {
        return Ok(());
    }
    let a = analyse_bytes(h.to_dump_text().as_bytes());
    let d = a.dump();
    let oracle = Oracle::new(h);
    let node = |i: usize| ix(d, &format!("{:x}", SmallHeap::id(i))).raw();
    for b in 0..h.n() {
        let o = node(b) as usize;
        if !oracle.reachable[b] {
            prop_assert_eq!(a.dom.idom.get(o), NOT_REACHABLE);
            prop_assert_eq!(a.dom.retained_bytes(o), 0);
            prop_assert_eq!(a.dom.retained_objects(o), 0);
            continue;
        }
        let want = match oracle.idom(b) {
            None => SUPER_ROOT,
            Some(i) => node(i),
        };
        prop_assert_eq!(a.dom.idom.get(o), want, "idom of node {}", b);
        prop_assert_eq!(a.dom.retained_bytes(o), oracle.retained_bytes(h, b));
        prop_assert_eq!(a.dom.retained_objects(o) as u64, oracle.retained_objects(b));
        for x in 0..h.n() {
            prop_assert_eq!(
                a.dom.dominates(node(x), node(b)),
                oracle.dominates(x, b),
                "dominates({}, {})",
                x,
                b
            );
        }
    }
    let reachable = oracle.reachable.iter().filter(|&&r| r).count() as u64;
    prop_assert_eq!(a.dom.reachable_objects, reachable);
    let bytes: u64 = (0..h.n())
        .filter(|&i| oracle.reachable[i])
        .map(|i| h.sizes[i])
        .sum();
    prop_assert_eq!(a.dom.reachable_bytes, bytes);
    children_agree(&a.dom)
}

/// Each node's children, read off the preorder numbering, are exactly the
/// nodes whose idom it is, in ascending preorder numbers; sorted, they are
/// by retained bytes descending then index, and the largest `k` their
/// prefix.
fn children_agree(dom: &DominatorTree) -> Result<(), TestCaseError> {
    let n = dom.idom.len();
    for (k, o) in dom.at_preorder.iter().enumerate() {
        prop_assert_eq!(dom.preorder_number.get(o as usize) as usize, k);
    }
    let mut total = 0;
    for p in 0..=n as u32 {
        let idom = if p as usize == n { SUPER_ROOT } else { p };
        let kids: Vec<u32> = dom.children(p).collect();
        let mut want: Vec<u32> = (0..n as u32)
            .filter(|&c| dom.idom.get(c as usize) == idom)
            .collect();
        let mut got = kids.clone();
        got.sort_unstable();
        prop_assert_eq!(&got, &want, "children of {}", p);
        prop_assert!(kids.windows(2).all(
            |w| dom.preorder_number.get(w[0] as usize) < dom.preorder_number.get(w[1] as usize)
        ));
        want.sort_by_key(|&c| (std::cmp::Reverse(dom.retained_bytes(c as usize)), c));
        prop_assert_eq!(&dom.children_sorted(p), &want);
        for k in [0, 1, 2, want.len()] {
            let top = dom.largest_children(p, k);
            prop_assert_eq!(&top[..], &want[..k.min(want.len())]);
        }
        prop_assert_eq!(dom.largest_child(p), want.first().copied());
        prop_assert_eq!(dom.has_children(p), !want.is_empty());
        total += kids.len();
    }
    prop_assert_eq!(total as u64, dom.reachable_objects);
    let roots = dom.children_sorted(n as u32);
    prop_assert_eq!(dom.largest_roots(), &roots[..roots.len().min(ROOTS_KEPT)]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn dominators_agree_with_brute_force(h in small_heap(12)) {
        agrees_with_oracle(&h)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Bigger, denser graphs through the binary: the JSON is the contract.
    #[test]
    fn report_objects_agree_with_brute_force(h in small_heap(30)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("random.txt");
        std::fs::write(&path, h.to_dump_text()).unwrap();
        let v = report_json(&path, &["--json", "--objects"]);
        let oracle = Oracle::new(&h);
        let objects = v["objects"].as_array().unwrap();
        prop_assert_eq!(objects.len(), h.n());
        for (b, o) in objects.iter().enumerate() {
            // Objects are listed in file order, which is node order.
            prop_assert_eq!(o["id"].as_str().unwrap(), format!("{:x}", SmallHeap::id(b)));
            prop_assert_eq!(o["reachable"].as_bool().unwrap(), oracle.reachable[b]);
            if !oracle.reachable[b] {
                prop_assert!(o.get("idom").is_none());
                prop_assert_eq!(o["retained_bytes"].as_u64().unwrap(), 0);
                continue;
            }
            let idom = oracle.idom(b).map(|i| format!("{:x}", SmallHeap::id(i)));
            prop_assert_eq!(o["idom"].as_str().map(str::to_string), idom);
            prop_assert_eq!(o["retained_bytes"].as_u64().unwrap(), oracle.retained_bytes(&h, b));
            prop_assert_eq!(o["retained_objects"].as_u64().unwrap(), oracle.retained_objects(b));
        }
    }
}

/// The tree as the report's pipeline hands it on (its idom and preorder
/// numbers set aside during the duplicates' candidates, its preorder
/// during the held duplicates, each made again after) against the tree
/// computed afresh; and meanwhile reachability and the super-root read
/// the same.
fn set_aside_comes_back(h: &SmallHeap) -> Result<(), TestCaseError> {
    use heaptui_core::testing::{with_parents_aside, with_preorder_aside};
    let a = analyse_bytes(h.to_dump_text().as_bytes());
    let fresh = DominatorTree::compute(&a.graph, &Progress::new()).unwrap();
    let same = |x: &DominatorTree, y: &DominatorTree| {
        x.idom == y.idom && x.preorder_number == y.preorder_number && x.at_preorder == y.at_preorder
    };
    prop_assert!(same(&a.dom, &fresh), "the pipeline's tree");
    let n = fresh.super_root();
    let reachable: Vec<bool> = (0..n).map(|o| fresh.is_reachable(o)).collect();
    let read = |t: &DominatorTree| {
        let r: Vec<bool> = (0..n).map(|o| t.is_reachable(o)).collect();
        (t.super_root(), r)
    };
    let mut dom = fresh.clone();
    let (seen, held) = with_parents_aside(&mut dom, |t| {
        let r: Vec<bool> = (0..n).map(|o| t.is_reachable(o)).collect();
        (t.super_root(), r)
    });
    prop_assert_eq!(&seen, &(n, reachable.clone()));
    prop_assert_eq!(held, (0, 0), "idom and preorder numbers set aside");
    prop_assert!(same(&dom, &fresh), "idom and preorder numbers made again");
    let (seen, at_len) = with_preorder_aside(&mut dom, |t| (read(t), t.at_preorder.len()));
    prop_assert_eq!(&seen, &(n, reachable));
    prop_assert_eq!(at_len, 0, "preorder set aside");
    prop_assert!(same(&dom, &fresh), "preorder made again");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parts_set_aside_come_back_exactly(h in small_heap(30)) {
        set_aside_comes_back(&h)?;
    }
}

#[test]
fn a_long_chain_does_not_overflow_the_stack() {
    // root → 1 → 2 → … → n-1: recursion over the DFS or the path compression
    // would need n frames. Run on a thread with a small stack to be sure.
    let n: usize = 10_000_000;
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let degrees: Vec<u32> = (0..n).map(|i| u32::from(i + 1 < n)).collect();
            let refs = Csr::from_degrees(&degrees, (1..n as u32).collect());
            let retainers = PackedRows::from_csr(&refs.transpose());
            let sizes = vec![1u64; n];
            let dom =
                compute_dominators(n, &refs, &retainers, &[0], &sizes.into(), &Progress::new())
                    .unwrap();
            assert_eq!(dom.idom.get(0), SUPER_ROOT);
            for (i, d) in dom.idom.iter().enumerate().skip(1) {
                assert_eq!(d as usize, i - 1);
            }
            assert_eq!(dom.retained_bytes(0), n as u64);
            assert_eq!(dom.retained_objects(n / 2) as usize, n - n / 2);
            assert_eq!(dom.retained_bytes(n - 1), 1);
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Retained bytes of 2^32 - 1 or more (a side table beside 4-byte values)
/// read back exactly: a chain 0 → 1 → … → 99 whose last object is
/// 2^32 - 100 bytes and the others 1 each, so that object k retains
/// 2^32 - 1 - k (the chain's root exactly 2^32 - 1, its child one less),
/// and a second root holding 40 GiB in 50 objects beside 1,000 small ones.
#[test]
fn retained_sums_over_4_gib_are_exact() {
    let edge = u32::MAX as u64;
    // Chain 0..100 (0 the root), then object 100 a root of its own whose
    // children 101..151 are 800 MiB each, then 1,000 small leaves of 100.
    let n = 1151usize;
    let mut degrees = vec![0u32; n];
    let mut targets = Vec::new();
    for (i, d) in degrees.iter_mut().enumerate().take(99) {
        *d = 1;
        targets.push(i as u32 + 1);
    }
    degrees[100] = 1050;
    targets.extend(101..n as u32);
    let refs = Csr::from_degrees(&degrees, targets);
    let retainers = PackedRows::from_csr(&refs.transpose());
    let mut sizes = vec![1u64; n];
    sizes[99] = edge - 99; // the chain's root retains exactly 2^32 - 1
    for s in &mut sizes[101..151] {
        *s = 800 << 20;
    }
    let dom = compute_dominators(
        n,
        &refs,
        &retainers,
        &[0, 100],
        &sizes.into(),
        &Progress::new(),
    )
    .unwrap();
    for k in 0..100u64 {
        assert_eq!(dom.retained_bytes(k as usize), edge - k, "chain {k}");
    }
    assert_eq!(dom.retained_bytes(0), edge);
    assert_eq!(dom.retained_bytes(100), 1 + 50 * (800 << 20) + 1000);
    assert!(dom.retained_bytes(100) > 8 * edge);
    for o in 101..n {
        assert_eq!(dom.retained_bytes(o), sizes_of(o));
    }
    // A byte each and the 151 values of 255 or more in the side table, 8
    // bytes each as two pass a `u32`, with its count of escapes per 64
    // values: fewer bytes than 4 each and the two past 2^32 - 1 on the side.
    let (bytes, _) = dom.retained_arrays();
    assert_eq!((bytes.width(), bytes.large()), (1, 151));
    assert_eq!(bytes.bytes(), n + n.div_ceil(64) * 4 + 151 * 8);
    assert_eq!(dom.reachable_bytes, edge + dom.retained_bytes(100));
    // The super-root's children in the DFS's order (its roots' order),
    // then by retained bytes; 100's 800 MiB children first, by index.
    let root = dom.super_root();
    assert_eq!(dom.children(root).collect::<Vec<_>>(), [0, 100]);
    assert_eq!(dom.children_sorted(root), [100, 0]);
    assert_eq!(dom.children(100).count(), 1050);
    assert_eq!(dom.largest_children(100, 3), [101, 102, 103]);
    assert_eq!(dom.largest_child(99), None);
    assert_eq!(dom.children(98).collect::<Vec<_>>(), [99]);
}

fn sizes_of(o: usize) -> u64 {
    if (101..151).contains(&o) {
        800 << 20
    } else {
        1
    }
}

#[test]
fn a_long_chain_with_a_back_edge_to_the_root() {
    // A cycle of 2 million: the back edge makes every semidominator walk the
    // compressed path; still linear-ish and iterative.
    let n: usize = 2_000_000;
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let degrees = vec![1u32; n];
            let targets: Vec<u32> = (0..n as u32).map(|i| (i + 1) % n as u32).collect();
            let refs = Csr::from_degrees(&degrees, targets);
            let retainers = PackedRows::from_csr(&refs.transpose());
            let sizes = vec![2u64; n];
            let dom =
                compute_dominators(n, &refs, &retainers, &[0], &sizes.into(), &Progress::new())
                    .unwrap();
            assert_eq!(dom.idom.get(n - 1) as usize, n - 2);
            assert_eq!(dom.retained_bytes(1), 2 * (n as u64 - 1));
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Immediate dominators by petgraph's Cooper–Harvey–Kennedy `simple_fast`,
/// an independent implementation, on the analysed heap's own graph plus a
/// super-root. Returns the disagreements (at most a few).
fn disagreements_with_petgraph(a: &heaptui_core::analysis::Analysis) -> Vec<String> {
    use petgraph::graph::{DiGraph, NodeIndex};
    let d = a.dump();
    let n = d.objects();
    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(n + 1, d.refs.edges() + n);
    for _ in 0..=n {
        g.add_node(());
    }
    let sr = NodeIndex::new(n);
    for &r in &a.graph.strong_roots {
        g.add_edge(sr, NodeIndex::new(r.index()), ());
    }
    for o in 0..n as u32 {
        for t in d.refs.neighbors(o) {
            g.add_edge(NodeIndex::new(o as usize), NodeIndex::new(t as usize), ());
        }
    }
    let doms = petgraph::algo::dominators::simple_fast(&g, sr);
    let mut bad = Vec::new();
    for o in 0..n {
        let want = match doms.immediate_dominator(NodeIndex::new(o)) {
            None => NOT_REACHABLE,
            Some(i) if i == sr => SUPER_ROOT,
            Some(i) => i.index() as u32,
        };
        if a.dom.idom.get(o) != want && bad.len() < 5 {
            bad.push(format!(
                "{}: heaptui {:x}, petgraph {:x}",
                d.id_hex(ObjectIdx(o as u32)),
                a.dom.idom.get(o),
                want
            ));
        }
    }
    bad
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// Graphs too big for brute force: agree with an independent algorithm.
    #[test]
    fn idoms_agree_with_petgraph_on_larger_graphs(
        n in 50usize..400,
        seed_edges in proptest::collection::vec((any::<u16>(), any::<u16>()), 0..1200),
        seed_roots in proptest::collection::vec((any::<u16>(), proptest::bool::weighted(0.2)), 1..8),
    ) {
        let mut edges = vec![Vec::new(); n];
        for (s, t) in seed_edges {
            edges[s as usize % n].push(t as usize % n);
        }
        let h = SmallHeap {
            sizes: (0..n as u64).map(|i| i % 7 + 1).collect(),
            edges,
            roots: seed_roots.into_iter().map(|(r, w)| (r as usize % n, w)).collect(),
            dangling: false,
        };
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        let bad = disagreements_with_petgraph(&a);
        prop_assert!(bad.is_empty(), "{:?}", bad);
    }
}

/// Every `*.txt` dump in `$HEAPTUI_REAL_HEAPS` against petgraph (nothing
/// checked where it is not set).
#[test]
fn real_heaps_agree_with_petgraph() {
    let Some(dir) = common::real_heaps("real_heaps_agree_with_petgraph") else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let a = analyse_bytes(&std::fs::read(&path).unwrap());
        let bad = disagreements_with_petgraph(&a);
        assert!(bad.is_empty(), "{}: {bad:?}", path.display());
        checked += 1;
    }
    assert!(checked > 0);
    eprintln!("{checked} real heaps agree with petgraph");
}

#[test]
fn queries_fixture() {
    // The tree drawn in tests/core/queries.rs.
    let (c, h, arr) = (Some("1"), Some("2"), Some("3"));
    check(
        "queries.txt",
        &[
            ("1", Some((SR, 320, 11))),
            ("2", Some((c, 304, 10))),
            ("3", Some((h, 272, 9))),
            ("4", Some((arr, 72, 2))),
            ("5", Some((arr, 72, 2))),
            ("6", Some((arr, 80, 4))),
            ("7", Some((Some("4"), 64, 1))),
            ("8", Some((Some("5"), 64, 1))),
            ("9", Some((Some("6"), 64, 3))),
            ("a", Some((Some("9"), 48, 2))),
            ("b", Some((Some("a"), 32, 1))),
            ("c", Some((SR, 24, 2))),
            ("d", Some((Some("c"), 16, 1))),
            ("e", Some((SR, 8, 1))),
        ],
    );
}
