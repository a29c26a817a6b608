//! Layer 5 — scheduling mutators and the collector. Imports no other layer:
//! the collector (layer 6) runs its phases on [`Workers`] and the API
//! (layer 7) stops the world with [`World`].
//!
//! Today: the stop-the-world handshake ([`World`], `world.rs`) and the
//! per-thread list of mutators (`threads.rs`). Mutators poll a flag at
//! safepoints (every allocation slow path, `Mutator::safepoint`, entering a
//! blocking region) and park there; the collecting thread waits until every
//! other attached mutator is parked or blocked. The GC worker pool
//! (`workers.rs`) runs the parallel phases of a pause.

pub mod futex;
mod termination;
mod threads;
mod workers;
mod world;

pub use termination::Termination;
pub use threads::{
    add as hold_mutator, holds as holds_mutator, prepare_current as prepare_thread,
    remove as release_mutator, ThreadMutator,
};
pub use workers::{spin_until, Workers};
pub use world::{describe_current_thread, Detached, MutatorId, StopHook, World};
