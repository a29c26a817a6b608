//! `mosaic_config`: the C view of `mosaic::Config`.

use mosaic_core::{Config, SizeClassPreset};

use crate::error::{clear_error, invalid, mosaic_error, report, set_error};

/// Size-class table presets.
pub const MOSAIC_CLASSES_DEFAULT: u32 = 0;
/// Ruby's five pools: 40, 80, 160, 320, 640 bytes.
pub const MOSAIC_CLASSES_RUBY: u32 = 1;

/// Heap configuration; fill with `mosaic_config_default` or
/// `mosaic_config_from_env`, then adjust. Fields and defaults are those of
/// the Rust `Config` (see the crate docs or ARCHITECTURE.md).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct mosaic_config {
    pub max_heap: usize,
    pub size_classes: u32,
    pub initial_slots: usize,
    pub growth_factor: f64,
    pub growth_max: usize,
    pub free_min_ratio: f64,
    pub free_goal_ratio: f64,
    pub free_max_ratio: f64,
    pub stable_ratio: f64,
    pub large_initial: usize,
    pub lazy_sweep: bool,
    pub sweep_step_pages: usize,
    pub verify: bool,
    pub stress: u64,
}

impl From<&Config> for mosaic_config {
    fn from(c: &Config) -> Self {
        mosaic_config {
            max_heap: c.max_heap,
            size_classes: match c.size_classes {
                SizeClassPreset::Ruby => MOSAIC_CLASSES_RUBY,
                _ => MOSAIC_CLASSES_DEFAULT,
            },
            initial_slots: c.initial_slots,
            growth_factor: c.growth_factor,
            growth_max: c.growth_max,
            free_min_ratio: c.free_min_ratio,
            free_goal_ratio: c.free_goal_ratio,
            free_max_ratio: c.free_max_ratio,
            stable_ratio: c.stable_ratio,
            large_initial: c.large_initial,
            lazy_sweep: c.lazy_sweep,
            sweep_step_pages: c.sweep_step_pages,
            verify: c.verify,
            stress: c.stress,
        }
    }
}

impl mosaic_config {
    /// The Rust `Config`, validated; on error records it for `function`.
    pub(crate) fn to_config(self, function: &str) -> Result<Config, mosaic_error> {
        let size_classes = match self.size_classes {
            MOSAIC_CLASSES_DEFAULT => SizeClassPreset::Mosaic,
            MOSAIC_CLASSES_RUBY => SizeClassPreset::Ruby,
            other => {
                set_error(
                    function,
                    mosaic_error::MOSAIC_ERR_CONFIG,
                    &format!("invalid configuration: unknown size_classes {other}"),
                );
                return Err(mosaic_error::MOSAIC_ERR_CONFIG);
            }
        };
        let c = Config {
            max_heap: self.max_heap,
            size_classes,
            initial_slots: self.initial_slots,
            growth_factor: self.growth_factor,
            growth_max: self.growth_max,
            free_min_ratio: self.free_min_ratio,
            free_goal_ratio: self.free_goal_ratio,
            free_max_ratio: self.free_max_ratio,
            stable_ratio: self.stable_ratio,
            large_initial: self.large_initial,
            lazy_sweep: self.lazy_sweep,
            sweep_step_pages: self.sweep_step_pages,
            verify: self.verify,
            stress: self.stress,
        };
        c.validate().map_err(|e| report(function, &e))?;
        Ok(c)
    }
}

/// Fills `out` with the defaults. Returns `MOSAIC_ERR_INVALID_ARGUMENT` if
/// `out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to writable memory for a `mosaic_config`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_config_default(out: *mut mosaic_config) -> mosaic_error {
    if out.is_null() {
        return invalid("mosaic_config_default", "out is NULL");
    }
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write((&Config::default()).into()) };
    clear_error();
    mosaic_error::MOSAIC_OK
}

/// Fills `out` with the defaults overridden by `MOSAIC_*` environment
/// variables. On a bad variable, returns `MOSAIC_ERR_CONFIG` (the message
/// names it) and leaves `out` with the defaults.
///
/// # Safety
/// As `mosaic_config_default`.
#[no_mangle]
pub unsafe extern "C" fn mosaic_config_from_env(out: *mut mosaic_config) -> mosaic_error {
    const F: &str = "mosaic_config_from_env";
    if out.is_null() {
        return invalid(F, "out is NULL");
    }
    let config = Config::from_env();
    let c = config
        .as_ref()
        .map_or_else(|_| Config::default(), Clone::clone);
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write((&c).into()) };
    match config {
        Ok(_) => {
            clear_error();
            mosaic_error::MOSAIC_OK
        }
        Err(e) => report(F, &e),
    }
}
