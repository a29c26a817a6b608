//! What goes where: the state of every slot, the order of the columns and
//! the pixel geometry of the diagram. Nothing here draws; `render` does.
//!
//! A slot is [`SlotState::Pinned`] when an `OBJECT` line names its page and
//! slot with `pinned: true`, [`SlotState::Live`] when one names it
//! otherwise, and [`SlotState::Free`] when none does. Large objects have no
//! slot and are not drawn; objects naming a page the dump does not list, or
//! a slot past the page's slot count, are ignored.

use std::collections::HashMap;

use crate::dump::{HeapDump, PageInfo};
use crate::font;

/// Order of the page columns, left to right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PageOrder {
    /// Ascending page address: the heap as laid out in memory.
    #[default]
    Address,
    /// Most pinned slots first, ties by most live slots, then by address:
    /// how a compacted heap should look, pinned pages to the left and
    /// evacuated (empty) pages to the right.
    PinnedFirst,
}

/// What to draw and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagramOptions {
    /// Column order.
    pub order: PageOrder,
    /// Draw only the pages of this size-class pool (all pages if `None`).
    pub pool: Option<usize>,
    /// Text drawn above the diagram (and returned in the summary).
    pub title: Option<String>,
    /// Pixels per slot cell: the height of a slot on the pages with the
    /// most slots, and the column width unless `column` is set. At least 1;
    /// default 2.
    pub cell: u32,
    /// Column (page) width in pixels; 0 (the default) means `cell`. Wide
    /// columns with 1-pixel slots keep a heap of many-slot pages readable.
    pub column: u32,
}

impl Default for DiagramOptions {
    fn default() -> Self {
        DiagramOptions {
            order: PageOrder::Address,
            pool: None,
            title: None,
            cell: 2,
            column: 0,
        }
    }
}

/// The state of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotState {
    /// No live object.
    Free,
    /// A live object that compaction may move.
    Live,
    /// A live object that must stay where it is.
    Pinned,
}

/// One page column: its page and the state of each of its slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The page's index (`PageInfo::page`).
    pub page: usize,
    /// The page's address, for ordering.
    pub address: u64,
    /// One state per slot, slot 0 first.
    pub slots: Vec<SlotState>,
}

impl Column {
    /// Number of slots in `state`.
    pub fn count(&self, state: SlotState) -> usize {
        self.slots.iter().filter(|&&s| s == state).count()
    }
}

/// The columns to draw: the pages chosen by `opts.pool`, with their slot
/// states filled in from the dump's objects, in `opts.order`.
pub fn columns(dump: &HeapDump, opts: &DiagramOptions) -> Vec<Column> {
    let chosen: Vec<&PageInfo> = dump
        .pages
        .iter()
        .filter(|p| opts.pool.is_none() || opts.pool == Some(p.pool))
        .collect();
    let mut cols: Vec<Column> = chosen
        .iter()
        .map(|p| Column {
            page: p.page,
            address: p.address,
            slots: vec![SlotState::Free; p.slots],
        })
        .collect();
    let by_page: HashMap<usize, usize> =
        cols.iter().enumerate().map(|(i, c)| (c.page, i)).collect();
    for obj in dump.objects.iter().filter(|o| !o.large) {
        let (Some(&col), Some(slot)) = (by_page.get(&obj.page), obj.slot) else {
            continue;
        };
        if let Some(state) = cols[col].slots.get_mut(slot) {
            if obj.pinned {
                *state = SlotState::Pinned;
            } else if *state == SlotState::Free {
                *state = SlotState::Live;
            }
        }
    }
    match opts.order {
        PageOrder::Address => cols.sort_by_key(|c| (c.address, c.page)),
        PageOrder::PinnedFirst => cols.sort_by_key(|c| {
            let pinned = c.count(SlotState::Pinned);
            let live = pinned + c.count(SlotState::Live);
            (
                std::cmp::Reverse(pinned),
                std::cmp::Reverse(live),
                c.address,
                c.page,
            )
        }),
    }
    cols
}

/// Blank space around the diagram, in pixels.
pub const MARGIN: u32 = 8;
/// Pixels per font pixel for the title and legend.
pub const TEXT_SCALE: u32 = 2;
/// Legend entries, in order.
pub const LEGEND: [(SlotState, &str); 3] = [
    (SlotState::Pinned, "pinned"),
    (SlotState::Live, "live"),
    (SlotState::Free, "free"),
];

/// Pixel geometry of a diagram. Columns are `column_width` wide and
/// adjacent; every column is `column_height` tall, and slot `s` of a page
/// with `n` slots covers rows `plot_top + s*column_height/n` up to (not
/// including) `plot_top + (s+1)*column_height/n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Left edge of the first column.
    pub plot_left: u32,
    /// Top edge of every column (slot 0).
    pub plot_top: u32,
    /// Width of one column.
    pub column_width: u32,
    /// Height of every column: the largest slot count times the cell size.
    pub column_height: u32,
    /// Number of columns.
    pub columns: u32,
    /// Top edge of the title text, if there is a title.
    pub title_top: Option<u32>,
    /// Top edge of the legend.
    pub legend_top: u32,
}

impl Layout {
    /// Lays out `columns` for a diagram with cell size `cell` (at least 1),
    /// columns `column` pixels wide (0: `cell`) and an optional title. Sizes are computed in 64 bits so that absurd
    /// inputs can be refused by the caller rather than overflow.
    pub fn new(
        columns: &[Column],
        cell: u32,
        column: u32,
        title: Option<&str>,
    ) -> (u64, u64, Layout) {
        let cell = cell.max(1);
        let column = if column == 0 { cell } else { column };
        let max_slots = columns
            .iter()
            .map(|c| c.slots.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let text_h = font::text_height(TEXT_SCALE);
        let column_height = max_slots as u64 * cell as u64;
        let plot_width = columns.len() as u64 * column as u64;
        let title_w = title.map_or(0, |t| font::text_width(t, TEXT_SCALE)) as u64;
        let content_w = plot_width.max(title_w).max(legend_width() as u64);
        let width = content_w + 2 * MARGIN as u64;
        let title_band = if title.is_some() { text_h + MARGIN } else { 0 };
        let plot_top = MARGIN + title_band;
        let legend_top = plot_top as u64 + column_height + MARGIN as u64;
        let height = legend_top + text_h as u64 + MARGIN as u64;
        let clamp = |v: u64| v.min(u32::MAX as u64) as u32;
        let layout = Layout {
            width: clamp(width),
            height: clamp(height),
            plot_left: MARGIN,
            plot_top,
            column_width: column,
            column_height: clamp(column_height),
            columns: clamp(columns.len() as u64),
            title_top: title.map(|_| MARGIN),
            legend_top: clamp(legend_top),
        };
        (width, height, layout)
    }

    /// Left edge of column `col`.
    pub fn column_x(&self, col: usize) -> u32 {
        self.plot_left + col as u32 * self.column_width
    }

    /// Rows `[top, bottom)` covered by slot `slot` of a page with `slots`
    /// slots (at least one pixel even for very many slots).
    pub fn slot_rows(&self, slot: usize, slots: usize) -> (u32, u32) {
        let h = self.column_height as u64;
        let n = slots.max(1) as u64;
        let top = (slot as u64 * h / n) as u32;
        let bottom = (((slot as u64 + 1) * h / n) as u32).max(top + 1);
        (self.plot_top + top, self.plot_top + bottom)
    }
}

/// Width of the legend: for each entry a text-high swatch, a gap, the
/// label, and a wider gap before the next entry.
pub fn legend_width() -> u32 {
    let swatch = font::text_height(TEXT_SCALE);
    LEGEND
        .iter()
        .map(|(_, label)| swatch + 4 + font::text_width(label, TEXT_SCALE))
        .sum::<u32>()
        + 12 * (LEGEND.len() as u32 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::{ObjectInfo, PageInfo};

    fn page(page: usize, address: u64, pool: usize, slots: usize) -> PageInfo {
        PageInfo {
            page,
            address,
            pool,
            slot_size: 64,
            slots,
            live: 0,
            pinned: 0,
        }
    }

    fn obj(page: usize, slot: usize, pinned: bool) -> ObjectInfo {
        ObjectInfo {
            address: 0,
            page,
            slot: Some(slot),
            pool: Some(0),
            size: 64,
            pinned,
            flags: vec![],
            type_name: None,
            large: false,
        }
    }

    fn dump() -> HeapDump {
        HeapDump {
            page_size: 4096,
            pages: vec![
                page(1, 0x1000, 0, 4),
                page(2, 0x2000, 0, 4),
                page(3, 0x3000, 1, 4),
                page(4, 0x4000, 0, 4),
            ],
            objects: vec![
                obj(2, 0, false),
                obj(2, 1, false),
                obj(4, 3, true),
                obj(4, 0, false),
                obj(1, 2, false),
                obj(9, 0, true),  // unknown page: ignored
                obj(1, 99, true), // past the slot count: ignored
            ],
        }
    }

    #[test]
    fn slot_states_follow_objects() {
        let cols = columns(&dump(), &DiagramOptions::default());
        assert_eq!(
            cols.iter().map(|c| c.page).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        use SlotState::*;
        assert_eq!(cols[0].slots, [Free, Free, Live, Free]);
        assert_eq!(cols[3].slots, [Live, Free, Free, Pinned]);
    }

    #[test]
    fn pinned_first_orders_by_pinned_then_live_then_address() {
        let opts = DiagramOptions {
            order: PageOrder::PinnedFirst,
            ..Default::default()
        };
        let order: Vec<usize> = columns(&dump(), &opts).iter().map(|c| c.page).collect();
        assert_eq!(order, [4, 2, 1, 3]);
    }

    #[test]
    fn pool_filter_keeps_only_that_pool() {
        let opts = DiagramOptions {
            pool: Some(1),
            ..Default::default()
        };
        let order: Vec<usize> = columns(&dump(), &opts).iter().map(|c| c.page).collect();
        assert_eq!(order, [3]);
    }

    #[test]
    fn slots_stretch_to_the_column_height() {
        let cols = vec![
            Column {
                page: 0,
                address: 0,
                slots: vec![SlotState::Free; 8],
            },
            Column {
                page: 1,
                address: 1,
                slots: vec![SlotState::Free; 3],
            },
        ];
        let (_, _, l) = Layout::new(&cols, 2, 0, None);
        assert_eq!(l.column_height, 16);
        assert_eq!(l.slot_rows(0, 8), (l.plot_top, l.plot_top + 2));
        assert_eq!(l.slot_rows(7, 8), (l.plot_top + 14, l.plot_top + 16));
        // 16 rows over 3 slots: 0..5, 5..10, 10..16.
        assert_eq!(l.slot_rows(1, 3), (l.plot_top + 5, l.plot_top + 10));
        assert_eq!(l.slot_rows(2, 3), (l.plot_top + 10, l.plot_top + 16));
        assert_eq!(l.column_x(1), l.plot_left + 2);
    }
}
