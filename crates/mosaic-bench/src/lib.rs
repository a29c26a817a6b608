//! Mosaic's benchmark suite: workloads run on Mosaic and on real peers side
//! by side (see `main.rs` for the runner and README.md for the command).

pub mod vm;
pub mod workloads;
