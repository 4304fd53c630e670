//! Helpers shared by the integration tests: fixture access, a brute-force
//! dominator oracle, and random heap graphs written as dump text.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use heaptui_core::analysis::Analysis;
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::model::{Model, ObjectIdx};

/// Fails, showing `text`, on the first of `needles` it does not contain.
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
}

/// The `heaptui` binary, with its reopen cache in the build's directory
/// (`target/tmp/test-cache`), never the user's `~/.cache/heaptui`.
pub fn heaptui() -> assert_cmd::Command {
    let bin = assert_cmd::cargo::cargo_bin("heaptui");
    let target = bin
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let mut c = assert_cmd::Command::new(&bin);
    c.env("XDG_CACHE_HOME", target.join("tmp").join("test-cache"));
    c
}

/// `heaptui report ARGS` run in the fixtures directory.
pub fn report_in_fixtures(args: &[&str]) -> std::process::Output {
    heaptui()
        .current_dir(fixture(""))
        .arg("report")
        .args(args)
        .output()
        .unwrap()
}

/// [`report_in_fixtures`], which must exit 0; what it printed.
pub fn report_ok(args: &[&str]) -> Vec<u8> {
    let out = report_in_fixtures(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `out` is a refusal: exit code 2, nothing on stdout, and one line on
/// stderr, without a panic, that names `name` and says `why`. Returns that
/// line.
pub fn assert_refused(out: &std::process::Output, name: &str, why: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(out.stdout.is_empty(), "nothing on stdout for {name}");
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.contains(name), "{err:?} should name {name:?}");
    assert!(err.contains(why), "{err:?} should say {why:?}");
    assert!(!err.contains("panicked"), "{err:?}");
    err
}

/// The folder of real dumps named by `HEAPTUI_REAL_HEAPS` (text conversions
/// at its top, the native files under `raw/`), or `None`, after saying so on
/// stderr, when it is not set: the real-dump tests then have nothing to check.
/// `.ci/run` sets it whenever the real heaps sit beside the clone.
pub fn real_heaps(test: &str) -> Option<PathBuf> {
    match std::env::var_os("HEAPTUI_REAL_HEAPS") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("{test}: HEAPTUI_REAL_HEAPS is not set, no real dump checked");
            None
        }
    }
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

pub fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

pub fn analyse_bytes(bytes: &[u8]) -> Analysis {
    Analysis::from_bytes("test.txt", bytes, &DuplicateOptions::default())
        .unwrap_or_else(|e| panic!("analysis failed: {e}"))
}

/// The duplicate sets of a model, each as its first member's type name
/// and its members' ids, and whether values were compared.
pub fn duplicate_sets_by_id(m: Model) -> (bool, Vec<(String, Vec<u64>)>) {
    use heaptui_core::graph::duplicates::find_duplicates;
    use heaptui_core::graph::{DominatorTree, HeapGraph};
    use heaptui_core::progress::Progress;
    let g = HeapGraph::build(m);
    let dom = DominatorTree::compute(&g, &Progress::new()).unwrap();
    let d = find_duplicates(&g, &dom, &DuplicateOptions::default(), &Progress::new()).unwrap();
    let sets = d
        .member_lists()
        .iter()
        .map(|members| {
            (
                g.dump.type_name(ObjectIdx(members[0])).to_string(),
                members
                    .iter()
                    .map(|&o| g.dump.ids.get(o as usize))
                    .collect(),
            )
        })
        .collect();
    (d.has_values(), sets)
}

pub fn analyse_fixture(name: &str) -> Analysis {
    Analysis::from_bytes(name, &fixture_bytes(name), &DuplicateOptions::default())
        .unwrap_or_else(|e| panic!("analysis of {name} failed: {e}"))
}

/// Everything observable about a dump, for comparing two parses.
pub fn fingerprint(d: &Model) -> String {
    let objects: Vec<String> = d
        .object_indices()
        .map(|o| {
            let refs: Vec<String> = d.refs_of(o).iter().map(|r| d.id_hex(r)).collect();
            format!(
                "{} {} {} [{}]",
                d.id_hex(o),
                d.type_name(o),
                d.size_of(o),
                refs.join(" ")
            )
        })
        .collect();
    let roots: Vec<String> = d
        .roots
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {:?} {:?} {} {}",
                d.id_hex(r.object),
                r.kind,
                r.flags,
                r.container,
                r.container_type.map(|t| d.name_of_type(t)),
                r.app_domain,
                r.line
            )
        })
        .collect();
    format!(
        "{objects:#?}\n{roots:#?}\n{:?}\n{:?}\n{:?}",
        d.app_domains, d.diagnostics, d.records
    )
}

/// A dump the importer maps and takes seconds to walk, to be cut under it:
/// 64 KiB of text (the binary check reads that much), then a sparse hole
/// of 4 GiB that costs no disk. Returns its directory (kept alive by the
/// caller), its path, and the file open for writing, so that the test can
/// cut it (`set_len(0)`) once the process has mapped it.
pub fn sparse_dump() -> (tempfile::TempDir, PathBuf, std::fs::File) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinking.txt");
    let mut text = b"t 1 T\no 1 1 8\nr 1 1 0\n".to_vec();
    text.resize(64 << 10, b' ');
    text.push(b'\n');
    std::fs::write(&path, &text).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(4 << 30).unwrap();
    (dir, path, file)
}

/// Dense index of a hex object id; panics when absent.
pub fn ix(dump: &Model, hex: &str) -> ObjectIdx {
    let id = u64::from_str_radix(hex, 16).unwrap();
    dump.index_of(id)
        .unwrap_or_else(|| panic!("object {hex} not in the dump"))
}

/// A heap graph small enough for brute force: nodes `0..n`, edges in field
/// order (parallel edges and self-loops allowed), root records `(node, weak)`.
#[derive(Debug, Clone)]
pub struct SmallHeap {
    pub sizes: Vec<u64>,
    pub edges: Vec<Vec<usize>>,
    pub roots: Vec<(usize, bool)>,
    /// Whether every object also references an id that is not in the dump
    /// (dropped by the parser as dangling: the graph is the same).
    pub dangling: bool,
}

impl SmallHeap {
    pub fn n(&self) -> usize {
        self.sizes.len()
    }

    /// Object ids are `100 + node` (hex); node `i` has type `T{i % 3}` so
    /// grouping has something to group.
    pub fn id(node: usize) -> u64 {
        0x100 + node as u64
    }

    pub fn to_dump_text(&self) -> String {
        let mut s = String::from("a 1 random.exe\nt 0 T0\nt 1 T1\nt 2 T2\n");
        for i in 0..self.n() {
            s.push_str(&format!(
                "o {:x} {} {:x}",
                Self::id(i),
                i % 3,
                self.sizes[i]
            ));
            for &j in &self.edges[i] {
                s.push_str(&format!(" {:x}", Self::id(j)));
            }
            if self.dangling {
                s.push_str(&format!(" {:x}", 0xdead_0000 + i as u64));
            }
            s.push('\n');
        }
        for &(r, weak) in &self.roots {
            s.push_str(&format!(
                "r {:x} 1 {}\n",
                Self::id(r),
                if weak { 2 } else { 0 }
            ));
        }
        s.push_str("c random.exe\n");
        s
    }

    pub fn strong_roots(&self) -> Vec<usize> {
        self.roots.iter().filter(|r| !r.1).map(|r| r.0).collect()
    }

    /// Nodes reachable from the strong roots without entering `skip`.
    pub fn reachable_without(&self, skip: &[usize]) -> Vec<bool> {
        let mut seen = vec![false; self.n()];
        for &s in skip {
            seen[s] = true;
        }
        let mut stack: Vec<usize> = Vec::new();
        for r in self.strong_roots() {
            if !seen[r] {
                seen[r] = true;
                stack.push(r);
            }
        }
        let mut reached = vec![false; self.n()];
        while let Some(v) = stack.pop() {
            reached[v] = true;
            for &w in &self.edges[v] {
                if !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        reached
    }
}

/// Dominators by definition: `a` dominates `b` iff `b` is reachable and
/// removing `a` makes `b` unreachable from the strong roots (or `a == b`).
pub struct Oracle {
    pub reachable: Vec<bool>,
    /// `dominates[a]` = the set of nodes `a` dominates, itself included.
    pub dominated: Vec<BTreeSet<usize>>,
}

impl Oracle {
    pub fn new(h: &SmallHeap) -> Oracle {
        let reachable = h.reachable_without(&[]);
        let dominated = (0..h.n())
            .map(|a| {
                if !reachable[a] {
                    return BTreeSet::new();
                }
                let without = h.reachable_without(&[a]);
                (0..h.n())
                    .filter(|&b| reachable[b] && (b == a || !without[b]))
                    .collect()
            })
            .collect();
        Oracle {
            reachable,
            dominated,
        }
    }

    pub fn dominates(&self, a: usize, b: usize) -> bool {
        self.dominated[a].contains(&b)
    }

    /// The closest strict dominator: the one every other strict dominator
    /// dominates. `None` for the super-root's children and unreachable nodes.
    pub fn idom(&self, b: usize) -> Option<usize> {
        if !self.reachable[b] {
            return None;
        }
        let strict: Vec<usize> = (0..self.reachable.len())
            .filter(|&a| a != b && self.dominates(a, b))
            .collect();
        let closest: Vec<usize> = strict
            .iter()
            .copied()
            .filter(|&d| strict.iter().all(|&o| self.dominates(o, d)))
            .collect();
        assert!(closest.len() <= 1, "dominators of a node form a chain");
        closest.first().copied()
    }

    pub fn retained_bytes(&self, h: &SmallHeap, a: usize) -> u64 {
        self.dominated[a].iter().map(|&b| h.sizes[b]).sum()
    }

    pub fn retained_objects(&self, a: usize) -> u64 {
        self.dominated[a].len() as u64
    }
}

/// proptest strategy: up to `max_n` nodes with cycles, self-loops, parallel
/// edges, several (possibly repeated, possibly weak) roots and garbage; and,
/// one case in four, a degenerate shape of up to 40 nodes that random edges
/// almost never produce: no references at all, only dangling references,
/// one object, every object a root.
pub fn small_heap(max_n: usize) -> impl proptest::strategy::Strategy<Value = SmallHeap> {
    use proptest::prelude::*;
    let random = (1..=max_n).prop_flat_map(|n| {
        (
            proptest::collection::vec(1u64..=64, n),
            proptest::collection::vec(proptest::collection::vec(0..n, 0..4), n),
            proptest::collection::vec((0..n, proptest::bool::weighted(0.25)), 0..4),
        )
            .prop_map(|(sizes, edges, roots)| SmallHeap {
                sizes,
                edges,
                roots,
                dangling: false,
            })
    });
    // No reference between objects (or only dangling ones), most of them
    // rooted: a super-root with many leaf children.
    let edge_free = (1usize..=40, any::<bool>()).prop_flat_map(|(n, dangling)| {
        (
            proptest::collection::vec(1u64..=64, n),
            proptest::collection::vec((0..n, proptest::bool::weighted(0.1)), 0..=n + 4),
        )
            .prop_map(move |(sizes, roots)| SmallHeap {
                edges: vec![Vec::new(); sizes.len()],
                sizes,
                roots,
                dangling,
            })
    });
    let one =
        (1u64..=64, any::<bool>(), any::<bool>()).prop_map(|(size, self_loop, weak)| SmallHeap {
            sizes: vec![size],
            edges: vec![if self_loop { vec![0] } else { Vec::new() }],
            roots: vec![(0, weak)],
            dangling: false,
        });
    // Every object a strong root, random references between them.
    let all_roots = (1usize..=40).prop_flat_map(|n| {
        (
            proptest::collection::vec(1u64..=64, n),
            proptest::collection::vec(proptest::collection::vec(0..n, 0..3), n),
        )
            .prop_map(|(sizes, edges)| SmallHeap {
                roots: (0..sizes.len()).map(|i| (i, false)).collect(),
                sizes,
                edges,
                dangling: false,
            })
    });
    prop_oneof![
        12 => random,
        2 => edge_free,
        1 => one,
        1 => all_roots,
    ]
}
