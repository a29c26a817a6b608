//! Gives the library the soname of the Boehm collector's, so the dynamic
//! linker takes it for `libgc.so.1`.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libgc.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
