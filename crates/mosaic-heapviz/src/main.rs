//! `mosaic-heapviz`: draws a Mosaic heap dump as a PNG page/slot diagram.
//!
//! ```text
//! mosaic-heapviz DUMP.jsonl -o OUT.png [--order address|pinned] [--pool N] [--title T] [--cell PX] [--column PX]
//! ```
//!
//! Prints one summary line on success; on failure prints the reason to
//! stderr and exits with status 1 (2 for bad arguments, from clap).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use mosaic_heapviz::{read_dump_file, render_png, DiagramOptions, PageOrder};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Order {
    /// Ascending page address.
    Address,
    /// Most pinned slots first, then most live slots, then address.
    Pinned,
}

/// Draw a Mosaic heap dump (JSON lines) as a PNG: one column per page, one
/// cell per slot; pinned red, live movable green, free grey.
#[derive(Debug, Parser)]
#[command(name = "mosaic-heapviz", version)]
struct Args {
    /// The heap dump to read (JSON lines).
    dump: PathBuf,
    /// The PNG to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Column order.
    #[arg(long, value_enum, default_value_t = Order::Address)]
    order: Order,
    /// Draw only the pages of this size-class pool.
    #[arg(long)]
    pool: Option<usize>,
    /// Title drawn above the diagram.
    #[arg(long)]
    title: Option<String>,
    /// Pixels per slot cell (and the column width, unless --column).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    cell: u32,
    /// Column (page) width in pixels; default: the cell size.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    column: Option<u32>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("mosaic-heapviz: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<String, String> {
    let dump = read_dump_file(&args.dump).map_err(|e| match e {
        mosaic_heapviz::DumpError::Open { .. } => e.to_string(),
        _ => format!("{}: {e}", args.dump.display()),
    })?;
    let opts = DiagramOptions {
        order: match args.order {
            Order::Address => PageOrder::Address,
            Order::Pinned => PageOrder::PinnedFirst,
        },
        pool: args.pool,
        title: args.title.clone(),
        cell: args.cell,
        column: args.column.unwrap_or(0),
    };
    let s = render_png(&dump, &args.output, &opts).map_err(|e| e.to_string())?;
    let large = if s.large_objects > 0 {
        format!(", {} large objects not drawn", s.large_objects)
    } else {
        String::new()
    };
    Ok(format!(
        "{}: {} pages, {} pinned / {} live / {} free slots{large} ({}x{} px)",
        args.output.display(),
        s.pages,
        s.pinned,
        s.live,
        s.free,
        s.layout.width,
        s.layout.height,
    ))
}
