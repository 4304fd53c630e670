//! The core's tests, one binary: importers, graph, dominators, duplicates,
//! comparison, cache, queries and the crate's layer order. One module per
//! subject;
//! the helpers they share are heaptui-testkit's (a dev-dependency).

mod cache;
mod compare;
mod dominators;
mod duplicates;
mod gcdump;
mod hostile;
mod hprof;
mod layers;
mod layouts;
mod merged_paths;
mod mutations;
mod owners;
mod parser;
mod queries;
mod robustness;
mod suspects;
mod v8;
mod v8_real;
mod what_if;
