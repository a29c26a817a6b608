//! Errors: every bad request gets one of these, never undefined behaviour.

use std::fmt;

/// Why a heap operation failed. The heap stays usable after any of them.
#[derive(Debug)]
pub enum Error {
    /// The request could not be met even after a full collection: the heap
    /// is at its maximum size.
    OutOfMemory { requested: usize, max_heap: usize },
    /// The request is larger than any object the heap could ever hold.
    TooLarge { requested: usize, max: usize },
    /// The address is not the start of an object allocated by this heap.
    ForeignPointer { addr: usize },
    /// An unknown bit was set in allocation flags.
    InvalidFlags { bits: u32 },
    /// A configuration value is out of range.
    Config(String),
    /// The operating system refused to reserve the heap's address range.
    Reserve(std::io::Error),
    /// The GC worker threads could not be started.
    Workers(std::io::Error),
    /// The calling thread already holds a mutator of this heap.
    MutatorExists { thread: String },
    /// The calling thread is running its exit destructors: a mutator made
    /// now could not be detached when the thread ends.
    ThreadExiting { thread: String },
    /// An argument is out of range or of the wrong kind (an alignment that
    /// is not a power of two, a weak slot outside any heap object, an
    /// ephemeron that is not one...).
    InvalidArgument(String),
    /// The object (or slot) already has the registration asked for.
    AlreadyRegistered { addr: usize, what: &'static str },
    /// The call is not allowed now: allocating inside a collector callback
    /// or a blocking region, leaving a blocking region never entered...
    Misuse(String),
    /// A file could not be written (a heap dump).
    Io { what: String, error: std::io::Error },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::OutOfMemory { requested, max_heap } => write!(
                f,
                "out of memory: {requested} bytes requested and the heap is full at its maximum of {max_heap} bytes \
                 after a full collection (raise max_heap or MOSAIC_MAX_HEAP)"
            ),
            Error::TooLarge { requested, max } => {
                write!(f, "object too large: {requested} bytes requested, the largest possible object is {max} bytes")
            }
            Error::ForeignPointer { addr } => {
                write!(f, "foreign pointer: {addr:#x} is not the start of an object allocated by this heap")
            }
            Error::InvalidFlags { bits } => write!(f, "invalid allocation flags {bits:#x}"),
            Error::Config(m) => write!(f, "invalid configuration: {m}"),
            Error::Reserve(e) => write!(f, "cannot reserve the heap's address range: {e}"),
            Error::Workers(e) => write!(f, "cannot start the GC worker threads: {e}"),
            Error::MutatorExists { thread } => write!(
                f,
                "thread {thread} already has a mutator of this heap: use one mutator per thread and heap \
                 (a second one would deadlock every collection)"
            ),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::AlreadyRegistered { addr, what } => {
                write!(f, "{addr:#x} already has a {what} (unregister it first)")
            }
            Error::Misuse(m) => write!(f, "misuse: {m}"),
            Error::Io { what, error } => write!(f, "{what}: {error}"),
            Error::ThreadExiting { thread } => write!(
                f,
                "thread {thread} is exiting (running its thread-local destructors): it cannot create a mutator"
            ),
        }
    }
}

impl std::error::Error for Error {}
