//! The group of lanes of a warp that are converged at a call site.

use super::atomic::{Atomic32, Atomic64};
use super::{activemask, ballot, lane_id, lanemask_lt, lowest_set_bits, match_any, shfl_u32, shfl_u64};

/// The lanes of this warp that execute this call together, as seen by `activemask`.
///
/// Under independent thread scheduling the group may be any subset of the warp, and two calls
/// at the same site may see different groups; code built on a `WarpGroup` only assumes that
/// every lane of `mask` goes on to execute the same collectives with the same mask.
#[derive(Clone, Copy, Debug)]
pub struct WarpGroup {
    /// Lanes in the group.
    pub mask: u32,
    /// Lowest lane of the group.
    pub leader: u32,
    /// This lane's position among the group's lanes (0 for the leader).
    pub rank: u32,
    /// Number of lanes in the group.
    pub size: u32,
}

impl WarpGroup {
    /// The group of lanes converged at this point.
    #[inline(always)]
    pub fn current() -> Self {
        Self::of_mask(activemask())
    }

    /// The lanes converged at this point whose `key` equals this lane's: the group for a
    /// warp-aggregated update of a counter that depends on the lane (lanes of one group must
    /// all address the same counter, or the leader's atomic serves lanes of other counters).
    #[inline(always)]
    pub fn current_with_key(key: u32) -> Self {
        Self::of_mask(match_any(activemask(), key))
    }

    #[inline(always)]
    fn of_mask(mask: u32) -> Self {
        WarpGroup {
            mask,
            leader: mask.trailing_zeros(),
            rank: (mask & lanemask_lt()).count_ones(),
            size: mask.count_ones(),
        }
    }

    /// The group without its `k` lowest lanes: what the other lanes, calling this together,
    /// go on with.
    #[inline(always)]
    pub fn without_lowest(&self, k: u32) -> Self {
        Self::of_mask(self.mask & !(lowest_set_bits(self.mask as u64, k) as u32))
    }

    /// This lane alone, as a group of one.
    #[inline(always)]
    pub fn solo() -> Self {
        let lane = lane_id();
        WarpGroup { mask: 1 << lane, leader: lane, rank: 0, size: 1 }
    }

    #[inline(always)]
    pub fn is_leader(&self) -> bool {
        lane_id() == self.leader
    }

    /// The leader's `value`, on every lane of the group.
    #[inline(always)]
    pub fn broadcast_u32(&self, value: u32) -> u32 {
        shfl_u32(self.mask, value, self.leader)
    }

    /// The leader's `value`, on every lane of the group.
    #[inline(always)]
    pub fn broadcast_u64(&self, value: u64) -> u64 {
        shfl_u64(self.mask, value, self.leader)
    }

    /// Sum of `value` over the lanes of the group below this one, and over the whole group.
    #[inline(always)]
    pub fn exclusive_sum(&self, value: u32) -> (u32, u32) {
        let me = lane_id();
        let mut lanes = self.mask;
        let (mut below, mut total) = (0u32, 0u32);
        while lanes != 0 {
            let lane = lanes.trailing_zeros();
            lanes &= lanes - 1;
            let v = shfl_u32(self.mask, value, lane);
            if lane < me {
                below += v;
            }
            total += v;
        }
        (below, total)
    }

    /// [`exclusive_sum`](Self::exclusive_sum) by bits: one ballot per bit of the largest
    /// `value` in the group (and one to see that no higher bit is set), where the shuffles of
    /// `exclusive_sum` take one per lane. For small values, such as the few objects each lane
    /// of an allocation asks for. The sums wrap at `u32::MAX`.
    #[inline(always)]
    pub fn exclusive_sum_by_bits(&self, value: u32) -> (u32, u32) {
        let lower = lanemask_lt();
        let (mut below, mut total) = (0u32, 0u32);
        let mut bit = 0;
        // Uniform: every lane of the group sees the same ballots, so all take the same turns.
        while bit < 32 && ballot(self.mask, value >> bit != 0) != 0 {
            let set = ballot(self.mask, (value >> bit) & 1 != 0);
            below = below.wrapping_add((set & lower).count_ones() << bit);
            total = total.wrapping_add(set.count_ones() << bit);
            bit += 1;
        }
        (below, total)
    }

    /// Warp-aggregated `fetch_add(count)` on a 32-bit counter: one atomic per group, and each
    /// lane receives the counter value at which its own `count` items start.
    #[inline(always)]
    pub fn fetch_add_u32(&self, counter: &Atomic32, count: u32) -> u32 {
        let (below, total) = self.exclusive_sum(count);
        let mut base = 0;
        if self.is_leader() && total != 0 {
            base = counter.fetch_add(total);
        }
        self.broadcast_u32(base) + below
    }

    /// Warp-aggregated `fetch_add(1)` on a 32-bit counter by the lanes whose `flag` is set:
    /// one ballot and one atomic per group (no scan: each count is 0 or 1). A flagged lane
    /// receives its own counter value; the others get a value they must not use.
    #[inline(always)]
    pub fn fetch_add_flagged_u32(&self, counter: &Atomic32, flag: bool) -> u32 {
        let flagged = ballot(self.mask, flag);
        let mut base = 0;
        if self.is_leader() && flagged != 0 {
            base = counter.fetch_add(flagged.count_ones());
        }
        self.broadcast_u32(base) + (flagged & lanemask_lt()).count_ones()
    }

    /// Warp-aggregated `fetch_add(1)` on a 32-bit counter by every lane of the group.
    #[inline(always)]
    pub fn fetch_add_one_u32(&self, counter: &Atomic32) -> u32 {
        let mut base = 0;
        if self.is_leader() {
            base = counter.fetch_add(self.size);
        }
        self.broadcast_u32(base) + self.rank
    }

    /// Warp-aggregated `fetch_add(1)` on a 64-bit counter.
    #[inline(always)]
    pub fn fetch_add_one_u64(&self, counter: &Atomic64) -> u64 {
        let mut base = 0;
        if self.is_leader() {
            base = counter.fetch_add(self.size as u64);
        }
        self.broadcast_u64(base) + self.rank as u64
    }
}
