//! Runs the built `mosaic-heapviz` binary on a small dump.

use std::path::PathBuf;
use std::process::Command;

const DUMP: &str = r#"{"type":"HEAP","page_size":8192,"pages_in_use":2,"objects":4}
{"type":"PAGE","page":1,"address":"0x7f0000010000","pool":0,"slot_size":1024,"slots":8,"live":1,"pinned":0}
{"type":"PAGE","page":2,"address":"0x7f0000012000","pool":0,"slot_size":1024,"slots":8,"live":2,"pinned":1}
{"type":"OBJECT","address":"0x7f0000010400","page":1,"slot":1,"pool":0,"size":1000,"pinned":false,"flags":[]}
{"type":"OBJECT","address":"0x7f0000012000","page":2,"slot":0,"pool":0,"size":1000,"pinned":true,"flags":["PINNED"],"type_name":"buffer"}
{"type":"OBJECT","address":"0x7f0000012800","page":2,"slot":2,"pool":0,"size":900,"pinned":false,"flags":["NO_POINTERS"]}
{"type":"OBJECT","address":"0x7f0000100000","page":40,"size":200000,"large":true,"pinned":false,"flags":[]}
"#;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mosaic-heapviz"))
}

/// A fresh directory under the system temp dir, unique to this test.
fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mosaic-heapviz-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn draws_a_png_of_the_expected_size() {
    let dir = temp_dir("ok");
    let dump = dir.join("heap.jsonl");
    let png = dir.join("heap.png");
    std::fs::write(&dump, DUMP).unwrap();
    let out = bin()
        .arg(&dump)
        .arg("-o")
        .arg(&png)
        .args(["--order", "pinned", "--cell", "3"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "one summary line: {stdout}");
    assert!(
        stdout.contains("2 pages, 1 pinned / 2 live / 13 free slots, 1 large objects not drawn"),
        "{stdout}"
    );
    let (w, h) = image::image_dimensions(&png).unwrap();
    // Legend (240 px) is wider than 2 columns; height: 8 + 8 slots * 3 px + 8 + 14 + 8.
    assert_eq!((w, h), (240 + 16, 8 + 24 + 8 + 14 + 8));
    let img = image::open(&png).unwrap().to_rgb8();
    // Page 2 (one pinned slot) comes first: its slot 0 is red.
    assert_eq!(img.get_pixel(9, 9).0, mosaic_heapviz::PINNED_COLOR);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_missing_dump_fails_with_a_clear_message() {
    let dir = temp_dir("missing");
    let out = bin()
        .arg(dir.join("no-such.jsonl"))
        .arg("-o")
        .arg(dir.join("x.png"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot open heap dump") && stderr.contains("no-such.jsonl"),
        "{stderr}"
    );
    assert!(!dir.join("x.png").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_malformed_dump_names_the_line() {
    let dir = temp_dir("malformed");
    let dump = dir.join("bad.jsonl");
    std::fs::write(
        &dump,
        "{\"type\":\"HEAP\",\"page_size\":8192}\n{\"type\":\"PAGE\",\n",
    )
    .unwrap();
    let out = bin()
        .arg(&dump)
        .arg("-o")
        .arg(dir.join("x.png"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.jsonl: line 2:"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unwritable_output_fails() {
    let dir = temp_dir("unwritable");
    let dump = dir.join("heap.jsonl");
    std::fs::write(&dump, DUMP).unwrap();
    let out = bin()
        .arg(&dump)
        .arg("-o")
        .arg(dir.join("missing-dir/out.png"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot write") && stderr.contains("missing-dir"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_arguments_are_rejected() {
    let out = bin()
        .args(["x.jsonl", "-o", "y.png", "--order", "sideways"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sideways"));
}
