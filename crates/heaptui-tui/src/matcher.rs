//! Type-name matching for the `/` filter. The Types pane ranks with a
//! `nucleo` worker driven the way helix drives its picker: items pushed once
//! through an injector, `reparse` only when the text changes (with the
//! "appended" hint), `tick` once per frame, and only the visible range of the
//! snapshot read. The structural tokens of [`TypeFilter`] decide which types
//! are injected at all; the filter thread injects them
//! ([`crate::filtering`]). Other panes only need a yes/no per type,
//! computed there from the same pattern rules.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use nucleo::{Config, Injector, Matcher, Nucleo, Utf32Str};

use heaptui_core::analysis::{base_name, TextScope, TypeFilter};

/// The Types pane's fuzzy ranking of type names: a nucleo matcher whose candidates (type positions) are injected off the UI thread and ranked on nucleo's threads.
pub struct TypeMatcher {
    nucleo: Nucleo<u32>,
    /// Set by nucleo's worker when a new snapshot is ready.
    pub notified: Arc<AtomicBool>,
    structural: Option<TypeFilter>,
    fuzzy: String,
    /// Whether nucleo is still ranking (as of the last tick).
    pub running: bool,
}

impl std::fmt::Debug for TypeMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypeMatcher")
            .field("fuzzy", &self.fuzzy)
            .finish()
    }
}

fn haystack(name: &str, scope: TextScope) -> String {
    match scope {
        TextScope::FullName => name.to_string(),
        TextScope::BaseName => base_name(name).into_owned(),
    }
}

impl TypeMatcher {
    /// An empty matcher with one ranking thread, no filter applied yet.
    pub fn new() -> TypeMatcher {
        let notified = Arc::new(AtomicBool::new(false));
        let flag = notified.clone();
        // The callback only raises a flag: redraws are paced by the event
        // loop's tick, which is our debounce.
        let notify = Arc::new(move || flag.store(true, Ordering::Relaxed));
        TypeMatcher {
            nucleo: Nucleo::new(Config::DEFAULT, notify, None, 1),
            notified,
            structural: None,
            fuzzy: String::new(),
            running: false,
        }
    }

    /// Applies a filter. When its structural part changed, the matcher
    /// restarts empty and the returned injector must be given the new
    /// candidates ([`inject_types`], on the filter thread); otherwise only
    /// the fuzzy text is reparsed. Either way O(1) here.
    pub fn set(&mut self, filter: &TypeFilter) -> Option<Injector<u32>> {
        self.set_ordered(filter, false)
    }

    /// [`TypeMatcher::set`]; `reorder`: the candidates come again in a new
    /// order (a new sort of the Types pane), so the matcher restarts even
    /// when the structural tokens are the same.
    pub fn set_ordered(&mut self, filter: &TypeFilter, reorder: bool) -> Option<Injector<u32>> {
        let structural = filter.structural_key();
        let injector = if reorder || self.structural.as_ref() != Some(&structural) {
            // Restarting disconnects the injector of an older filter, so a
            // superseded injection can never reach this matcher.
            self.nucleo.restart(true);
            self.structural = Some(structural);
            self.nucleo.pattern.reparse(
                0,
                &filter.fuzzy,
                CaseMatching::Smart,
                Normalization::Smart,
                false,
            );
            Some(self.nucleo.injector())
        } else {
            if filter.fuzzy != self.fuzzy {
                let append = filter.fuzzy.starts_with(&self.fuzzy);
                self.nucleo.pattern.reparse(
                    0,
                    &filter.fuzzy,
                    CaseMatching::Smart,
                    Normalization::Smart,
                    append,
                );
            }
            None
        };
        self.fuzzy = filter.fuzzy.clone();
        self.running = true;
        injector
    }

    /// One per frame; returns whether the snapshot changed.
    pub fn tick(&mut self) -> bool {
        let status = self.nucleo.tick(10);
        self.running = status.running;
        status.changed
    }

    /// Ticks until the matcher is idle (tests and synchronous loads).
    pub fn settle(&mut self) {
        for _ in 0..1000 {
            self.tick();
            if !self.running {
                break;
            }
        }
    }

    /// How many candidates match, as of the last tick.
    pub fn count(&self) -> usize {
        self.nucleo.snapshot().matched_item_count() as usize
    }

    /// Type indices of matched rows `start..start+len`.
    pub fn rows(&self, start: usize, len: usize) -> Vec<u32> {
        let snap = self.nucleo.snapshot();
        let n = snap.matched_item_count();
        let start = (start as u32).min(n);
        let end = (start + len as u32).min(n);
        snap.matched_items(start..end).map(|i| *i.data).collect()
    }
}

impl Default for TypeMatcher {
    fn default() -> Self {
        TypeMatcher::new()
    }
}

/// Pushes the types passing the structural tokens of `filter`, `(item,
/// name)` in the order given (the pane's sort: with no fuzzy text nucleo
/// keeps it, and it breaks ties of the fuzzy ranking). O(types); the filter
/// thread runs it.
pub fn inject_types<'a>(
    injector: &Injector<u32>,
    types: impl IntoIterator<Item = (u32, &'a str)>,
    filter: &TypeFilter,
) {
    let structural = filter.structural_key();
    for (item, name) in types {
        if structural.accepts(name) {
            let text = haystack(name, filter.scope);
            injector.push(item, |_, cols| cols[0] = text.as_str().into());
        }
    }
}

/// Per type index: does the name pass the filter (fuzzy text and tokens)?
/// O(types); run on the filter thread, never per key or frame.
pub fn type_mask(names: &[Box<str>], filter: &TypeFilter) -> Vec<bool> {
    let pattern = Pattern::parse(&filter.fuzzy, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    names
        .iter()
        .map(|name| {
            if !filter.accepts(name) {
                return false;
            }
            if filter.fuzzy.is_empty() {
                return true;
            }
            let text = haystack(name, filter.scope);
            pattern
                .score(Utf32Str::new(&text, &mut buf), &mut matcher)
                .is_some()
        })
        .collect()
}
