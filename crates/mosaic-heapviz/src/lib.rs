//! Heap diagrams from Mosaic heap dumps.
//!
//! Reads the JSON-lines heap dump Mosaic writes ([`read_dump`],
//! [`read_dump_file`]) and draws it as a PNG ([`render_png`]): one column
//! per small-object page, one cell per slot with slot 0 at the top, pinned
//! slots red, live movable slots green and free slots light grey, the way
//! Ruby's compaction work pictured its heap. With [`PageOrder::PinnedFirst`]
//! the pages with most pinned slots come first, which shows at a glance how
//! much a compacting collector could free.
//!
//! Pages of big slots have few slots: every column is stretched to the same
//! height, so a slot there is drawn taller. Large objects are not drawn (they
//! have no slot); [`DiagramSummary::large_objects`] counts them.
//!
//! ```no_run
//! use mosaic_heapviz::{read_dump_file, render_png, DiagramOptions, PageOrder};
//! let dump = read_dump_file("heap.jsonl")?;
//! let opts = DiagramOptions { order: PageOrder::PinnedFirst, ..Default::default() };
//! let summary = render_png(&dump, "heap.png".as_ref(), &opts)?;
//! println!("{} pages, {} pinned slots", summary.pages, summary.pinned);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod dump;
mod font;
pub mod layout;
pub mod render;

pub use dump::{read_dump, read_dump_file, DumpError, HeapDump, ObjectInfo, PageInfo};
pub use layout::{DiagramOptions, Layout, PageOrder, SlotState};
pub use render::{
    render_bitmap, render_png, Bitmap, DiagramSummary, RenderError, BACKGROUND_COLOR, FREE_COLOR,
    LIVE_COLOR, PINNED_COLOR,
};
