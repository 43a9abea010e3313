//! When plays held to a rate can stop (issue 44, "a confirmed fix in a quarter of an hour").
//!
//! An entry held to a rate (a suite's `rate:`, or `chaos run --seeds ... --rate`) is judged
//! over its N plays (in this shard): a bound `class >= p` is met when k >= p * N, k being how
//! many of them counted as the class. After each play, with k so far and `left` plays to go,
//! the bound is
//! - **met already** when k >= p * N: the plays left can only add to k;
//! - **missed already** when k + left < p * N: even if every play left counted, k falls short;
//! - otherwise open: the plays left can still tip it either way.
//!
//! Once every bound of the entry is met or missed, its remaining plays are skipped: they
//! cannot change the answer, so a stopped entry ends as playing all N would have
//! (`stopping_agrees_with_playing_every_seed` walks every sequence of outcomes). The
//! denominator is N throughout: after a stop the share shown is k of the plays played, the
//! verdict k against p * N. Plays keep their order, so a stopped entry is a prefix of the full
//! one and plays again the same. The decision comes after a play, never before the first (a 0%
//! bound plays one seed: a run of nothing is no evidence). An entry whose plays are also each
//! held to a verdict, and every entry under `--all-seeds`, plays every seed.
//!
//! Data flows one way: the caller says what each play ended as; this says whether the entry's
//! next plays are still worth playing, and how each bound stands at the end.

use crate::rates::{share, Class, Tally};

/// At least this share (0 to 1) of an entry's plays count as the class (a name of
/// `rates::RATE_NAMES`).
pub type Bound = (String, f64);

/// Whether `k` counting plays of an entry's `planned` meet `at_least`: the one comparison the
/// stop and the closing verdict both make, so they cannot disagree by rounding.
pub fn meets(k: u32, planned: u32, at_least: f64) -> bool {
    f64::from(k) >= at_least * f64::from(planned)
}

/// How one bound stands after some of an entry's plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Met whatever the plays left give.
    Met,
    /// Missed whatever the plays left give.
    Missed,
    /// The plays left can still tip it.
    Open,
}

impl Standing {
    pub fn word(self) -> &'static str {
        match self {
            Standing::Met => "met",
            Standing::Missed => "missed",
            Standing::Open => "open",
        }
    }
}

/// A bound after `played` of `planned` plays, `k` of them counting; with every play played it
/// is never open.
pub fn standing(k: u32, played: u32, planned: u32, at_least: f64) -> Standing {
    let left = planned.saturating_sub(played);
    if meets(k, planned, at_least) {
        Standing::Met
    } else if !meets(k.saturating_add(left), planned, at_least) {
        Standing::Missed
    } else {
        Standing::Open
    }
}

/// One entry held to a rate, as its plays are played.
#[derive(Clone, Debug)]
pub struct Held {
    /// The entry's index (a suite's entry; a scenario's position on the command line).
    pub entry: usize,
    /// What lines about it start with (its scenario's path).
    pub name: String,
    pub bounds: Vec<Bound>,
    /// Its plays in all (in this shard): the denominator of every bound.
    pub planned: u32,
    /// What the plays played so far ended as.
    pub tally: Tally,
    may_stop: bool,
    stopped: bool,
}

impl Held {
    pub fn played(&self) -> u32 {
        self.tally.runs
    }

    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Each bound: its class, its share, how many plays counted and how it stands.
    pub fn standings(&self) -> Vec<(&str, f64, u32, Standing)> {
        self.bounds
            .iter()
            .map(|(class, at_least)| {
                let k = self.tally.count_as(class);
                let s = standing(k, self.played(), self.planned, *at_least);
                (class.as_str(), *at_least, k, s)
            })
            .collect()
    }

    /// Counts one more play; the line that says the entry stops, when every bound is now
    /// decided with plays left.
    fn record(&mut self, class: Class) -> Option<String> {
        self.tally.add(class, 0.0);
        let left = self.planned.saturating_sub(self.played());
        let standings = self.standings();
        if !self.may_stop || left == 0 || standings.iter().any(|s| s.3 == Standing::Open) {
            return None;
        }
        let each: Vec<String> = standings
            .iter()
            .map(|(class, at_least, k, s)| {
                format!(
                    "{class} >= {:.0}% {} ({k} of {})",
                    at_least * 100.0,
                    s.word(),
                    self.played()
                )
            })
            .collect();
        let line = format!(
            "{}: stopped after {} of {} seeds: {}; the {left} left cannot change {} \
             (--all-seeds plays every one)",
            self.name,
            self.played(),
            self.planned,
            each.join(", "),
            if standings.len() == 1 { "it" } else { "them" }
        );
        self.stopped = true;
        Some(line)
    }

    /// A bound's closing line: held or not, the share played, and how many plays were
    /// skipped when it stopped.
    pub fn closing_line(&self, class: &str, at_least: f64, k: u32, held: bool) -> String {
        let stopped = if self.played() < self.planned {
            format!(
                ", stopped after {} of {} seeds ({} whatever the rest gave)",
                self.played(),
                self.planned,
                if held { "met" } else { "missed" }
            )
        } else {
            String::new()
        };
        format!(
            "  {:<11} {class} >= {:.0}%: {}{stopped}  {}",
            if held { "as expected" } else { "DIFFERS" },
            at_least * 100.0,
            share(k, self.played()),
            self.name
        )
    }
}

/// One play, as `RateStops::new` reads it.
pub struct PlayHeld<'a> {
    pub entry: usize,
    pub name: String,
    pub bounds: &'a [Bound],
    /// The play is held to its own verdict as well (`expect:` other than any): its entry
    /// plays every seed.
    pub own_verdict: bool,
}

/// The entries held to a rate, in the order they first play.
#[derive(Clone, Debug, Default)]
pub struct RateStops {
    entries: Vec<Held>,
}

impl RateStops {
    /// From every play in the order it will play (plays with no bounds are not held);
    /// `all_seeds`: no entry stops.
    pub fn new<'a>(plays: impl IntoIterator<Item = PlayHeld<'a>>, all_seeds: bool) -> RateStops {
        let mut entries: Vec<Held> = Vec::new();
        for play in plays.into_iter().filter(|p| !p.bounds.is_empty()) {
            match entries.iter_mut().find(|h| h.entry == play.entry) {
                Some(held) => {
                    held.planned += 1;
                    held.may_stop &= !play.own_verdict;
                }
                None => entries.push(Held {
                    entry: play.entry,
                    name: play.name,
                    bounds: play.bounds.to_vec(),
                    planned: 1,
                    tally: Tally::default(),
                    may_stop: !all_seeds && !play.own_verdict,
                    stopped: false,
                }),
            }
        }
        RateStops { entries }
    }

    /// Whether the entry's next play is skipped: it stopped, decided.
    pub fn skips(&self, entry: usize) -> bool {
        self.entries.iter().any(|h| h.entry == entry && h.stopped)
    }

    /// What one of the entry's plays ended as; the line to print when the entry stops here.
    pub fn record(&mut self, entry: usize, class: Class) -> Option<String> {
        self.entries
            .iter_mut()
            .find(|h| h.entry == entry)
            .and_then(|h| h.record(class))
    }

    pub fn entries(&self) -> &[Held] {
        &self.entries
    }

    /// Prints each bound's closing line; how many were missed. A bound still open (an entry
    /// whose plays did not all play, nor stop) is missed.
    pub fn print_closing(&self) -> usize {
        let mut missed = 0;
        for held in &self.entries {
            for (class, at_least, k, standing) in held.standings() {
                let met = standing == Standing::Met;
                missed += usize::from(!met);
                println!("{}", held.closing_line(class, at_least, k, met));
            }
        }
        missed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Class::{Confirmed, Held as H, NotReached};

    fn bound(class: &str, percent: f64) -> Bound {
        (class.to_string(), percent / 100.0)
    }

    /// One entry of `planned` plays with these bounds, played on `outcomes` until it stops:
    /// how many played, and the stop line if it stopped.
    fn play(bounds: &[Bound], planned: u32, outcomes: &[Class]) -> (u32, Option<String>) {
        let plays = (0..planned).map(|_| PlayHeld {
            entry: 0,
            name: "s.yaml".into(),
            bounds,
            own_verdict: false,
        });
        let mut stops = RateStops::new(plays, false);
        let mut line = None;
        for class in outcomes {
            if stops.skips(0) {
                break;
            }
            line = line.or(stops.record(0, *class));
        }
        (stops.entries()[0].played(), line)
    }

    #[test]
    fn met_early() {
        let (played, line) = play(&[bound("confirmed", 80.0)], 10, &[Confirmed; 10]);
        assert_eq!(played, 8);
        assert_eq!(
            line.unwrap(),
            "s.yaml: stopped after 8 of 10 seeds: confirmed >= 80% met (8 of 8); the 2 left \
             cannot change it (--all-seeds plays every one)"
        );
    }

    #[test]
    fn missed_early() {
        let outcomes = [Confirmed, NotReached, H, Confirmed, NotReached, Confirmed];
        let (played, line) = play(&[bound("confirmed", 80.0)], 10, &outcomes);
        // The third seed that did not confirm leaves at most 7 of 10.
        assert_eq!(played, 5);
        assert!(
            line.unwrap()
                .contains("confirmed >= 80% missed (2 of 5); the 5 left"),
            "missed"
        );
    }

    #[test]
    fn undecided_until_the_last_seed() {
        // 50% of 4: 2 of 4 needed; after 1 of 3 one more seed can still tip it.
        let outcomes = [Confirmed, H, H, Confirmed];
        assert_eq!(play(&[bound("confirmed", 50.0)], 4, &outcomes), (4, None));
        let outcomes = [Confirmed, H, H, H];
        assert_eq!(play(&[bound("confirmed", 50.0)], 4, &outcomes), (4, None));
        // 100% is met only by the last seed: every seed plays while each confirms.
        assert_eq!(
            play(&[bound("confirmed", 100.0)], 5, &[Confirmed; 5]),
            (5, None)
        );
    }

    #[test]
    fn zero_and_hundred_percent() {
        // 0% is met by any outcome, but only after a play: one seed is played.
        let (played, line) = play(&[bound("confirmed", 0.0)], 10, &[H; 10]);
        assert_eq!(played, 1);
        assert!(line
            .unwrap()
            .contains("confirmed >= 0% met (0 of 1); the 9 left"));
        // 100% is missed by the first seed that does not count.
        let (played, line) = play(&[bound("reached", 100.0)], 10, &[H, NotReached, H]);
        assert_eq!(played, 2);
        assert!(line.unwrap().contains("reached >= 100% missed (1 of 2)"));
    }

    #[test]
    fn several_bounds_stop_when_all_are_decided() {
        // confirmed >= 30% of 10 is met at the third confirmation; reached >= 90% stays open
        // until a second seed is not reached (then at most 8 of 10 reach).
        let bounds = [bound("confirmed", 30.0), bound("reached", 90.0)];
        let outcomes = [
            Confirmed, Confirmed, Confirmed, NotReached, H, NotReached, H, H,
        ];
        let (played, line) = play(&bounds, 10, &outcomes);
        assert_eq!(played, 6);
        assert_eq!(
            line.unwrap(),
            "s.yaml: stopped after 6 of 10 seeds: confirmed >= 30% met (3 of 6), reached >= \
             90% missed (4 of 6); the 4 left cannot change them (--all-seeds plays every one)"
        );
        // Every seed reached: reached >= 90% is met at the ninth, and only then it stops.
        let (played, _) = play(&bounds, 10, &[Confirmed; 10]);
        assert_eq!(played, 9);
    }

    /// `--all-seeds`, or a play held to its own verdict, plays every seed of its entry.
    #[test]
    fn every_seed_plays_when_asked_or_held_per_play() {
        let bounds = [bound("confirmed", 50.0)];
        for (all_seeds, own_verdict_at) in [(true, None), (false, Some(3))] {
            let plays = (0..6).map(|i| PlayHeld {
                entry: 4,
                name: "s.yaml".into(),
                bounds: &bounds,
                own_verdict: own_verdict_at == Some(i),
            });
            let mut stops = RateStops::new(plays, all_seeds);
            for _ in 0..6 {
                assert!(!stops.skips(4));
                assert_eq!(stops.record(4, Confirmed), None);
            }
            let held = &stops.entries()[0];
            assert_eq!((held.played(), held.planned), (6, 6));
            assert_eq!(held.standings()[0].3, Standing::Met);
        }
    }

    /// Over every sequence of outcomes of up to 8 plays and bounds at shares that do and do
    /// not divide N: an entry that stops ends with each bound as playing every seed gives it
    /// (never open), and it stops no later than the first play after which every bound's
    /// answer is the same for every way the rest could go.
    #[test]
    fn stopping_agrees_with_playing_every_seed() {
        let shares = [
            0.0,
            10.0,
            25.0,
            100.0 / 3.0,
            50.0,
            70.0,
            80.0,
            90.0,
            99.0,
            100.0,
        ];
        let mut stopped_early = 0;
        for planned in 1..=8u32 {
            for pair in 0..shares.len() * shares.len() {
                let bounds = [
                    bound("confirmed", shares[pair % shares.len()]),
                    bound("reached", shares[pair / shares.len()]),
                ];
                // Each play is confirmed, held or not reached: 3^planned sequences.
                for code in 0..3u32.pow(planned) {
                    let outcomes: Vec<Class> = (0..planned)
                        .map(|i| [Confirmed, H, NotReached][(code / 3u32.pow(i) % 3) as usize])
                        .collect();
                    let full = |class: &str, at_least: f64| {
                        let k = outcomes.iter().filter(|c| c.counts_as(class)).count() as u32;
                        meets(k, planned, at_least)
                    };
                    let plays = (0..planned).map(|_| PlayHeld {
                        entry: 0,
                        name: String::new(),
                        bounds: &bounds,
                        own_verdict: false,
                    });
                    let mut stops = RateStops::new(plays, false);
                    for class in &outcomes {
                        if stops.skips(0) {
                            break;
                        }
                        stops.record(0, *class);
                    }
                    let held = &stops.entries()[0];
                    assert!(held.played() >= 1);
                    stopped_early += usize::from(held.played() < planned);
                    for (class, at_least, _, s) in held.standings() {
                        let want = if full(class, at_least) {
                            Standing::Met
                        } else {
                            Standing::Missed
                        };
                        assert_eq!(s, want, "{class} {at_least} of {planned}: {outcomes:?}");
                    }
                    // Before the stop some bound could still have gone either way: the
                    // rest all counting meets it, none counting misses it.
                    let before = held.played() - 1;
                    if before >= 1 {
                        let open = bounds.iter().any(|(class, at_least)| {
                            let k = outcomes[..before as usize]
                                .iter()
                                .filter(|c| c.counts_as(class))
                                .count() as u32;
                            let left = planned - before;
                            meets(k + left, planned, *at_least) && !meets(k, planned, *at_least)
                        });
                        assert!(open, "played one seed too many: {bounds:?} {outcomes:?}");
                    }
                }
            }
        }
        assert!(stopped_early > 0);
    }
}
