//! Parsing of Mosaic's heap dump: one JSON object per line, discriminated
//! by its `type` field.
//!
//! * `HEAP` — the header: `page_size` (and counts this crate does not need).
//! * `PAGE` — one small-object page: its index, address, pool, slot size,
//!   slot count and the live/pinned counts the collector recorded.
//! * `OBJECT` — one live object: address, page, and for small objects the
//!   slot and pool; `large: true` marks a large object (no slot, no pool).
//!
//! Lines of a type this version does not know, and fields it does not know,
//! are skipped so that newer dumps still load; blank lines are skipped too.
//! A line that is not valid JSON, or a known line missing a field it needs,
//! is an error that names the (1-based) line number. Addresses are hex
//! strings (`"0x7f1234560000"`); plain JSON integers are accepted as well.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

/// Everything a dump says that the diagrams use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapDump {
    /// Size of one heap page in bytes (from the `HEAP` line).
    pub page_size: usize,
    /// Small-object pages, in the order the dump lists them.
    pub pages: Vec<PageInfo>,
    /// Live objects, small and large, in the order the dump lists them.
    pub objects: Vec<ObjectInfo>,
}

/// One small-object page (a `PAGE` line).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct PageInfo {
    /// The page's index in the heap.
    pub page: usize,
    /// The page's start address.
    #[serde(deserialize_with = "de_address")]
    pub address: u64,
    /// Size-class pool the page serves.
    pub pool: usize,
    /// Bytes per slot.
    pub slot_size: usize,
    /// Number of slots on the page.
    pub slots: usize,
    /// Live objects the collector counted on the page (pinned included).
    pub live: usize,
    /// Pinned objects the collector counted on the page.
    pub pinned: usize,
}

/// One live object (an `OBJECT` line).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ObjectInfo {
    /// The object's address.
    #[serde(deserialize_with = "de_address")]
    pub address: u64,
    /// Index of the page holding the object (its first page if large).
    pub page: usize,
    /// Slot within the page; absent for large objects.
    #[serde(default)]
    pub slot: Option<usize>,
    /// Size-class pool; absent for large objects.
    #[serde(default)]
    pub pool: Option<usize>,
    /// Object size in bytes.
    pub size: usize,
    /// Whether the object may not be moved.
    #[serde(default)]
    pub pinned: bool,
    /// Header flags by name, e.g. `PINNED`, `NO_POINTERS`.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The object's type, when the embedder registered one.
    #[serde(default)]
    pub type_name: Option<String>,
    /// A large object, allocated outside the slotted pages.
    #[serde(default)]
    pub large: bool,
}

/// The `HEAP` header line.
#[derive(Deserialize)]
struct HeapLine {
    page_size: usize,
}

/// One line of the dump; unknown `type`s become [`Line::Other`].
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Line {
    #[serde(rename = "HEAP")]
    Heap(HeapLine),
    #[serde(rename = "PAGE")]
    Page(PageInfo),
    #[serde(rename = "OBJECT")]
    Object(ObjectInfo),
    #[serde(other)]
    Other,
}

/// Why a dump could not be read.
#[derive(Debug)]
pub enum DumpError {
    /// The dump file could not be opened.
    Open { path: PathBuf, source: io::Error },
    /// Reading failed at this (1-based) line.
    Io { line: usize, source: io::Error },
    /// This (1-based) line is not a well-formed dump record.
    Parse { line: usize, message: String },
    /// No `HEAP` line was found.
    MissingHeader,
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpError::Open { path, source } => {
                write!(f, "cannot open heap dump {}: {source}", path.display())
            }
            DumpError::Io { line, source } => write!(f, "line {line}: read error: {source}"),
            DumpError::Parse { line, message } => write!(f, "line {line}: {message}"),
            DumpError::MissingHeader => write!(f, "not a Mosaic heap dump: no HEAP line"),
        }
    }
}

impl std::error::Error for DumpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DumpError::Open { source, .. } | DumpError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Parses a heap dump from `reader`, one JSON object per line.
pub fn read_dump(reader: impl BufRead) -> Result<HeapDump, DumpError> {
    let mut dump = HeapDump::default();
    let mut saw_header = false;
    for (index, text) in reader.lines().enumerate() {
        let line = index + 1;
        let text = text.map_err(|source| DumpError::Io { line, source })?;
        if text.trim().is_empty() {
            continue;
        }
        let record: Line = serde_json::from_str(&text).map_err(|e| DumpError::Parse {
            line,
            message: json_message(&e),
        })?;
        match record {
            Line::Heap(h) => {
                if !saw_header {
                    dump.page_size = h.page_size;
                    saw_header = true;
                }
            }
            Line::Page(p) => dump.pages.push(p),
            Line::Object(o) => dump.objects.push(o),
            Line::Other => {}
        }
    }
    if !saw_header {
        return Err(DumpError::MissingHeader);
    }
    Ok(dump)
}

/// Opens `path` and parses it with [`read_dump`].
pub fn read_dump_file(path: impl AsRef<Path>) -> Result<HeapDump, DumpError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| DumpError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    read_dump(BufReader::new(file))
}

/// serde_json's message with its "at line 1 column N" (always line 1 here)
/// rewritten as a column, so the caller's line number is the only one.
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match full.strip_suffix(&suffix) {
        Some(msg) => format!("{msg} (column {})", e.column()),
        None => full,
    }
}

/// Accepts `"0x…"` hex strings (the dump's form), decimal strings and
/// plain JSON integers.
fn de_address<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(u64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Int(v) => Ok(v),
        Raw::Text(s) => {
            parse_address(&s).ok_or_else(|| serde::de::Error::custom(format!("bad address {s:?}")))
        }
    }
}

fn parse_address(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"type":"HEAP","page_size":65536,"pages_in_use":2,"objects":3}
{"type":"PAGE","page":17,"address":"0x7f1234560000","pool":3,"slot_size":48,"slots":1365,"live":2,"pinned":1,"future_field":[1,2]}
{"type":"OBJECT","address":"0x7f1234560030","page":17,"slot":1,"pool":3,"size":48,"pinned":true,"flags":["PINNED","NO_POINTERS"],"type_name":"pair"}

{"type":"OBJECT","address":"0x7f1234560060","page":17,"slot":2,"pool":3,"size":48,"pinned":false,"flags":[],"colour":"blue"}
{"type":"ROOTS","count":4}
{"type":"OBJECT","address":"0x7f0000100000","page":40,"size":200000,"large":true,"pinned":false,"flags":[]}
"#;

    #[test]
    fn parses_sample_and_ignores_unknowns() {
        let dump = read_dump(SAMPLE.as_bytes()).unwrap();
        assert_eq!(dump.page_size, 65536);
        assert_eq!(dump.pages.len(), 1);
        let p = &dump.pages[0];
        assert_eq!((p.page, p.address, p.pool), (17, 0x7f12_3456_0000, 3));
        assert_eq!((p.slot_size, p.slots, p.live, p.pinned), (48, 1365, 2, 1));
        assert_eq!(dump.objects.len(), 3);
        let o = &dump.objects[0];
        assert_eq!(o.address, 0x7f12_3456_0030);
        assert_eq!(
            (o.slot, o.pool, o.pinned, o.large),
            (Some(1), Some(3), true, false)
        );
        assert_eq!(o.flags, ["PINNED", "NO_POINTERS"]);
        assert_eq!(o.type_name.as_deref(), Some("pair"));
        assert_eq!(dump.objects[1].type_name, None);
        let large = &dump.objects[2];
        assert!(large.large);
        assert_eq!((large.slot, large.pool, large.size), (None, None, 200_000));
    }

    #[test]
    fn malformed_line_names_its_number() {
        let text = "{\"type\":\"HEAP\",\"page_size\":65536}\n\
                    {\"type\":\"ROOTS\"}\n\
                    {\"type\":\"PAGE\",\"page\":1,\n";
        let err = read_dump(text.as_bytes()).unwrap_err();
        assert!(matches!(err, DumpError::Parse { line: 3, .. }), "{err:?}");
        assert!(err.to_string().starts_with("line 3: "), "{err}");
    }

    #[test]
    fn missing_field_names_its_line() {
        let text = "{\"type\":\"HEAP\",\"page_size\":4096}\n\
                    {\"type\":\"PAGE\",\"page\":1,\"address\":\"0x1000\"}\n";
        let err = read_dump(text.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with("line 2: ") && err.contains("pool"), "{err}");
    }

    #[test]
    fn bad_address_is_an_error() {
        let text = "{\"type\":\"HEAP\",\"page_size\":4096}\n\
                    {\"type\":\"OBJECT\",\"address\":\"0xZZ\",\"page\":1,\"size\":8}\n";
        let err = read_dump(text.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with("line 2: ") && err.contains("0xZZ"), "{err}");
    }

    #[test]
    fn header_is_required() {
        let err = read_dump("".as_bytes()).unwrap_err();
        assert!(matches!(err, DumpError::MissingHeader));
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = read_dump_file("/nonexistent/mosaic/dump.jsonl").unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/mosaic/dump.jsonl"),
            "{err}"
        );
    }

    #[test]
    fn addresses_accept_hex_and_decimal() {
        assert_eq!(parse_address("0x10"), Some(16));
        assert_eq!(parse_address("0XfF"), Some(255));
        assert_eq!(parse_address("42"), Some(42));
        assert_eq!(parse_address("0x"), None);
    }
}
