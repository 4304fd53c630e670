//! The dominator-tree view model on a heap with a very wide group: grouping
//! the children of many parents is deferred to a job and installed later.

use heaptui_core::analysis::group_children_unsorted;
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::progress::Progress;
use heaptui_testkit::tui as tui_support;
use heaptui_tui::panes::dominators::{Item, Reveal, Tree, TreeMode, DEFER_CHILDREN, DEFER_PARENTS};
use heaptui_tui::theme::Theme;

fn wide_heap(n: usize) -> (HeapGraph, DominatorTree) {
    let mut text = String::from("t 1 Root\nt 2 A\nt 3 B\n");
    let kids: Vec<String> = (0..n).map(|i| format!("{:x}", 0x10000 + i)).collect();
    text.push_str(&format!("o 1 1 10 {}\n", kids.join(" ")));
    for (i, k) in kids.iter().enumerate() {
        text.push_str(&format!("o {k} 2 8 {:x}\n", 0x100000 + i));
        text.push_str(&format!("o {:x} 3 4\n", 0x100000 + i));
    }
    text.push_str("r 1 1 0\n");
    let dump =
        heaptui_core::testing::parse_text(std::path::Path::new("wide"), text.as_bytes()).unwrap();
    let graph = HeapGraph::build(dump);
    let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
    (graph, dom)
}

#[test]
fn wide_groups_are_grouped_by_a_deferred_job() {
    let n = DEFER_PARENTS + 10;
    let (g, dom) = wide_heap(n);
    let d = &g.dump;
    let (mut t, deferred) = Tree::new(Item::SuperRoot, "all".into(), d, &dom);
    assert!(deferred.is_none(), "one root: grouped at once");
    t.flatten(TreeMode::Tree, &None);
    let root_row = t.selected();
    assert!(t.expand(root_row, d, &dom).is_none(), "one parent");
    t.flatten(TreeMode::Tree, &None);
    let group_a = t.nodes()[root_row as usize].children.as_ref().unwrap()[0];
    let theme = Theme {
        ascii: true,
        colors: heaptui_tui::theme::Colors::Mono,
    };
    assert_eq!(
        t.label_of(group_a, d, &theme),
        format!("{} x A", heaptui_tui::fmt::count(n as u64))
    );

    let job = t.expand(group_a, d, &dom).expect("many parents: deferred");
    assert_eq!(job.parents.len(), n);
    assert!(t.nodes()[group_a as usize].loading);
    t.flatten(TreeMode::Tree, &None);
    assert_eq!(t.flat().len(), 2, "nothing below a loading row yet");

    let groups = group_children_unsorted(d, &dom, &job.parents);
    t.set_groups(job.node, groups, &dom);
    t.flatten(TreeMode::Tree, &None);
    assert!(!t.nodes()[group_a as usize].loading);
    let b = t.flat()[2];
    assert_eq!(
        t.label_of(b, d, &theme),
        format!("{} x B", heaptui_tui::fmt::count(n as u64))
    );
    assert_eq!(t.sizes_of(b, &dom), Some((4 * n as u64, n as u64)));

    // Instances come a page at a time, largest first, with a "more" row.
    assert!(t.toggle_instances(group_a, d, &dom).is_none());
    t.flatten(TreeMode::Tree, &None);
    assert_eq!(t.flat().len(), 2 + 200 + 1);
    let more = *t.flat().last().unwrap();
    t.more(more, &dom);
    t.flatten(TreeMode::Tree, &None);
    assert_eq!(t.flat().len(), 2 + 400 + 1);

    // Revealing a member far down the group pins it into the page.
    let last = d.index_of(0x100000 + n as u64 - 1).unwrap().raw();
    assert!(matches!(t.reveal(last, d, &dom), Reveal::Shown));
    t.flatten(TreeMode::Tree, &None);
    assert_eq!(t.object(t.selected(), &dom), Some(last));
    let a_row = t.nodes()[t.selected() as usize].parent.unwrap();
    assert_eq!(
        t.nodes()[a_row as usize].item_object(),
        Some(d.index_of(0x10000 + n as u64 - 1).unwrap().raw()),
        "its dominator, pinned into the page"
    );
}

/// A chain 40 deep: rows past the 12th level keep their indentation and
/// show their depth as a number, so the name keeps its room.
#[test]
fn deep_chains_show_their_depth_instead_of_indenting_forever() {
    let mut text = String::from("t 1 Chain.Link\n");
    for i in 1..=40u32 {
        if i < 40 {
            text += &format!("o {i:x} 1 16 {:x}\n", i + 1);
        } else {
            text += &format!("o {i:x} 1 16\n");
        }
    }
    text += "r 1 1 0\n";
    let text: &'static str = Box::leak(text.into_boxed_str());
    let mut a = tui_support::text_app(text, 80, 24);
    tui_support::keys(&mut a, "2");
    for _ in 0..30 {
        tui_support::keys(&mut a, "Right Down");
    }
    let s = tui_support::screen(&a);
    assert!(s.contains("·31 "), "{s}");
    for line in s.lines().filter(|l| l.contains("Chain.Link")) {
        let at = line.find("Chain.Link").unwrap();
        assert!(at < 40, "the name is pushed right: {line}");
    }
}

/// One `Holder` that dominates more than [`DEFER_CHILDREN`] `Elem`s (a big
/// array's elements); the last `Elem` holds the one `Target`.
fn holder_heap() -> String {
    let n = DEFER_CHILDREN + 10;
    let mut text = String::from("t 1 Holder\nt 2 Elem\nt 3 Target\n");
    let kids: Vec<String> = (0..n).map(|i| format!("{:x}", 0x10000 + i)).collect();
    text.push_str(&format!("o 1 1 10 {}\n", kids.join(" ")));
    for (i, k) in kids.iter().enumerate() {
        if i + 1 == n {
            text.push_str(&format!("o {k} 2 8 2\n"));
        } else {
            text.push_str(&format!("o {k} 2 8\n"));
        }
    }
    text.push_str("o 2 3 4000\nr 1 1 0\n");
    text
}

#[test]
fn many_children_of_one_object_are_grouped_by_a_job_and_reveal_waits_for_it() {
    let text = holder_heap();
    let dump =
        heaptui_core::testing::parse_text(std::path::Path::new("holder"), text.as_bytes()).unwrap();
    let g = HeapGraph::build(dump);
    let dom = DominatorTree::compute(&g, &Progress::new()).unwrap();
    let d = &g.dump;
    let target = d.index_of(2).unwrap().raw();

    // Expanding the holder (one parent) is deferred by its children count.
    let (mut t, deferred) = Tree::new(Item::SuperRoot, "all".into(), d, &dom);
    assert!(deferred.is_none());
    let holder_row = t.nodes()[0].children.as_ref().unwrap()[0];
    let job = t
        .expand(holder_row, d, &dom)
        .expect("many children: deferred");
    assert_eq!(job.parents.len(), 1);

    // A reveal below it waits for that grouping, then goes on.
    let (mut t, _) = Tree::new(Item::SuperRoot, "all".into(), d, &dom);
    let Reveal::Waiting(Some(job)) = t.reveal(target, d, &dom) else {
        panic!("the holder's children must be grouped first");
    };
    assert!(
        matches!(t.reveal(target, d, &dom), Reveal::Waiting(None)),
        "while the job runs, a second reveal waits for it"
    );
    let groups = group_children_unsorted(d, &dom, &job.parents);
    t.set_groups(job.node, groups, &dom);
    assert!(matches!(t.reveal(target, d, &dom), Reveal::Shown));
    assert_eq!(t.object(t.selected(), &dom), Some(target));
}

/// Through the real event loop: Enter on a type in the Types pane reveals
/// its largest instance in the Dominators pane, across a deferred grouping.
#[test]
fn revealing_across_a_deferred_grouping_lands_on_the_object() {
    let text: &'static str = Box::leak(holder_heap().into_boxed_str());
    let mut a = tui_support::text_app(text, 100, 30);
    tui_support::keys(&mut a, "3 / \"Target\" Enter Enter");
    let row = tui_support::selected_row(&a);
    assert!(row.contains("Target"), "{}", tui_support::screen(&a));
    assert!(
        tui_support::screen(&a).contains("Elem"),
        "its dominator on the way is shown"
    );
}
