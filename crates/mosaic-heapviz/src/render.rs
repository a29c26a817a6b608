//! Drawing: the columns from `layout` painted with plotters into an RGB
//! buffer, then written as PNG.
//!
//! The picture, top to bottom: the title (if any), the page columns (one
//! per page, one cell per slot, slot 0 at the top, every column stretched
//! to the same height), and a legend. Pinned slots are red, live movable
//! slots green, free slots light grey, on a white background. Large
//! objects live outside the slotted pages and are not drawn; the summary
//! counts them.

use std::fmt;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::dump::HeapDump;
use crate::font;
use crate::layout::{self, Column, DiagramOptions, Layout, SlotState, LEGEND, TEXT_SCALE};

/// Colour of a pinned live slot.
pub const PINNED_COLOR: [u8; 3] = [214, 39, 40];
/// Colour of a live movable slot.
pub const LIVE_COLOR: [u8; 3] = [44, 160, 44];
/// Colour of a free slot.
pub const FREE_COLOR: [u8; 3] = [226, 226, 226];
/// Colour around and between the parts of the diagram.
pub const BACKGROUND_COLOR: [u8; 3] = [255, 255, 255];
/// Colour of the title and legend text.
pub const TEXT_COLOR: [u8; 3] = [40, 40, 40];

/// Refuse pictures larger than this many pixels (3 bytes each in memory).
pub const MAX_PIXELS: u64 = 200_000_000;

/// The colour a slot in `state` is drawn in.
pub fn state_color(state: SlotState) -> [u8; 3] {
    match state {
        SlotState::Pinned => PINNED_COLOR,
        SlotState::Live => LIVE_COLOR,
        SlotState::Free => FREE_COLOR,
    }
}

/// What was drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagramSummary {
    /// Page columns drawn.
    pub pages: usize,
    /// Slots holding a pinned object.
    pub pinned: usize,
    /// Slots holding a live movable (unpinned) object.
    pub live: usize,
    /// Slots holding no object. `pinned + live + free` is every slot drawn.
    pub free: usize,
    /// Large objects in the dump, which are never drawn.
    pub large_objects: usize,
    /// Page indices (`PageInfo::page`) of the columns, left to right.
    pub columns: Vec<usize>,
    /// The title, as given in the options.
    pub title: Option<String>,
    /// Where everything is in the picture.
    pub layout: Layout,
}

/// An RGB picture, 3 bytes per pixel, row by row from the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bitmap {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 3` bytes.
    pub rgb: Vec<u8>,
}

impl Bitmap {
    /// The colour at `(x, y)`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

/// Why a diagram could not be drawn or written.
#[derive(Debug)]
pub enum RenderError {
    /// `DiagramOptions::cell` was 0.
    ZeroCell,
    /// No page to draw (the dump has none, or none in the chosen pool).
    NoPages { pool: Option<usize> },
    /// The picture would exceed [`MAX_PIXELS`].
    TooLarge { width: u64, height: u64 },
    /// plotters failed.
    Draw(String),
    /// The PNG could not be written.
    Write {
        path: PathBuf,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::ZeroCell => write!(f, "cell size must be at least 1 pixel"),
            RenderError::NoPages { pool: None } => write!(f, "the dump has no pages to draw"),
            RenderError::NoPages { pool: Some(p) } => {
                write!(f, "the dump has no pages in pool {p}")
            }
            RenderError::TooLarge { width, height } => write!(
                f,
                "diagram would be {width}x{height} pixels, over the limit of {MAX_PIXELS}; \
                 use a smaller cell or --pool"
            ),
            RenderError::Draw(msg) => write!(f, "drawing failed: {msg}"),
            RenderError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for RenderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RenderError::Write { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// Draws the diagram into memory.
pub fn render_bitmap(
    dump: &HeapDump,
    opts: &DiagramOptions,
) -> Result<(Bitmap, DiagramSummary), RenderError> {
    if opts.cell == 0 {
        return Err(RenderError::ZeroCell);
    }
    let cols = layout::columns(dump, opts);
    if cols.is_empty() {
        return Err(RenderError::NoPages { pool: opts.pool });
    }
    let (width, height, geo) = Layout::new(&cols, opts.cell, opts.column, opts.title.as_deref());
    if width.saturating_mul(height) > MAX_PIXELS {
        return Err(RenderError::TooLarge { width, height });
    }
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    draw(&mut rgb, &geo, &cols, opts.title.as_deref()).map_err(RenderError::Draw)?;
    let count = |state| cols.iter().map(|c| c.count(state)).sum();
    let summary = DiagramSummary {
        pages: cols.len(),
        pinned: count(SlotState::Pinned),
        live: count(SlotState::Live),
        free: count(SlotState::Free),
        large_objects: dump.objects.iter().filter(|o| o.large).count(),
        columns: cols.iter().map(|c| c.page).collect(),
        title: opts.title.clone(),
        layout: geo,
    };
    let bitmap = Bitmap {
        width: geo.width,
        height: geo.height,
        rgb,
    };
    Ok((bitmap, summary))
}

/// Draws the diagram and writes it to `out` as PNG (whatever its extension).
pub fn render_png(
    dump: &HeapDump,
    out: &Path,
    opts: &DiagramOptions,
) -> Result<DiagramSummary, RenderError> {
    let (bitmap, summary) = render_bitmap(dump, opts)?;
    image::save_buffer_with_format(
        out,
        &bitmap.rgb,
        bitmap.width,
        bitmap.height,
        image::ColorType::Rgb8,
        image::ImageFormat::Png,
    )
    .map_err(|e| RenderError::Write {
        path: out.to_path_buf(),
        source: Box::new(e),
    })?;
    Ok(summary)
}

fn rgb(c: [u8; 3]) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

/// Paints everything into `buf` (`geo.width * geo.height * 3` bytes).
fn draw(buf: &mut [u8], geo: &Layout, cols: &[Column], title: Option<&str>) -> Result<(), String> {
    let root = BitMapBackend::with_buffer(buf, (geo.width, geo.height)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&rgb(BACKGROUND_COLOR)).map_err(err)?;
    // plotters fills rectangles over [x0, x1) x [y0, y1).
    let fill = |x0: u32, y0: u32, x1: u32, y1: u32, c: [u8; 3]| {
        root.draw(&Rectangle::new(
            [(x0 as i32, y0 as i32), (x1 as i32, y1 as i32)],
            rgb(c).filled(),
        ))
        .map_err(err)
    };
    for (i, col) in cols.iter().enumerate() {
        let x0 = geo.column_x(i);
        let x1 = x0 + geo.column_width;
        let n = col.slots.len();
        if n == 0 {
            fill(
                x0,
                geo.plot_top,
                x1,
                geo.plot_top + geo.column_height,
                FREE_COLOR,
            )?;
            continue;
        }
        // One rectangle per run of slots in the same state.
        let mut start = 0;
        while start < n {
            let state = col.slots[start];
            let end = (start..n).find(|&s| col.slots[s] != state).unwrap_or(n);
            let (top, _) = geo.slot_rows(start, n);
            let (_, bottom) = geo.slot_rows(end - 1, n);
            fill(x0, top, x1, bottom, state_color(state))?;
            start = end;
        }
    }
    let text = |x: u32, y: u32, s: &str| -> Result<(), String> {
        for (px, py) in font::text_pixels(s) {
            let (x0, y0) = (x + px * TEXT_SCALE, y + py * TEXT_SCALE);
            fill(x0, y0, x0 + TEXT_SCALE, y0 + TEXT_SCALE, TEXT_COLOR)?;
        }
        Ok(())
    };
    if let (Some(t), Some(top)) = (title, geo.title_top) {
        text(geo.plot_left, top, t)?;
    }
    let swatch = font::text_height(TEXT_SCALE);
    let mut x = geo.plot_left;
    for (state, label) in LEGEND {
        let y = geo.legend_top;
        fill(x, y, x + swatch, y + swatch, state_color(state))?;
        text(x + swatch + 4, y, label)?;
        x += swatch + 4 + font::text_width(label, TEXT_SCALE) + 12;
    }
    root.present().map_err(err)?;
    Ok(())
}
