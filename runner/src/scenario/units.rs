//! Durations (`10s`, `500ms`, `2m`), ranges (`2s..5s`) and rates (`200/s`) as written in scenarios.

use std::fmt;
use std::time::Duration;

use chaos_core::shown::shown;
use rand::Rng;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A duration written with a unit: `250ms`, `10s`, `1.5s`, `2m`, `1h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dur(pub Duration);

/// The longest duration a scenario or a flag may name: 30 days. Longer is a typo (and past
/// about 1.8e19 s it would not even fit a `Duration`).
pub const MAX_DURATION_S: f64 = 30.0 * 24.0 * 3600.0;

/// Rates a workload may ask for: from one operation an hour to a million a second.
pub const MIN_RATE_PER_S: f64 = 1.0 / 3600.0;
pub const MAX_RATE_PER_S: f64 = 1_000_000.0;

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let quoted = || shown(text);
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{} has no unit; expected e.g. 500ms, 10s, 2m", quoted()))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| {
        format!(
            "{} is not a duration; expected e.g. 500ms, 10s, 2m",
            quoted()
        )
    })?;
    let seconds = match unit {
        "ms" => number / 1000.0,
        "s" => number,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        // `1e400s`, `5s..2s` as one duration: a number the parser stopped in, not a unit.
        _ if unit.contains(|c: char| c.is_ascii_digit()) => {
            return Err(format!(
                "{} is not a duration; expected a plain number and a unit, e.g. 500ms, 10s, 2m",
                quoted()
            ))
        }
        _ => {
            return Err(format!(
                "{}: unknown unit {}; expected ms, s, m or h",
                quoted(),
                shown(unit)
            ))
        }
    };
    if !seconds.is_finite() || seconds > MAX_DURATION_S {
        return Err(format!(
            "{} is longer than the longest duration allowed, 30 days",
            quoted()
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `12.3s`: a time for people (the YAML keeps milliseconds).
pub fn format_seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 0.05 {
        format!("{}s", s.round())
    } else {
        format!("{s:.1}s")
    }
}

pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    let below_ms = d.as_nanos() % 1_000_000;
    if below_ms != 0 {
        // `0.5ms`, not `0s`: a message must show what was written, and the text must parse
        // back to the same duration (a replayed `for: 0.5ms` is no `for: 0s`).
        let fraction = format!("{below_ms:06}");
        format!("{ms}.{}ms", fraction.trim_end_matches('0'))
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_duration(&text).map(Dur).map_err(de::Error::custom)
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_duration(self.0))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

/// A fixed duration (`5s`) or a seeded random one drawn from a range (`2s..5s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurRange {
    pub low: Duration,
    pub high: Duration,
}

impl DurRange {
    pub fn fixed(d: Duration) -> Self {
        DurRange { low: d, high: d }
    }

    /// Draws from the range; a fixed duration draws nothing, so adding a range elsewhere in a
    /// scenario does not shift the other random choices more than needed.
    pub fn draw(&self, rng: &mut impl Rng) -> Duration {
        if self.low == self.high {
            self.low
        } else {
            let low = self.low.as_nanos() as u64;
            let high = self.high.as_nanos() as u64;
            Duration::from_nanos(rng.random_range(low..=high))
        }
    }
}

/// `low..high` or one value (low = high), each parsed with `parse`; an empty range is an error.
fn parse_range<T: PartialOrd + Copy>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<(T, T), String> {
    let (low, high) = match text.split_once("..") {
        Some((low, high)) => (parse(low)?, parse(high)?),
        None => {
            let fixed = parse(text)?;
            (fixed, fixed)
        }
    };
    if low > high {
        return Err(format!("{}: the range is empty (low > high)", shown(text)));
    }
    Ok((low, high))
}

impl<'de> Deserialize<'de> for DurRange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let (low, high) = parse_range(&text, parse_duration).map_err(de::Error::custom)?;
        Ok(DurRange { low, high })
    }
}

impl fmt::Display for DurRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.low == self.high {
            f.write_str(&format_duration(self.low))
        } else {
            write!(
                f,
                "{}..{}",
                format_duration(self.low),
                format_duration(self.high)
            )
        }
    }
}

impl Serialize for DurRange {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A signed clock offset: `+70s`, `-30s`, `+1.5s`, `2m` (no sign means ahead). Milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offset(pub i64);

pub fn parse_offset(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = parse_duration(rest).map_err(|e| {
        if e.contains("longest") {
            format!(
                "{}: a clock offset is at most 30 days either way",
                shown(text)
            )
        } else {
            format!(
                "{} is not a clock offset; expected e.g. +70s, -30s, +2m",
                shown(text)
            )
        }
    })?;
    Ok(sign * magnitude.as_millis() as i64)
}

/// `+70s`, `-1500ms`, `+0s`: the sign always written, whole seconds when they are.
pub fn format_offset(ms: i64) -> String {
    let sign = if ms < 0 { '-' } else { '+' };
    format!(
        "{sign}{}",
        format_duration(Duration::from_millis(ms.unsigned_abs()))
    )
}

/// A fixed offset (`+70s`) or a seeded random one drawn from a range (`+60s..+90s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetRange {
    pub low: i64,
    pub high: i64,
}

impl OffsetRange {
    /// Draws from the range (milliseconds); a fixed offset draws nothing.
    pub fn draw(&self, rng: &mut impl Rng) -> i64 {
        if self.low == self.high {
            self.low
        } else {
            rng.random_range(self.low..=self.high)
        }
    }
}

impl<'de> Deserialize<'de> for OffsetRange {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let (low, high) = parse_range(&text, parse_offset).map_err(de::Error::custom)?;
        if (low, high) == (0, 0) {
            return Err(de::Error::custom(format!(
                "{}: a clock offset of 0 s leaves the clock as it is, so the step does nothing; give one (like +70s)",
                shown(&text)
            )));
        }
        Ok(OffsetRange { low, high })
    }
}

impl fmt::Display for OffsetRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.low == self.high {
            f.write_str(&format_offset(self.low))
        } else {
            write!(
                f,
                "{}..{}",
                format_offset(self.low),
                format_offset(self.high)
            )
        }
    }
}

/// Operations per second across all processes: `200/s` (or `12000/m`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Rate::parse(&text).map_err(de::Error::custom)
    }
}

impl Rate {
    /// `200/s`, `12000/m`, `1/h`: a finite number of operations per unit, within
    /// [`MIN_RATE_PER_S`]..=[`MAX_RATE_PER_S`].
    pub fn parse(text: &str) -> Result<Rate, String> {
        let bad = || {
            format!(
                "{} is not a rate; expected a plain number per s, m or h, from 1/h to \
                 1000000/s (e.g. 200/s, 30/m)",
                shown(text)
            )
        };
        let (count, per) = text.split_once('/').ok_or_else(bad)?;
        let count = count.trim();
        // Only plain decimals: `NaN`, `inf` and `1e309` parse as floats but are no rate.
        if count.is_empty() || !count.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Err(bad());
        }
        let count: f64 = count.parse().map_err(|_| bad())?;
        let per = match per.trim() {
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        let rate = count / per;
        if count <= 0.0 {
            return Err(format!("{}: a rate must be positive", shown(text)));
        }
        if !(MIN_RATE_PER_S..=MAX_RATE_PER_S).contains(&rate) {
            return Err(format!(
                "{} is outside the rates allowed, 1/h to 1000000/s",
                shown(text)
            ));
        }
        Ok(Rate(rate))
    }
}

impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{}/s", self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Below a millisecond a duration is written as a fraction of one, and reads back.
    #[test]
    fn sub_millisecond_durations_are_written_as_they_read() {
        for (text, shown) in [
            ("0.5ms", "0.5ms"),
            ("1.25ms", "1.25ms"),
            ("0.0001ms", "0.0001ms"),
        ] {
            let d = parse_duration(text).unwrap();
            assert_eq!(format_duration(d), shown);
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(2)), "2s");
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("10").unwrap_err().contains("no unit"));
        assert!(parse_duration("10x").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1e400s")
            .unwrap_err()
            .contains("is not a duration"));
    }

    /// Past 30 days, and far past what a `Duration` holds, is an error, never a panic.
    #[test]
    fn huge_durations_are_errors() {
        for text in [
            "20000000000000000000s",
            "31d",
            "721h",
            "1e400s",
            "99999999999999999999999h",
        ] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        assert!(parse_duration("720h").is_ok());
        assert!(parse_offset("-9999999999999999h")
            .unwrap_err()
            .contains("at most 30 days"));
    }

    #[test]
    fn ranges_draw_inside_bounds() {
        use rand::SeedableRng;
        let range: DurRange = serde_json::from_str("\"2s..5s\"").unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..100 {
            let d = range.draw(&mut rng);
            assert!(d >= Duration::from_secs(2) && d <= Duration::from_secs(5));
        }
        assert!(serde_json::from_str::<DurRange>("\"5s..2s\"").is_err());
    }

    #[test]
    fn offsets_parse_with_sign() {
        assert_eq!(parse_offset("+70s").unwrap(), 70_000);
        assert_eq!(parse_offset("-30s").unwrap(), -30_000);
        assert_eq!(parse_offset("1.5s").unwrap(), 1_500);
        assert!(parse_offset("70")
            .unwrap_err()
            .contains("not a clock offset"));
        assert!(parse_offset("+soon").is_err());
        assert_eq!(format_offset(-30_000), "-30s");
        assert_eq!(format_offset(1_500), "+1500ms");
        let range: OffsetRange = serde_json::from_str("\"-10s..+20s\"").unwrap();
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..100 {
            let o = range.draw(&mut rng);
            assert!((-10_000..=20_000).contains(&o));
        }
        assert!(serde_json::from_str::<OffsetRange>("\"+20s..-10s\"").is_err());
    }

    #[test]
    fn rates_parse() {
        let rate: Rate = serde_json::from_str("\"200/s\"").unwrap();
        assert_eq!(rate.0, 200.0);
        let rate: Rate = serde_json::from_str("\"120/m\"").unwrap();
        assert_eq!(rate.0, 2.0);
        assert!(serde_json::from_str::<Rate>("\"fast\"").is_err());
        for text in [
            "NaN/s",
            "inf/s",
            "1e309/s",
            "1e-300/s",
            "0.00000001/s",
            "2000000/s",
            "-5/s",
            "0/s",
        ] {
            assert!(Rate::parse(text).is_err(), "{text}");
        }
        assert_eq!(Rate::parse("60/h").unwrap().0, 1.0 / 60.0);
    }
}
