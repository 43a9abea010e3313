//! The sides of a partition: who drops packets from whom, drawn from a mode and the targets.

use std::collections::BTreeSet;

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::run_folder::Grudge;
use crate::scenario::PartitionMode;

/// Who drops packets from whom for a partition of `all` nodes.
pub fn partition_grudge(
    mode: PartitionMode,
    targets: &[String],
    all: &[String],
    rng: &mut ChaCha8Rng,
) -> Grudge {
    let mut grudge: Grudge = all.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
    let mut cut = |a: &[String], b: &[String]| {
        for x in a {
            for y in b {
                if let Some(set) = grudge.get_mut(x) {
                    set.insert(y.clone());
                }
                if let Some(set) = grudge.get_mut(y) {
                    set.insert(x.clone());
                }
            }
        }
    };
    // Targets first (in the smaller side), then the others in seeded order.
    let mut order: Vec<String> = targets.to_vec();
    let mut rest: Vec<String> = all
        .iter()
        .filter(|n| !targets.contains(n))
        .cloned()
        .collect();
    rest.shuffle(rng);
    order.extend(rest.iter().cloned());
    match mode {
        PartitionMode::Isolate => cut(targets, &rest),
        PartitionMode::Halves => {
            let (small, big) = order.split_at(all.len() / 2);
            cut(small, big);
        }
        PartitionMode::Bridge => {
            let mid = all.len() / 2;
            let (left, right) = order.split_at(mid);
            // right[0] is the bridge: it sees both sides.
            cut(left, right.get(1..).unwrap_or_default());
        }
        PartitionMode::MajorityRing => {
            let n = order.len();
            let window = n / 2 + 1;
            let back = (window - 1) / 2;
            for (i, node) in order.iter().enumerate() {
                let sees: BTreeSet<usize> = (0..window).map(|d| (i + n + d - back) % n).collect();
                let drops = (0..n)
                    .filter(|j| !sees.contains(j))
                    .map(|j| order[j].clone());
                if let Some(set) = grudge.get_mut(node) {
                    set.extend(drops);
                }
            }
        }
    }
    grudge
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn isolate_cuts_targets_from_everyone_both_ways() {
        let all = names(3);
        let g = partition_grudge(
            PartitionMode::Isolate,
            &["n2".to_string()],
            &all,
            &mut ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!(
            g["n2"],
            BTreeSet::from(["n1".to_string(), "n3".to_string()])
        );
        assert_eq!(g["n1"], BTreeSet::from(["n2".to_string()]));
        assert_eq!(g["n3"], BTreeSet::from(["n2".to_string()]));
    }

    #[test]
    fn halves_put_targets_in_the_minority() {
        let all = names(5);
        let g = partition_grudge(
            PartitionMode::Halves,
            &["n4".to_string()],
            &all,
            &mut ChaCha8Rng::seed_from_u64(2),
        );
        assert_eq!(g["n4"].len(), 3);
        let minority: Vec<_> = g.iter().filter(|(_, s)| s.len() == 3).collect();
        assert_eq!(minority.len(), 2);
    }

    #[test]
    fn majority_ring_every_node_sees_a_majority_and_none_the_same() {
        let all = names(5);
        let g = partition_grudge(
            PartitionMode::MajorityRing,
            &[],
            &all,
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        let mut views = BTreeSet::new();
        for (node, drops) in &g {
            assert_eq!(drops.len(), 2, "{node} sees a majority of 5");
            assert!(!drops.contains(node));
            views.insert(drops.clone());
        }
        assert_eq!(views.len(), 5);
    }

    #[test]
    fn bridge_node_sees_both_sides() {
        let all = names(5);
        let g = partition_grudge(
            PartitionMode::Bridge,
            &[],
            &all,
            &mut ChaCha8Rng::seed_from_u64(4),
        );
        let bridges: Vec<_> = g.iter().filter(|(_, s)| s.is_empty()).collect();
        assert_eq!(bridges.len(), 1);
        assert_eq!(g.values().filter(|s| s.len() == 2).count(), 4);
    }
}
