//! How the heap's pages are shared among pools, decided per pool when that
//! pool finishes sweeping (seed 000). When to collect is the heap's
//! decision (`collect/heap_sizing.rs`), never a pool's.
//!
//! After marking we only know how many slots are marked; after sweeping a
//! pool we know exactly how many of *its* slots are live and free, and how
//! many it handed out since the previous collection. The decision sets the
//! pool's page **budget**: a pool under its budget takes a fresh page after
//! a bounded lazy sweep; a pool holding `budget` pages first sweeps all of
//! its unswept pages and uses their free slots ("runs full"), and only then
//! takes fresh pages (while the heap is under its target).
//!
//! | situation after sweeping | decision | new budget |
//! |---|---|---|
//! | free ratio < `free_min`, pool churned (handed out ≥ `stable_ratio` of its slots since the last GC) | `Grow` | `pages × factor`, at most `pages + max_growth` |
//! | free ratio < `free_min`, pool barely allocated | `Stable` | unchanged: a stable pool may run very full |
//! | free ratio > `free_max` | `Shrink` | enough pages for the live slots at `free_goal`, never below the initial budget |
//! | free ratio > `free_max`, budget already at the goal | `Keep` | unchanged |
//! | otherwise (comfortable) | `Keep` | at least the pages it holds: its free slots are used before it takes more |

use crate::space::PAGE_SIZE;

/// Cap on a pool's initial budget (4 MiB), whatever `initial_slots` says.
pub const MAX_INITIAL_POOL_PAGES: usize = 64;

/// The knobs of the growth policy. Defaults are documented on `Config`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrowthPolicy {
    pub initial_slots: usize,
    pub factor: f64,
    pub max_growth_bytes: usize,
    pub free_min: f64,
    pub free_goal: f64,
    pub free_max: f64,
    pub stable_ratio: f64,
}

/// What a pool's sweep measured this cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CycleSample {
    pub live_slots: usize,
    pub free_slots: usize,
    /// Slots handed out between the previous collection and this one.
    pub allocated_slots: usize,
    /// Pages the pool held when the collection started.
    pub pages: usize,
    pub slots_per_page: usize,
    pub budget: usize,
}

/// How the budget changed, for stats and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Decision {
    #[default]
    Initial,
    Grow,
    Stable,
    Shrink,
    Keep,
}

impl GrowthPolicy {
    /// The budget a pool starts with: room for `initial_slots` slots, at
    /// least one page and at most [`MAX_INITIAL_POOL_PAGES`].
    pub fn initial_pages(&self, slots_per_page: usize) -> usize {
        self.initial_slots
            .div_ceil(slots_per_page)
            .clamp(1, MAX_INITIAL_POOL_PAGES)
    }
}

/// Applies the policy to one pool's cycle; returns the new budget (pages).
pub fn decide(p: &GrowthPolicy, s: &CycleSample) -> (usize, Decision) {
    let floor = p.initial_pages(s.slots_per_page);
    let total = s.live_slots + s.free_slots;
    if total == 0 {
        return (s.budget.max(floor), Decision::Keep);
    }
    let free_ratio = s.free_slots as f64 / total as f64;
    if free_ratio < p.free_min {
        let churned = s.allocated_slots as f64 >= p.stable_ratio * total as f64;
        if !churned {
            return (s.budget.max(floor), Decision::Stable);
        }
        let base = s.pages.max(s.budget);
        let mut target = (base as f64 * p.factor).ceil() as usize;
        if p.max_growth_bytes > 0 {
            target = target.min(base + (p.max_growth_bytes / PAGE_SIZE).max(1));
        }
        return (target.max(base + 1).max(floor), Decision::Grow);
    }
    if free_ratio > p.free_max {
        let want_slots = (s.live_slots as f64 / (1.0 - p.free_goal)).ceil() as usize;
        let target = want_slots.div_ceil(s.slots_per_page).max(floor);
        if target < s.budget {
            return (target, Decision::Shrink);
        }
        return (s.budget.max(floor), Decision::Keep);
    }
    // A comfortable pool keeps the pages it has as its share.
    (s.budget.max(s.pages).max(floor), Decision::Keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: GrowthPolicy = GrowthPolicy {
        initial_slots: 4096,
        factor: 1.8,
        max_growth_bytes: 64 * PAGE_SIZE,
        free_min: 0.2,
        free_goal: 0.4,
        free_max: 0.65,
        stable_ratio: 0.1,
    };

    fn sample(
        live: usize,
        free: usize,
        allocated: usize,
        pages: usize,
        budget: usize,
    ) -> CycleSample {
        CycleSample {
            live_slots: live,
            free_slots: free,
            allocated_slots: allocated,
            pages,
            slots_per_page: 1000,
            budget,
        }
    }

    #[test]
    fn churning_full_pool_grows_by_factor_bounded_by_max_growth() {
        assert_eq!(
            decide(&P, &sample(9_500, 500, 8_000, 10, 10)),
            (18, Decision::Grow)
        );
        assert_eq!(
            decide(&P, &sample(950_000, 50_000, 900_000, 1000, 1000)),
            (1064, Decision::Grow)
        );
    }

    #[test]
    fn stable_full_pool_keeps_its_budget() {
        assert_eq!(
            decide(&P, &sample(9_900, 100, 300, 10, 10)),
            (10, Decision::Stable)
        );
    }

    #[test]
    fn mostly_free_pool_shrinks_to_goal_but_not_below_initial() {
        // 3000 live at 40% free goal = 5000 slots = 5 pages.
        assert_eq!(
            decide(&P, &sample(3_000, 17_000, 20_000, 20, 20)),
            (5, Decision::Shrink)
        );
        assert_eq!(
            decide(&P, &sample(10, 19_990, 20_000, 20, 20)),
            (5, Decision::Shrink)
        );
        assert_eq!(
            decide(&P, &sample(10, 19_990, 20_000, 20, 5)),
            (5, Decision::Keep)
        );
    }

    #[test]
    fn comfortable_pool_keeps_its_budget() {
        assert_eq!(
            decide(&P, &sample(6_000, 4_000, 8_000, 10, 12)),
            (12, Decision::Keep)
        );
        assert_eq!(decide(&P, &sample(0, 0, 0, 0, 2)), (5, Decision::Keep));
        // A pool that took fresh pages past its budget keeps them as its share.
        assert_eq!(
            decide(&P, &sample(6_000, 4_000, 8_000, 10, 5)),
            (10, Decision::Keep)
        );
    }
}
