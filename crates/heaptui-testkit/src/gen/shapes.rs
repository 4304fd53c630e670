//! The shapes the generator builds: the type table, the main AppDomain's
//! heap (strings, collections, caches with duplicate graphs, cycles,
//! statics, handles, garbage), the plugin AppDomain's, and the leaking
//! structures of a snapshot series, as an in-memory [`Heap`] that
//! `super` writes out as text.

use super::Rng;

pub(super) const T_OBJECT: u32 = 0;
pub(super) const T_STRING: u32 = 1;
pub(super) const T_CHARS: u32 = 2;
pub(super) const T_INTS: u32 = 3;
pub(super) const T_BYTES: u32 = 4;
pub(super) const T_OBJECTS: u32 = 5;
pub(super) const T_LIST_STR: u32 = 6;
pub(super) const T_STRINGS: u32 = 7;
pub(super) const T_DICT: u32 = 8;
pub(super) const T_ENTRIES: u32 = 9;
pub(super) const T_CACHE: u32 = 10;
pub(super) const T_CACHE_ENTRY: u32 = 11;
pub(super) const T_ORDER: u32 = 12;
pub(super) const T_CUSTOMER: u32 = 13;
pub(super) const T_LINE: u32 = 14;
pub(super) const T_LINES: u32 = 15;
pub(super) const T_LIST_LINE: u32 = 16;
pub(super) const T_PRODUCT: u32 = 17;
pub(super) const T_CULTURE: u32 = 18;
pub(super) const T_LLIST: u32 = 19;
pub(super) const T_LNODE: u32 = 20;
pub(super) const T_SESSION: u32 = 21;
pub(super) const T_XML: u32 = 22;
pub(super) const T_XML_CHILDREN: u32 = 23;
pub(super) const T_SB: u32 = 24;
pub(super) const T_FILESTREAM: u32 = 25;
pub(super) const T_THREAD: u32 = 26;
pub(super) const T_APP: u32 = 27;
pub(super) const T_LIST_ORDER: u32 = 28;
pub(super) const T_ORDERS: u32 = 29;
pub(super) const T_EVENT: u32 = 30;
pub(super) const T_WEAKREF: u32 = 31;
pub(super) const T_DELEGATE: u32 = 32;
pub(super) const T_RULE: u32 = 33;

pub(super) const TYPE_NAMES: [&str; 34] = [
    "System.Object",
    "System.String",
    "System.Char[]",
    "System.Int32[]",
    "System.Byte[]",
    "System.Object[]",
    "System.Collections.Generic.List<System.String>",
    "System.String[]",
    "System.Collections.Generic.Dictionary<System.String, MyApp.Caching.CacheEntry>",
    "System.Collections.Generic.Dictionary+Entry<System.String, MyApp.Caching.CacheEntry>[]",
    "MyApp.Caching.Cache",
    "MyApp.Caching.CacheEntry",
    "MyApp.Orders.Order",
    "MyApp.Orders.Customer",
    "MyApp.Orders.OrderLine",
    "MyApp.Orders.OrderLine[]",
    "System.Collections.Generic.List<MyApp.Orders.OrderLine>",
    "MyApp.Catalog.Product",
    "System.Globalization.CultureInfo",
    "System.Collections.Generic.LinkedList<MyApp.Net.Session>",
    "System.Collections.Generic.LinkedListNode<MyApp.Net.Session>",
    "MyApp.Net.Session",
    "System.Xml.XmlElement",
    "System.Xml.XmlNode[]",
    "System.Text.StringBuilder",
    "System.IO.FileStream",
    "System.Threading.Thread",
    "MyApp.Application",
    "System.Collections.Generic.List<MyApp.Orders.Order>",
    "MyApp.Orders.Order[]",
    "System.EventHandler",
    "System.WeakReference",
    "System.Delegate",
    "MyApp.Pricing.Rule",
];

// Types of a series' leaking structures (written in series mode only, so
// a plain dump of a seed stays byte for byte what it always was).
pub(super) const T_LOG: u32 = 34;
pub(super) const T_LOG_ENTRIES: u32 = 35;
pub(super) const T_LOG_ENTRY: u32 = 36;
pub(super) const T_POOL: u32 = 37;
pub(super) const T_THUMBS: u32 = 38;
pub(super) const T_THUMB: u32 = 39;

pub(super) const SERIES_NAMES: [&str; 6] = [
    "MyApp.Diagnostics.RequestLog",
    "MyApp.Diagnostics.RequestLogEntry[]",
    "MyApp.Diagnostics.RequestLogEntry",
    "MyApp.Imaging.ThumbnailPool",
    "MyApp.Imaging.Thumbnail[]",
    "MyApp.Imaging.Thumbnail",
];

/// One snapshot of a series: the same program's heap at `index` (0 =
/// oldest). The stable part is the heap of the seed; two structures leak:
/// a request log that gains `step` entries in every snapshot, and a
/// thumbnail pool of `step` thumbnails that triples in snapshot 1 and
/// then falls back to double. Ids move between snapshots as after a
/// compacting GC: each snapshot lays the heap out from another base with
/// other gaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub index: u32,
    pub step: u64,
}

impl Snapshot {
    /// Request-log entries in this snapshot.
    pub fn log_entries(&self) -> u64 {
        self.step * (self.index as u64 + 1)
    }

    /// Thumbnails in the pool in this snapshot.
    pub fn thumbnails(&self) -> u64 {
        self.step
            * match self.index {
                0 => 1,
                1 => 3,
                _ => 2,
            }
    }

    /// The growth step that suits a heap of `objects` objects.
    pub fn default_step(objects: u64) -> u64 {
        (objects / 200).max(10)
    }
}

/// Adds the leaking structures of snapshot `s` to the main heap.
pub(super) fn add_leaks(h: &mut Heap, s: &Snapshot) {
    let entries: Vec<u32> = (0..s.log_entries())
        .map(|i| {
            let url = h.string(24 + (i % 16) as u32);
            let body = h.obj(T_BYTES, 16 + 256, &[]);
            h.obj(T_LOG_ENTRY, 40, &[url, body])
        })
        .collect();
    let cap = (entries.len() as u32).next_power_of_two().max(4);
    let arr = h.array(T_LOG_ENTRIES, &entries, cap);
    let log = h.obj(T_LOG, 32, &[arr]);
    h.root(log, 4, 0, Some(T_LOG));
    let thumbs: Vec<u32> = (0..s.thumbnails())
        .map(|_| {
            let pixels = h.obj(T_BYTES, 16 + 1024, &[]);
            h.obj(T_THUMB, 24, &[pixels])
        })
        .collect();
    let arr = h.array(T_THUMBS, &thumbs, thumbs.len() as u32);
    let pool = h.obj(T_POOL, 24, &[arr]);
    h.root(pool, 4, 0, Some(T_POOL));
}

/// Types of the second AppDomain: the same ids, other names (plus strings).
pub(super) const PLUGIN_NAMES: [&str; 6] = [
    "Plugin.Host",
    "System.String",
    "Plugin.Settings",
    "System.Collections.Generic.List<Plugin.Settings>",
    "Plugin.Settings[]",
    "System.Char[]",
];

pub(super) struct Heap {
    pub(super) types: Vec<u32>,
    pub(super) sizes: Vec<u32>,
    /// `(start, len)` of each object's references in `edges`; objects can be
    /// created before their references are known (cycles, back-pointers).
    pub(super) spans: Vec<(u32, u32)>,
    pub(super) edges: Vec<u32>,
    /// `(object, kind, flags, container)`
    pub(super) roots: Vec<(u32, u32, u32, Option<u32>)>,
}

impl Heap {
    pub(super) fn new(capacity: usize) -> Heap {
        Heap {
            types: Vec::with_capacity(capacity),
            sizes: Vec::with_capacity(capacity),
            spans: Vec::with_capacity(capacity),
            edges: Vec::with_capacity(capacity * 3),
            roots: Vec::new(),
        }
    }

    pub(super) fn len(&self) -> u64 {
        self.types.len() as u64
    }

    pub(super) fn alloc(&mut self, ty: u32, size: u32) -> u32 {
        self.types.push(ty);
        self.sizes.push(size);
        self.spans.push((0, 0));
        (self.types.len() - 1) as u32
    }

    pub(super) fn set_refs(&mut self, o: u32, refs: &[u32]) {
        let start = self.edges.len() as u32;
        self.edges.extend_from_slice(refs);
        self.spans[o as usize] = (start, refs.len() as u32);
    }

    pub(super) fn obj(&mut self, ty: u32, size: u32, refs: &[u32]) -> u32 {
        let o = self.alloc(ty, size);
        self.set_refs(o, refs);
        o
    }

    pub(super) fn string(&mut self, chars: u32) -> u32 {
        self.obj(T_STRING, (20 + 2 * chars + 3) & !3, &[])
    }

    pub(super) fn array(&mut self, ty: u32, elems: &[u32], capacity: u32) -> u32 {
        self.obj(ty, 16 + 4 * capacity.max(elems.len() as u32), elems)
    }

    pub(super) fn root(&mut self, o: u32, kind: u32, flags: u32, container: Option<u32>) {
        self.roots.push((o, kind, flags, container));
    }
}

/// A `List<String>` over a `String[]` of strings with lengths from `lens`.
pub(super) fn string_list(h: &mut Heap, lens: &[u32]) -> u32 {
    let strings: Vec<u32> = lens.iter().map(|&l| h.string(l)).collect();
    let cap = (lens.len() as u32).next_power_of_two().max(4);
    let arr = h.array(T_STRINGS, &strings, cap);
    h.obj(T_LIST_STR, 24, &[arr])
}

/// An XML-like tree whose children point back to their parent: cyclic, and
/// the copies of one template are duplicates of each other.
pub(super) fn xml_tree(h: &mut Heap, rng_shape: &[u8], depth: u32) -> u32 {
    fn node(h: &mut Heap, shape: &[u8], at: &mut usize, depth: u32, parent: Option<u32>) -> u32 {
        let me = h.alloc(T_XML, 40);
        let name = h.string(6 + (shape[*at % shape.len()] % 8) as u32);
        *at += 1;
        let kids_n = if depth == 0 {
            0
        } else {
            (shape[*at % shape.len()] % 4) as usize
        };
        *at += 1;
        let kids: Vec<u32> = (0..kids_n)
            .map(|_| node(h, shape, at, depth - 1, Some(me)))
            .collect();
        let arr = h.array(T_XML_CHILDREN, &kids, 4);
        let mut refs = vec![name, arr];
        if let Some(p) = parent {
            refs.push(p);
        }
        h.set_refs(me, &refs);
        me
    }
    let mut at = 0;
    node(h, rng_shape, &mut at, depth, None)
}

/// Builds the main AppDomain's heap of about `target` objects.
pub(super) fn build_main(rng: &mut Rng, target: u64) -> Heap {
    let mut m = Main::new(rng, target);
    let garbage_share = 5;
    while m.h.len() < target {
        let pick = rng.below(100);
        match pick {
            0..45 => m.order(rng, garbage_share),
            45..62 => m.cache_entry(rng),
            62..76 => m.rule(rng),
            76..81 => m.session(rng),
            81..84 => m.config(rng),
            84..90 => m.event_handler(rng),
            90..93 => m.weakly_held(),
            93..95 => m.pinned_stream(rng),
            _ => m.garbage(rng),
        }
    }
    m.wire(rng)
}

/// The main AppDomain while it is built: the heap, its shared objects and
/// what the loop made, waiting to be wired up.
struct Main {
    h: Heap,
    culture: u32,
    currency: u32,
    products: Vec<u32>,
    customers: Vec<u32>,
    statuses: Vec<u32>,
    orders_of: Vec<Vec<u32>>,
    app: u32,
    cache: u32,
    sessions: u32,
    orders: Vec<u32>,
    cache_keys: Vec<u32>,
    cache_values: Vec<u32>,
    session_items: Vec<u32>,
    configs: Vec<u32>,
    rules: Vec<(u32, u32, u32)>,
    /// Templates of duplicated cache payloads: the same lengths every time.
    templates: Vec<Vec<u32>>,
    xml_shapes: Vec<Vec<u8>>,
}

impl Main {
    /// The shared singletons, pools, interned literals and the roots.
    fn new(rng: &mut Rng, target: u64) -> Main {
        let mut h = Heap::new(target as usize + 1024);
        let culture_name = h.string(5);
        let culture = h.obj(T_CULTURE, 64, &[culture_name]);
        let currency_name = h.string(3);
        let currency = h.obj(T_OBJECT, 12, &[currency_name, culture]);
        let products: Vec<u32> = (0..(target / 200).clamp(10, 20_000))
            .map(|i| {
                let name = h.string(8 + (i % 24) as u32);
                h.obj(T_PRODUCT, 32, &[name, culture])
            })
            .collect();
        let customers: Vec<u32> = (0..(target / 100).clamp(10, 50_000))
            .map(|i| {
                let name = h.string(10 + (i % 30) as u32);
                let email = h.string(16 + (i % 20) as u32);
                h.obj(T_CUSTOMER, 28, &[name, email, culture])
            })
            .collect();
        let statuses: Vec<u32> = (0..5).map(|i| h.string(5 + i)).collect();
        let orders_of: Vec<Vec<u32>> = vec![Vec::new(); customers.len()];
        // Interned literals: runtime roots (kind 5).
        for i in 0..(target / 1000).clamp(5, 5_000) {
            let s = h.string(3 + (i % 40) as u32);
            h.root(s, 5, 0, None);
        }
        let app = h.alloc(T_APP, 48);
        h.root(app, 4, 0, Some(T_APP));
        let cache = h.alloc(T_CACHE, 24);
        h.root(cache, 4, 0, Some(T_CACHE));
        let sessions = h.alloc(T_LLIST, 24);
        h.root(sessions, 4, 0, Some(T_APP));
        let templates: Vec<Vec<u32>> = (0..64)
            .map(|_| {
                let n = 1 + rng.below(12) as usize;
                (0..n).map(|_| 4 + rng.below(28) as u32).collect()
            })
            .collect();
        let xml_shapes: Vec<Vec<u8>> = (0..8)
            .map(|_| (0..64).map(|_| rng.below(256) as u8).collect())
            .collect();
        Main {
            h,
            culture,
            currency,
            products,
            customers,
            statuses,
            orders_of,
            app,
            cache,
            sessions,
            orders: Vec::new(),
            cache_keys: Vec::new(),
            cache_values: Vec::new(),
            session_items: Vec::new(),
            configs: Vec::new(),
            rules: Vec::new(),
            templates,
            xml_shapes,
        }
    }

    /// An order: id string, customer and status (shared), lines over an
    /// array; each line points back at its order (cycles). Garbage
    /// `garbage_share` percent of the time: nobody holds it.
    fn order(&mut self, rng: &mut Rng, garbage_share: u64) {
        let h = &mut self.h;
        let order = h.alloc(T_ORDER, 48);
        let id = h.string(12);
        let n = 1 + rng.below(8) as usize;
        let lines: Vec<u32> = (0..n)
            .map(|_| {
                let product = self.products[rng.below(self.products.len() as u64) as usize];
                let note = h.string(4 + rng.below(6) as u32);
                let rule = if self.rules.is_empty() {
                    self.culture
                } else {
                    self.rules[rng.below(self.rules.len() as u64) as usize].0
                };
                let refs = [product, note, order, self.culture, self.currency, rule];
                h.obj(T_LINE, 32, &refs)
            })
            .collect();
        let arr = h.array(T_LINES, &lines, (n as u32).next_power_of_two());
        let list = h.obj(T_LIST_LINE, 24, &[arr]);
        let c = rng.below(self.customers.len() as u64) as usize;
        let status = self.statuses[rng.below(self.statuses.len() as u64) as usize];
        let clerk = self.customers[rng.below(self.customers.len() as u64) as usize];
        let refs = [id, self.customers[c], list, self.culture, status, clerk];
        h.set_refs(order, &refs);
        if rng.chance(garbage_share) {
            return;
        }
        self.orders.push(order);
        self.orders_of[c].push(order);
    }

    /// A cache entry whose payload copies a template: duplicate lists of
    /// duplicate arrays of duplicate strings.
    fn cache_entry(&mut self, rng: &mut Rng) {
        let t = &self.templates[rng.below(self.templates.len() as u64) as usize].clone();
        let h = &mut self.h;
        let payload = string_list(h, t);
        let key = h.string(8 + rng.below(24) as u32);
        let refs = [payload, self.culture, self.cache, self.currency];
        let entry = h.obj(T_CACHE_ENTRY, 32, &refs);
        self.cache_keys.push(key);
        self.cache_values.push(entry);
    }

    /// A pricing rule: part of a densely connected rule network (one big
    /// strongly connected component), wired up at the end.
    fn rule(&mut self, rng: &mut Rng) {
        let name = self.h.string(4 + rng.below(36) as u32);
        let rule = self.h.alloc(T_RULE, 40);
        let product = self.products[rng.below(self.products.len() as u64) as usize];
        self.rules.push((rule, name, product));
    }

    /// A session in the circular linked list, with a builder buffer.
    fn session(&mut self, rng: &mut Rng) {
        let h = &mut self.h;
        let chars_len = 16 + 4 * rng.below(16) as u32;
        let chars = h.obj(T_CHARS, 16 + 2 * chars_len, &[]);
        let sb = h.obj(T_SB, 24, &[chars]);
        let user = h.string(6 + rng.below(10) as u32);
        let session = h.obj(T_SESSION, 40, &[user, sb, self.culture]);
        self.session_items.push(session);
    }

    /// A configuration tree (parent back-references), copied often.
    fn config(&mut self, rng: &mut Rng) {
        let shape = &self.xml_shapes[rng.below(self.xml_shapes.len() as u64) as usize].clone();
        let tree = xml_tree(&mut self.h, shape, 2);
        self.configs.push(tree);
    }

    /// An event handler chain: delegates pointing at their targets.
    fn event_handler(&mut self, rng: &mut Rng) {
        let target_obj = if self.orders.is_empty() {
            self.app
        } else {
            self.orders[rng.below(self.orders.len() as u64) as usize]
        };
        let h = &mut self.h;
        let d = h.obj(T_DELEGATE, 32, &[target_obj]);
        let e = h.obj(T_EVENT, 32, &[d, target_obj]);
        if rng.chance(50) {
            h.root(e, 3, 0, None);
        } else {
            h.root(e, 1, 0, None);
        }
    }

    /// Weakly held: only a weak handle keeps a WeakReference target.
    fn weakly_held(&mut self) {
        let payload = self.h.string(32);
        let w = self.h.obj(T_WEAKREF, 16, &[payload]);
        self.h.root(w, 3, 2, None);
    }

    /// A pinned I/O buffer and a stream on the finalizer queue.
    fn pinned_stream(&mut self, rng: &mut Rng) {
        let h = &mut self.h;
        let buf = h.obj(T_BYTES, 16 + 512 * (1 + rng.below(8) as u32), &[]);
        h.root(buf, 3, 1, None);
        let path = h.string(24 + rng.below(20) as u32);
        let fs = h.obj(T_FILESTREAM, 56, &[path, buf]);
        h.root(fs, 2, 0, None);
        if rng.chance(50) {
            h.root(fs, 1, 4, None); // also a local with an interior pointer
        }
    }

    /// Garbage: a random little graph that nobody references.
    fn garbage(&mut self, rng: &mut Rng) {
        let h = &mut self.h;
        let a = h.string(rng.below(40) as u32);
        let b = h.obj(T_OBJECT, 12, &[a]);
        let arr = h.array(T_OBJECTS, &[a, b], 4);
        h.obj(T_OBJECT, 12, &[arr]);
    }

    /// Wires up what the loop made: the order lists and the customers'
    /// orders, the cache's dictionary, the session ring, the rule network,
    /// the application object and the threads.
    fn wire(mut self, rng: &mut Rng) -> Heap {
        let order_lists = self.wire_orders();
        self.wire_cache();
        self.wire_sessions();
        self.wire_rules(rng);
        let h = &mut self.h;
        let config_arr = h.array(T_OBJECTS, &self.configs, self.configs.len() as u32);
        let mut app_refs = order_lists;
        app_refs.extend([self.cache, config_arr, self.culture]);
        h.set_refs(self.app, &app_refs);
        // Thread objects as locals.
        for i in 0..4 {
            let name = h.string(8 + i);
            let t = h.obj(T_THREAD, 64, &[name, self.app]);
            h.root(t, 0, 0, None);
            h.root(t, 1, 0, None);
        }
        self.h
    }

    /// The application holds the orders in list segments of up to 65 536,
    /// and an index by number holds them again; each customer knows theirs.
    /// Returns the segments.
    fn wire_orders(&mut self) -> Vec<u32> {
        let h = &mut self.h;
        let mut order_lists = Vec::new();
        for seg in self.orders.chunks(65_536) {
            let arr = h.array(T_ORDERS, seg, seg.len() as u32);
            order_lists.push(h.obj(T_LIST_ORDER, 24, &[arr]));
            order_lists.push(h.array(T_OBJECTS, seg, seg.len() as u32));
        }
        for (c, mine) in self.customers.iter().zip(&self.orders_of) {
            let arr = h.array(T_ORDERS, mine, mine.len() as u32);
            let (start, len) = h.spans[*c as usize];
            let mut refs = h.edges[start as usize..(start + len) as usize].to_vec();
            refs.push(arr);
            h.set_refs(*c, &refs);
        }
        order_lists
    }

    /// The cache: a dictionary with buckets and entries.
    fn wire_cache(&mut self) {
        let h = &mut self.h;
        let keys = &self.cache_keys;
        let mut entry_refs = Vec::with_capacity(keys.len() * 2);
        for (k, v) in keys.iter().zip(&self.cache_values) {
            entry_refs.push(*k);
            entry_refs.push(*v);
        }
        let buckets = h.obj(T_INTS, 16 + 4 * keys.len() as u32, &[]);
        let entries = h.obj(T_ENTRIES, 16 + 16 * keys.len() as u32, &entry_refs);
        let dict = h.obj(T_DICT, 48, &[buckets, entries]);
        h.set_refs(self.cache, &[dict]);
    }

    /// Sessions: a circular doubly-linked list.
    fn wire_sessions(&mut self) {
        let h = &mut self.h;
        let nodes: Vec<u32> = self
            .session_items
            .iter()
            .map(|_| h.alloc(T_LNODE, 24))
            .collect();
        for (i, &node) in nodes.iter().enumerate() {
            let next = nodes[(i + 1) % nodes.len()];
            let prev = nodes[(i + nodes.len() - 1) % nodes.len()];
            h.set_refs(node, &[self.sessions, next, prev, self.session_items[i]]);
        }
        if let Some(&head) = nodes.first() {
            h.set_refs(self.sessions, &[head]);
        }
    }

    /// The rule network: each rule references 14 random others; the first
    /// 1,024 rules are held by an array among the configurations.
    fn wire_rules(&mut self, rng: &mut Rng) {
        let rules = &self.rules;
        for &(rule, name, product) in rules {
            let mut refs = vec![name, product];
            for _ in 0..14 {
                refs.push(rules[rng.below(rules.len() as u64) as usize].0);
            }
            self.h.set_refs(rule, &refs);
        }
        let first: Vec<u32> = rules.iter().take(1024).map(|r| r.0).collect();
        let rule_arr = self.h.array(T_OBJECTS, &first, 1024);
        self.configs.push(rule_arr);
    }
}

/// A small second AppDomain reusing type ids 0..6 for other types.
pub(super) fn build_plugin(rng: &mut Rng, target: u64) -> Heap {
    let mut h = Heap::new(target as usize + 16);
    let host = h.alloc(0, 32);
    h.root(host, 4, 0, Some(0));
    let mut settings = Vec::new();
    while h.len() + 4 < target.max(8) {
        let n = 4 + rng.below(12) as u32;
        let chars = h.obj(5, 16 + 2 * n, &[]);
        let s = h.obj(1, (20 + 2 * n + 3) & !3, &[]);
        settings.push(h.obj(2, 24, &[s, chars]));
    }
    let arr = h.obj(4, 16 + 4 * settings.len() as u32, &settings);
    let list = h.obj(3, 24, &[arr]);
    h.set_refs(host, &[list]);
    h
}
