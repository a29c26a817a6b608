//! Layer 6 — scheduling mutators and the collector.
//!
//! Today: the stop-the-world handshake ([`World`]). Mutators poll a flag at
//! safepoints (every allocation slow path, `Mutator::safepoint`, entering a
//! blocking region) and park there; the collecting thread waits until every
//! other attached mutator is parked or blocked. Parallel GC workers will
//! live here too.

mod world;

pub use world::World;
