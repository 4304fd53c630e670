//! Writes a large, realistic heap dump for benchmarks and demos:
//! `cargo run --release --example gendump -- --objects 10000000 --seed 1 -o big.txt`
//!
//! Or a series of snapshots of one program, for comparisons (ids move
//! between snapshots; a request log grows in every one, a thumbnail pool
//! grows once then shrinks):
//! `cargo run --release --example gendump -- --objects 100000 --snapshots 3 -o series.txt`
//! writes `series.1.txt`, `series.2.txt`, `series.3.txt` (oldest first).

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;

use heaptui_testkit::gen::{generate, generate_snapshot, GenOptions, GenStats, Snapshot};

#[derive(Parser)]
#[command(about = "Generate a realistic heap dump in the RPM text format")]
struct Args {
    /// Approximate number of objects (of each snapshot's stable part).
    #[arg(long, default_value_t = 1_000_000)]
    objects: u64,
    /// Seed: the same seed always gives the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write a series of this many snapshots of one program instead of one
    /// dump: OUTPUT gets `.1`, `.2`, … before its extension.
    #[arg(long, value_name = "K")]
    snapshots: Option<u32>,
    /// Entries the leaking request log gains per snapshot (implies a
    /// series; default objects / 200).
    #[arg(long, value_name = "STEP")]
    grow: Option<u64>,
    /// Write only snapshot I (1-based) of the series.
    #[arg(long, value_name = "I", requires = "snapshots")]
    only: Option<u32>,
    /// Output file.
    #[arg(short, long)]
    output: PathBuf,
}

/// `series.txt` → `series.3.txt`.
fn numbered(path: &Path, i: u32) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{i}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{i}"),
    };
    path.with_file_name(name)
}

fn report(path: &Path, stats: &GenStats, started: Instant) {
    eprintln!(
        "{}: {} objects, {} references, {} roots, {} bytes in {:.1} s",
        path.display(),
        stats.objects,
        stats.references,
        stats.roots,
        stats.bytes,
        started.elapsed().as_secs_f64()
    );
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let options = GenOptions {
        objects: args.objects,
        seed: args.seed,
    };
    let snapshots = match (args.snapshots, args.grow) {
        (None, None) => {
            let started = Instant::now();
            let file = std::fs::File::create(&args.output)?;
            let stats = generate(&options, BufWriter::with_capacity(1 << 20, file))?;
            report(&args.output, &stats, started);
            return Ok(());
        }
        (k, _) => k.unwrap_or(2).max(1),
    };
    let step = args.grow.unwrap_or(Snapshot::default_step(args.objects));
    for i in 1..=snapshots {
        if args.only.is_some_and(|only| only != i) {
            continue;
        }
        let started = Instant::now();
        let path = numbered(&args.output, i);
        let file = std::fs::File::create(&path)?;
        let snapshot = Snapshot { index: i - 1, step };
        let stats =
            generate_snapshot(&options, &snapshot, BufWriter::with_capacity(1 << 20, file))?;
        report(&path, &stats, started);
    }
    Ok(())
}
