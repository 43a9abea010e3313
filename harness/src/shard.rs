//! `--shard i/n` and `--seeds`: which plays of a suite or a comparison this machine takes. A
//! module of its own so that suites and comparisons both use it without using each other.

use std::str::FromStr;

/// `i/n`: the i-th of n shards, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("--shard expects i/n with 1 <= i <= n (like 2/3), got `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// `--seeds`: `1..10` (both ends included), `7`, or a list `1,4,9`; at most
/// [`SeedRange::MAX`] seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedRange(pub Vec<u64>);

impl SeedRange {
    pub const MAX: u64 = 10_000;
}

impl FromStr for SeedRange {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<SeedRange, String> {
        let bad = || {
            format!("--seeds expects a range like 1..10, a seed, or a list like 1,4,9; got `{s}`")
        };
        let number = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        let seeds: Vec<u64> = match s.split_once("..") {
            Some((low, high)) => {
                let (low, high) = (number(low)?, number(high)?);
                if low > high {
                    return Err(format!("--seeds `{s}`: the range is empty (low > high)"));
                }
                if high - low >= Self::MAX {
                    return Err(format!(
                        "--seeds `{s}`: {} seeds; at most {} at once",
                        u128::from(high - low) + 1,
                        Self::MAX
                    ));
                }
                (low..=high).collect()
            }
            None => s
                .split(',')
                .map(number)
                .collect::<std::result::Result<_, _>>()?,
        };
        if seeds.len() as u64 > Self::MAX {
            return Err(format!("--seeds: at most {} seeds at once", Self::MAX));
        }
        Ok(SeedRange(seeds))
    }
}

impl Shard {
    /// Round-robin over the suite's order: each scenario's seeds spread over the shards, so long
    /// and short scenarios share the machines evenly.
    pub fn keeps(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// The items this shard keeps, the first at position `start` of the round-robin.
    pub(crate) fn share<T>(&self, start: usize, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.keeps(start + i))
            .map(|(_, item)| item)
            .collect()
    }
}
