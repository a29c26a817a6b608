//! Pixel tests: render small heaps, read the PNG back, and check the colour
//! of given cells against hand-computed positions.
//!
//! Geometry used below (no title, cell 4): margin 8, so columns start at
//! x = 8 and slot 0 at y = 8; the largest page has 8 slots, so every column
//! is 32 px tall; an 8-slot page has 4 px slots, a 4-slot page 8 px slots.

use std::path::PathBuf;

use mosaic_heapviz::*;

fn page(page: usize, address: u64, pool: usize, slots: usize) -> PageInfo {
    PageInfo {
        page,
        address,
        pool,
        slot_size: 8192 / slots,
        slots,
        live: 0,
        pinned: 0,
    }
}

fn obj(page: usize, slot: usize, pinned: bool) -> ObjectInfo {
    ObjectInfo {
        address: 0x1000 * page as u64 + slot as u64 * 64,
        page,
        slot: Some(slot),
        pool: Some(0),
        size: 64,
        pinned,
        flags: if pinned {
            vec!["PINNED".into()]
        } else {
            vec![]
        },
        type_name: None,
        large: false,
    }
}

/// Page 10: live movable at slots 0, 1, 2, 5. Page 11: pinned at 3 and 6,
/// live at 0. Page 12: nearly empty, live at 7. Page 13 (pool 1, 4 big
/// slots): pinned at 1. Plus one large object, never drawn.
fn heap() -> HeapDump {
    let mut objects = vec![
        obj(10, 0, false),
        obj(10, 1, false),
        obj(10, 2, false),
        obj(10, 5, false),
        obj(11, 3, true),
        obj(11, 6, true),
        obj(11, 0, false),
        obj(12, 7, false),
        obj(13, 1, true),
    ];
    objects.push(ObjectInfo {
        address: 0x9000_0000,
        page: 40,
        slot: None,
        pool: None,
        size: 200_000,
        pinned: true,
        flags: vec![],
        type_name: None,
        large: true,
    });
    HeapDump {
        page_size: 8192,
        pages: vec![
            page(10, 0x1_0000, 0, 8),
            page(11, 0x2_0000, 0, 8),
            page(12, 0x3_0000, 0, 8),
            page(13, 0x4_0000, 1, 4),
        ],
        objects,
    }
}

fn opts(order: PageOrder) -> DiagramOptions {
    DiagramOptions {
        order,
        cell: 4,
        ..Default::default()
    }
}

fn temp_png(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mosaic-heapviz-{}-{name}.png", std::process::id()))
}

/// Renders to a PNG file and reads it back.
fn render_and_read(
    dump: &HeapDump,
    o: &DiagramOptions,
    name: &str,
) -> (image::RgbImage, DiagramSummary) {
    let path = temp_png(name);
    let summary = render_png(dump, &path, o).expect("render");
    let img = image::open(&path).expect("read PNG back").to_rgb8();
    std::fs::remove_file(&path).ok();
    (img, summary)
}

fn at(img: &image::RgbImage, x: u32, y: u32) -> [u8; 3] {
    img.get_pixel(x, y).0
}

/// Counts each cell colour in the rectangle [x0, x1) x [y0, y1).
fn census(
    img: &image::RgbImage,
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
) -> (usize, usize, usize, usize) {
    let (mut red, mut green, mut free, mut other) = (0, 0, 0, 0);
    for y in y0..y1 {
        for x in x0..x1 {
            match at(img, x, y) {
                PINNED_COLOR => red += 1,
                LIVE_COLOR => green += 1,
                FREE_COLOR => free += 1,
                _ => other += 1,
            }
        }
    }
    (red, green, free, other)
}

#[test]
fn pinned_first_puts_the_most_pinned_page_first() {
    let (img, s) = render_and_read(&heap(), &opts(PageOrder::PinnedFirst), "pinned-first");
    assert_eq!(s.columns, [11, 13, 10, 12]);
    assert_eq!(
        (s.pages, s.pinned, s.live, s.free, s.large_objects),
        (4, 3, 6, 19, 1)
    );
    assert_eq!(
        (img.width(), img.height()),
        (s.layout.width, s.layout.height)
    );

    // Column 0 = page 11, x 8..12; slot 3 is rows 20..24, slot 6 rows 32..36.
    for (x, y) in [(8, 20), (11, 23), (9, 33), (11, 35)] {
        assert_eq!(
            at(&img, x, y),
            PINNED_COLOR,
            "page 11 pinned slot at ({x},{y})"
        );
    }
    assert_eq!(at(&img, 9, 9), LIVE_COLOR, "page 11 slot 0 is live");
    assert_eq!(at(&img, 9, 25), FREE_COLOR, "page 11 slot 4 is free");
    assert_eq!(at(&img, 9, 19), FREE_COLOR, "page 11 slot 2 is free");

    // Column 1 = page 13 (4 slots, stretched to 8 px each): slot 1 is rows 16..24.
    assert_eq!(at(&img, 13, 15), FREE_COLOR);
    assert_eq!(at(&img, 13, 16), PINNED_COLOR);
    assert_eq!(at(&img, 15, 23), PINNED_COLOR);
    assert_eq!(at(&img, 13, 24), FREE_COLOR);

    // Column 2 = page 10: slots 0..3 live, 3 free, 5 live.
    assert_eq!(at(&img, 17, 8), LIVE_COLOR);
    assert_eq!(at(&img, 17, 19), LIVE_COLOR);
    assert_eq!(at(&img, 17, 21), FREE_COLOR);
    assert_eq!(at(&img, 17, 29), LIVE_COLOR);

    // Column 3 = page 12, nearly empty: only slot 7 (rows 36..40) is live.
    assert_eq!(at(&img, 21, 9), FREE_COLOR);
    assert_eq!(at(&img, 21, 38), LIVE_COLOR);

    // The whole plot, 16 x 32 px: red = 2 cells of 4x4 + 1 of 4x8;
    // green = 6 cells of 4x4; nothing but cell colours.
    assert_eq!(census(&img, 8, 8, 24, 40), (64, 96, 352, 0));
    // Outside the plot: background, right of the last column and below it.
    assert_eq!(at(&img, 24, 20), BACKGROUND_COLOR);
    assert_eq!(at(&img, 10, 40), BACKGROUND_COLOR);
    assert_eq!(at(&img, 7, 20), BACKGROUND_COLOR);
}

#[test]
fn address_order_follows_page_addresses() {
    let (img, s) = render_and_read(&heap(), &opts(PageOrder::Address), "address");
    assert_eq!(s.columns, [10, 11, 12, 13]);
    // Page 11 is now column 1 (x 12..16): slot 3 red, slot 4 free.
    assert_eq!(at(&img, 13, 21), PINNED_COLOR);
    assert_eq!(at(&img, 13, 25), FREE_COLOR);
    // Column 0 = page 10: slot 3 free, slot 0 live.
    assert_eq!(at(&img, 9, 21), FREE_COLOR);
    assert_eq!(at(&img, 9, 9), LIVE_COLOR);
    // Page 13 last (x 20..24), its pinned slot rows 16..24.
    assert_eq!(at(&img, 21, 20), PINNED_COLOR);
    assert_eq!(census(&img, 8, 8, 24, 40), (64, 96, 352, 0));
}

#[test]
fn pool_filter_draws_only_that_pool() {
    let o = DiagramOptions {
        pool: Some(1),
        ..opts(PageOrder::Address)
    };
    let (img, s) = render_and_read(&heap(), &o, "pool");
    assert_eq!(s.columns, [13]);
    assert_eq!((s.pinned, s.live, s.free), (1, 0, 3));
    // Only 4 slots now, each 4 px: slot 1 is rows 12..16.
    assert_eq!(s.layout.column_height, 16);
    assert_eq!(at(&img, 9, 11), FREE_COLOR);
    assert_eq!(at(&img, 9, 12), PINNED_COLOR);
    assert_eq!(at(&img, 9, 16), FREE_COLOR);
    assert_eq!(at(&img, 12, 12), BACKGROUND_COLOR);
}

#[test]
fn title_moves_the_plot_down_and_is_drawn() {
    let title = "Heap after GC 3, pinned first";
    let o = DiagramOptions {
        title: Some(title.into()),
        ..opts(PageOrder::PinnedFirst)
    };
    let (img, s) = render_and_read(&heap(), &o, "title");
    assert_eq!(s.title.as_deref(), Some(title));
    // Title band: 14 px of text plus 8 px gap, so slot 0 is at y = 30.
    assert_eq!(s.layout.plot_top, 30);
    assert_eq!(at(&img, 9, 30 + 12), PINNED_COLOR);
    assert_eq!(at(&img, 9, 30 + 16), FREE_COLOR);
    // The title is the widest part: 29 characters of 12 px advance, less
    // the trailing gap, plus margins.
    assert_eq!(img.width(), 29 * 12 - 2 + 16);
    let ink = (0..img.width())
        .flat_map(|x| (8..22).map(move |y| (x, y)))
        .filter(|&(x, y)| at(&img, x, y) != BACKGROUND_COLOR)
        .count();
    assert!(ink > 100, "title text drawn ({ink} px)");
}

#[test]
fn bitmap_and_png_agree() {
    let o = opts(PageOrder::PinnedFirst);
    let (bitmap, _) = render_bitmap(&heap(), &o).unwrap();
    let (img, _) = render_and_read(&heap(), &o, "agree");
    assert_eq!(bitmap.rgb, img.into_raw());
    assert_eq!(bitmap.pixel(8, 20), PINNED_COLOR);
}

#[test]
fn errors_are_reported() {
    let d = heap();
    let none = DiagramOptions {
        pool: Some(7),
        ..Default::default()
    };
    let e = render_bitmap(&d, &none).unwrap_err();
    assert!(matches!(e, RenderError::NoPages { pool: Some(7) }), "{e}");
    let zero = DiagramOptions {
        cell: 0,
        ..Default::default()
    };
    assert!(matches!(
        render_bitmap(&d, &zero).unwrap_err(),
        RenderError::ZeroCell
    ));
    let bad = std::path::Path::new("/nonexistent-dir/mosaic/out.png");
    let e = render_png(&d, bad, &Default::default()).unwrap_err();
    assert!(
        e.to_string().contains("/nonexistent-dir/mosaic/out.png"),
        "{e}"
    );
}

/// A page of 1365 slots (the last pinned) next to one of 3 (the last live).
fn many_and_few() -> HeapDump {
    let mut d = HeapDump {
        page_size: 65536,
        pages: vec![page(1, 0x1000, 0, 1365), page(2, 0x2000, 5, 3)],
        objects: vec![],
    };
    d.pages[0].slot_size = 48;
    d.objects.push(obj(1, 1364, true));
    d.objects.push(obj(2, 2, false));
    d
}

#[test]
fn many_slots_and_few_slots_share_the_column_height() {
    // A page of 1365 slots next to one of 3 slots, cell 1: 1365 px columns.
    let d = many_and_few();
    let o = DiagramOptions {
        cell: 1,
        ..Default::default()
    };
    let (b, s) = render_bitmap(&d, &o).unwrap();
    assert_eq!(s.layout.column_height, 1365);
    assert_eq!(b.pixel(8, 8 + 1364), PINNED_COLOR);
    assert_eq!(b.pixel(8, 8 + 1363), FREE_COLOR);
    // The 3-slot page: slot 2 covers rows 910..1365.
    assert_eq!(b.pixel(9, 8 + 909), FREE_COLOR);
    assert_eq!(b.pixel(9, 8 + 910), LIVE_COLOR);
    assert_eq!(b.pixel(9, 8 + 1364), LIVE_COLOR);
}

#[test]
fn wide_columns_keep_one_pixel_slots() {
    // The same two pages, slots 1 px tall, columns 5 px wide.
    let d = many_and_few();
    let o = DiagramOptions {
        cell: 1,
        column: 5,
        ..Default::default()
    };
    let (b, s) = render_bitmap(&d, &o).unwrap();
    assert_eq!(s.layout.column_height, 1365);
    assert_eq!(s.layout.column_width, 5);
    // Page 1 covers x 8..13, page 2 x 13..18.
    for x in 8..13 {
        assert_eq!(b.pixel(x, 8 + 1364), PINNED_COLOR, "x {x}");
        assert_eq!(b.pixel(x, 8 + 1363), FREE_COLOR, "x {x}");
    }
    for x in 13..18 {
        assert_eq!(b.pixel(x, 8 + 909), FREE_COLOR, "x {x}");
        assert_eq!(b.pixel(x, 8 + 910), LIVE_COLOR, "x {x}");
    }
}
