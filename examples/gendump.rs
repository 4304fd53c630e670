//! Writes a large, realistic heap dump for benchmarks and demos:
//! `cargo run --release --example gendump -- --objects 10000000 --seed 1 -o big.txt`

use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;

use heaptui::gen::{generate, GenOptions};

#[derive(Parser)]
#[command(about = "Generate a realistic heap dump in the RPM text format")]
struct Args {
    /// Approximate number of objects.
    #[arg(long, default_value_t = 1_000_000)]
    objects: u64,
    /// Seed: the same seed always gives the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file.
    #[arg(short, long)]
    output: PathBuf,
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    let file = std::fs::File::create(&args.output)?;
    let stats = generate(
        &GenOptions {
            objects: args.objects,
            seed: args.seed,
        },
        BufWriter::with_capacity(1 << 20, file),
    )?;
    eprintln!(
        "{}: {} objects, {} references, {} roots, {} bytes in {:.1} s",
        args.output.display(),
        stats.objects,
        stats.references,
        stats.roots,
        stats.bytes,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
