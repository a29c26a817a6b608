//! Building the peer programs in `peers/`. A peer whose toolchain or library
//! is missing is skipped with a reason the user can act on.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a built peer is, or why it is not there.
pub type Built = Result<PathBuf, String>;

/// Every peer program the suite can run.
pub struct Peers {
    pub boehm_gcbench: Built,
    /// GCBench with gc_inline.h's inline allocation (`-DBOEHM_INLINE`).
    pub boehm_gcbench_inline: Built,
    /// The same GCBench program on Mosaic's C API (`-DUSE_MOSAIC
    /// -DBOEHM_INLINE`, `peers/c/mosaic_c.h`), linked to libmosaic.a.
    pub mosaic_c_gcbench: Built,
    pub boehm_binary_trees: Built,
    pub boehm_binary_trees_inline: Built,
    pub c_nqueens: Built,
    pub alloc_glibc: Built,
    pub alloc_jemalloc: Built,
    pub alloc_mimalloc: Built,
    /// `peers/c/threads.c` on Boehm, glibc, jemalloc and mimalloc.
    pub threads_boehm: Built,
    pub threads_glibc: Built,
    pub threads_jemalloc: Built,
    pub threads_mimalloc: Built,
    pub ocaml_nqueens: Built,
    pub ocaml_binary_trees: Built,
    /// Directory of compiled classes.
    pub java: Built,
    /// A directory holding Mosaic's drop-in `libgc.so.1` (`crates/mosaic-gc`,
    /// see [`mosaic_libgc`]): the `*-on-mosaic` runners run the Boehm peers'
    /// own binaries with it as their `LD_LIBRARY_PATH`.
    pub mosaic_libgc: Built,
    pub go_gcbench: Built,
    pub go_binary_trees: Built,
}

const INSTALL: &str = "run scripts/install-peers.sh";

fn has(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "building {what} failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )),
        Err(e) => Err(format!("building {what} failed: {e}")),
    }
}

pub(crate) fn cc(src: &Path, out: &Path, flags: &[&str], header: Option<(&str, &str)>) -> Built {
    if !has("cc") {
        return Err(format!(
            "no C compiler (package build-essential; {INSTALL})"
        ));
    }
    if let Some((h, pkg)) = header {
        if !Path::new("/usr/include").join(h).exists() {
            return Err(format!("{h} not found (package {pkg}; {INSTALL})"));
        }
    }
    // A release build, as the programs' users build them: -DNDEBUG turns
    // off the headers' own assertions (gc_inline.h's GC_ASSERT calls
    // GC_size on every inline allocation otherwise).
    run(
        Command::new("cc")
            .args(["-O2", "-DNDEBUG", "-std=gnu11"])
            .arg(src)
            .arg("-o")
            .arg(out)
            .args(flags),
        &out.display().to_string(),
    )?;
    Ok(out.to_path_buf())
}

/// Builds `package` with `cargo build --release -p PACKAGE
/// --message-format=json` (the cargo running the suite, or `cargo`) from
/// the workspace root, and returns the first file of that package's
/// artifacts that `pick` accepts. `what` names the library in errors.
fn cargo_artifact(package: &str, what: &str, pick: impl Fn(&Path) -> bool) -> Built {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let built = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--release", "-p", package, "--message-format=json"])
        .output()
        .map_err(|e| format!("building {what} failed: {e}"))?;
    if !built.status.success() {
        return Err(format!(
            "building {what} failed: {}",
            String::from_utf8_lossy(&built.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    artifact_in(&String::from_utf8_lossy(&built.stdout), package, pick)
        .ok_or_else(|| format!("building {what}: cargo reported no such file for {package}"))
}

/// Whether cargo's package id `id` is package `name`'s: `NAME 1.0 (…)`
/// (cargo before 1.77), `URL/NAME#1.0`, or `URL#NAME@1.0` (a package whose
/// directory has another name).
fn package_id_is(id: &str, name: &str) -> bool {
    if let Some((url, fragment)) = id.split_once('#') {
        match fragment.split_once('@') {
            Some((n, _)) => n == name,
            None => url.rsplit('/').next() == Some(name),
        }
    } else {
        id.split(' ').next() == Some(name)
    }
}

/// The first file `pick` accepts among the artifacts cargo's JSON messages
/// report for `package`.
fn artifact_in(json: &str, package: &str, pick: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    json.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact")
        .filter(|v| {
            v["package_id"]
                .as_str()
                .is_some_and(|id| package_id_is(id, package))
        })
        .flat_map(|v| {
            v["filenames"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| f.as_str().map(PathBuf::from))
                .collect::<Vec<_>>()
        })
        .find(|f| pick(f))
}

/// Builds Mosaic's drop-in replacement of the Boehm collector's shared
/// library (`cargo build --release -p mosaic-gc`: `libgc.so`, soname
/// `libgc.so.1`) and copies it as `out/mosaic-libgc/libgc.so.1`; returns that
/// directory, for `LD_LIBRARY_PATH`. The copy replaces the old file by a
/// rename, so a program still running with the old one keeps its mapping.
pub fn mosaic_libgc(out: &Path) -> Built {
    let lib = cargo_artifact("mosaic-gc", "Mosaic's libgc.so.1 (crates/mosaic-gc)", |f| {
        f.file_name().is_some_and(|n| n == "libgc.so")
    })?;
    let dir = out.join("mosaic-libgc");
    let copy = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let tmp = dir.join(format!("libgc.so.1.{}", std::process::id()));
        std::fs::copy(&lib, &tmp)?;
        std::fs::rename(&tmp, dir.join("libgc.so.1"))
    };
    copy().map_err(|e| format!("copying {} into {}: {e}", lib.display(), dir.display()))?;
    Ok(dir)
}

/// Builds a C peer against Mosaic's C library: `cargo build --release -p
/// mosaic-capi` (the cargo running the suite, or `cargo`), then the program
/// linked to the `libmosaic.a` that build reports, with `include/mosaic.h`.
pub fn mosaic_c(src: &Path, out: &Path) -> Built {
    if !has("cc") {
        return Err(format!(
            "no C compiler (package build-essential; {INSTALL})"
        ));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // The C library's artifacts (its target is named `mosaic`, as is the
    // core crate's, whose rlib the extension filter drops).
    let lib = cargo_artifact("mosaic-capi", "libmosaic", |f| {
        f.extension().is_some_and(|e| e == "a")
    })?;
    run(
        Command::new("cc")
            .args([
                "-O2",
                "-DNDEBUG",
                "-std=gnu11",
                "-DUSE_MOSAIC",
                "-DBOEHM_INLINE",
            ])
            .arg(format!("-I{}", root.join("include").display()))
            .arg(src)
            .arg("-o")
            .arg(out)
            .arg(&lib)
            .args(["-lpthread", "-ldl", "-lm"]),
        &out.display().to_string(),
    )?;
    Ok(out.to_path_buf())
}

/// Builds the OCaml peer `peers/ocaml/{name}.ml` (with clock.c, its
/// monotonic clock) into `out`, in a directory of its own so the objects
/// stay out of the sources.
pub fn ocaml(src: &Path, out: &Path, name: &str) -> Built {
    if !has("ocamlopt") {
        return Err(format!("ocamlopt not found (package ocaml-nox; {INSTALL})"));
    }
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let dir = out.join(format!("ocaml-{name}"));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let ml = format!("{name}.ml");
    for file in ["clock.c", ml.as_str()] {
        std::fs::copy(src.join("ocaml").join(file), dir.join(file)).map_err(|e| e.to_string())?;
    }
    let exe = out.join(format!("ocaml_{name}"));
    run(
        Command::new("ocamlopt")
            .current_dir(&dir)
            .args(["-unsafe", "-inline", "200", "clock.c", &ml])
            .arg("-o")
            .arg(&exe),
        name,
    )?;
    Ok(exe)
}

/// Compiles the Java peers `peers/java/{class}.java` (`src` is `peers/`)
/// into the class directory `dir`, which it returns.
pub(crate) fn javac(src: &Path, dir: &Path, classes: &[&str]) -> Built {
    if !has("javac") || !has("java") {
        return Err(format!(
            "javac not found (package openjdk-17-jdk-headless; {INSTALL})"
        ));
    }
    let sources: Vec<PathBuf> = classes
        .iter()
        .map(|n| src.join("java").join(format!("{n}.java")))
        .collect();
    run(
        Command::new("javac").arg("-d").arg(dir).args(&sources),
        "java peers",
    )?;
    Ok(dir.to_path_buf())
}

impl Peers {
    /// Builds every peer from `src` (the `peers/` folder) into `out`.
    pub fn build(src: &Path, out: &Path) -> Peers {
        std::fs::create_dir_all(out).expect("peer build directory");
        let c = src.join("c");
        let boehm = Some(("gc.h", "libgc-dev"));
        let jemalloc = Some(("jemalloc/jemalloc.h", "libjemalloc-dev"));
        let mimalloc = Some(("mimalloc.h", "libmimalloc-dev"));
        // OCaml: the program and clock.c (its monotonic clock), compiled in
        // a directory of their own so the objects stay out of the sources.
        let ocaml = |name: &str| ocaml(src, out, name);
        let go = |name: &str| -> Built {
            if !has("go") {
                return Err(format!("go not found (package golang-go; {INSTALL})"));
            }
            let exe = out.join(format!("go_{name}"));
            run(
                Command::new("go")
                    .env("GOCACHE", out.join("gocache"))
                    .env("GOFLAGS", "-mod=mod")
                    .args(["build", "-o"])
                    .arg(&exe)
                    .arg(src.join("go").join(format!("{name}.go")))
                    .arg(src.join("go").join("report.go")),
                name,
            )?;
            Ok(exe)
        };
        let java = || {
            javac(
                src,
                &out.join("java"),
                &["GCBench", "BinaryTrees", "Pauses"],
            )
        };
        Peers {
            mosaic_c_gcbench: mosaic_c(&c.join("gcbench.c"), &out.join("mosaic_c_gcbench")),
            boehm_gcbench: cc(
                &c.join("gcbench.c"),
                &out.join("boehm_gcbench"),
                &["-lgc", "-lpthread"],
                boehm,
            ),
            boehm_binary_trees: cc(
                &c.join("binary_trees.c"),
                &out.join("boehm_binary_trees"),
                &["-lgc"],
                boehm,
            ),
            boehm_gcbench_inline: cc(
                &c.join("gcbench.c"),
                &out.join("boehm_gcbench_inline"),
                &["-DBOEHM_INLINE", "-lgc", "-lpthread"],
                boehm,
            ),
            boehm_binary_trees_inline: cc(
                &c.join("binary_trees.c"),
                &out.join("boehm_binary_trees_inline"),
                &["-DBOEHM_INLINE", "-lgc"],
                boehm,
            ),
            c_nqueens: cc(
                &c.join("nqueens.c"),
                &out.join("c_nqueens"),
                &["-lgc"],
                boehm,
            ),
            alloc_glibc: cc(&c.join("alloc.c"), &out.join("alloc_glibc"), &[], None),
            alloc_jemalloc: cc(
                &c.join("alloc.c"),
                &out.join("alloc_jemalloc"),
                &["-DUSE_JEMALLOC", "-ljemalloc"],
                jemalloc,
            ),
            alloc_mimalloc: cc(
                &c.join("alloc.c"),
                &out.join("alloc_mimalloc"),
                &["-DUSE_MIMALLOC", "-lmimalloc"],
                mimalloc,
            ),
            threads_boehm: cc(
                &c.join("threads.c"),
                &out.join("threads_boehm"),
                &["-DUSE_BOEHM", "-lgc", "-lpthread"],
                boehm,
            ),
            threads_glibc: cc(
                &c.join("threads.c"),
                &out.join("threads_glibc"),
                &["-lpthread"],
                None,
            ),
            threads_jemalloc: cc(
                &c.join("threads.c"),
                &out.join("threads_jemalloc"),
                &["-DUSE_JEMALLOC", "-ljemalloc", "-lpthread"],
                jemalloc,
            ),
            threads_mimalloc: cc(
                &c.join("threads.c"),
                &out.join("threads_mimalloc"),
                &["-DUSE_MIMALLOC", "-lmimalloc", "-lpthread"],
                mimalloc,
            ),
            ocaml_nqueens: ocaml("nqueens"),
            ocaml_binary_trees: ocaml("binary_trees"),
            java: java(),
            mosaic_libgc: mosaic_libgc(out),
            go_gcbench: go("gcbench"),
            go_binary_trees: go("binarytrees"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mosaic_bench::workloads::threads::Params;

    /// Builds `threads.c` as the suite does, runs it, and compares its
    /// check value with the Rust side's.
    fn build_and_check(flags: &[&str], header: Option<(&str, &str)>, name: &str) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/c/threads.c");
        let out = std::env::temp_dir().join(format!("mosaic-bench-{name}-{}", std::process::id()));
        let exe = match cc(&src, &out, flags, header) {
            Ok(exe) => exe,
            // A missing compiler or library is a skip with its package.
            Err(e) => return assert!(e.contains("package"), "{name}: {e}"),
        };
        let p = Params {
            threads: 3,
            allocs: 10_001,
            ring: 256,
        };
        let o = Command::new(&exe)
            .args(p.peer_args())
            .env("GC_MAXIMUM_HEAP_SIZE", (64 << 20).to_string())
            .output()
            .unwrap();
        std::fs::remove_file(&exe).unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{name}: {stdout}");
        let want = format!(
            "RESULT {{\"check\": {}, \"ns_per_alloc\": ",
            p.expected_check()
        );
        assert!(stdout.contains(&want), "{name}: {stdout}");
        assert!(stdout.starts_with("TIME "), "{name}: {stdout}");
    }

    #[test]
    fn threads_c_agrees_with_the_rust_check_value() {
        build_and_check(&["-lpthread"], None, "threads-glibc");
        build_and_check(
            &["-DUSE_BOEHM", "-lgc", "-lpthread"],
            Some(("gc.h", "libgc-dev")),
            "threads-boehm",
        );
        build_and_check(
            &["-DUSE_MIMALLOC", "-lmimalloc", "-lpthread"],
            Some(("mimalloc.h", "libmimalloc-dev")),
            "threads-mimalloc",
        );
    }

    #[test]
    fn cargo_artifacts_are_found_by_exact_package() {
        assert!(package_id_is(
            "path+file:///w/crates/mosaic-gc#0.1.0",
            "mosaic-gc"
        ));
        assert!(!package_id_is(
            "path+file:///w/crates/mosaic#0.1.0",
            "mosaic-gc"
        ));
        assert!(!package_id_is(
            "path+file:///w/crates/mosaic-gc#0.1.0",
            "mosaic"
        ));
        assert!(package_id_is(
            "path+file:///w/examples/rust#mosaic-example-minimal@0.1.0",
            "mosaic-example-minimal"
        ));
        assert!(package_id_is(
            "mosaic-gc 0.1.0 (path+file:///w/crates/mosaic-gc)",
            "mosaic-gc"
        ));
        // What `cargo build -p mosaic-gc --message-format=json` prints: the
        // core crate's rlib, a build script, then the library.
        let json = [
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/mosaic#0.1.0","filenames":["/w/target/release/deps/libmosaic-1.rlib"]}"#,
            r#"{"reason":"build-script-executed","package_id":"path+file:///w/crates/mosaic-gc#0.1.0","out_dir":"/w/target/release/build/x"}"#,
            "not json",
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/mosaic-gc#0.1.0","filenames":["/w/target/release/libgc.so"]}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        let is_so = |f: &Path| f.file_name().is_some_and(|n| n == "libgc.so");
        assert_eq!(
            artifact_in(&json, "mosaic-gc", is_so),
            Some(PathBuf::from("/w/target/release/libgc.so"))
        );
        assert_eq!(artifact_in(&json, "mosaic", is_so), None);
        assert_eq!(artifact_in(&json, "mosaic-capi", |_| true), None);
    }

    #[test]
    fn a_missing_library_is_a_skip_naming_its_package() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/c/threads.c");
        let out = std::env::temp_dir().join("mosaic-bench-never-built");
        let e = cc(&src, &out, &[], Some(("no/such/header.h", "libnosuch-dev"))).unwrap_err();
        assert!(
            e.contains("libnosuch-dev") && e.contains("install-peers"),
            "{e}"
        );
        assert!(!out.exists());
    }
}
