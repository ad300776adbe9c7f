//! The string formats whose values CEL sees typed: `duration`, `date` and `date-time`, parsed
//! as Kubernetes' OpenAPI library (kube-openapi's `strfmt`) parses them.

use std::sync::OnceLock;

use cel_runtime::time::{parse_duration as go_parse_duration, parse_timestamp};
use cel_runtime::{Duration, Timestamp};
use regex::Regex;

/// A `duration`: Go's `time.ParseDuration` syntax (`1h30m`, `1.5s`), or else a sum of
/// whole numbers with unit words (`3 days`, `1 week`, `2h 5min`), as `strfmt.ParseDuration`
/// accepts them. Like Go's, the second form wraps around on overflow.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    if let Ok(d) = go_parse_duration(s) {
        return Ok(d);
    }
    static TERM: OnceLock<Regex> = OnceLock::new();
    let term = TERM.get_or_init(|| Regex::new(r"((\d+)\s*([A-Za-zµ]+))").expect("valid"));
    const SECOND: i64 = 1_000_000_000;
    // Each unit's spellings; the last also matches as a prefix (`days` for `day`).
    const UNITS: [(&[&str], i64); 8] = [
        (&["ns", "nano"], 1),
        (&["us", "µs", "micro"], 1_000),
        (&["ms", "milli"], 1_000_000),
        (&["s", "sec"], SECOND),
        (&["m", "min"], 60 * SECOND),
        (&["h", "hr", "hour"], 3600 * SECOND),
        (&["d", "day"], 24 * 3600 * SECOND),
        (&["w", "wk", "week"], 7 * 24 * 3600 * SECOND),
    ];
    let mut total: i64 = 0;
    let mut matched = false;
    for caps in term.captures_iter(s) {
        let digits = &caps[2];
        let factor: i64 = digits.parse().map_err(|_| {
            format!(
                "strconv.Atoi: parsing {}: value out of range",
                go_quote(digits)
            )
        })?;
        let unit = caps[3].trim().to_lowercase();
        for (spellings, nanos) in UNITS {
            let last = spellings.len() - 1;
            for (i, spelling) in spellings.iter().enumerate() {
                if (i == last && unit.starts_with(spelling)) || unit == *spelling {
                    matched = true;
                    total = total.wrapping_add(factor.wrapping_mul(nanos));
                }
            }
        }
    }
    if matched {
        Ok(Duration { nanos: total })
    } else {
        Err(format!("unable to parse {s} as duration"))
    }
}

/// A `date` (`2006-01-02`) as midnight UTC.
pub fn parse_date(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    parse_timestamp(&format!("{s}T00:00:00Z"))
}

/// Go's message for a `date` that does not parse (simplified: the first element of the
/// layout that fails is not tracked).
pub fn date_error(s: &str) -> String {
    format!(
        "parsing time {} as \"2006-01-02\": cannot parse {} as \"2006\"",
        go_quote(s),
        go_quote(s)
    )
}

/// A `date-time`: RFC 3339 with an optional fraction, or the same without a zone (then UTC);
/// the empty string is the Unix epoch.
pub fn parse_date_time(s: &str) -> Option<Timestamp> {
    if s.is_empty() {
        return Some(Timestamp::utc(0, 0));
    }
    parse_timestamp(s).or_else(|| {
        let has_zone = s.len() > 19 && s[19..].contains(['Z', 'z', '+', '-']);
        if has_zone {
            None
        } else {
            parse_timestamp(&format!("{s}Z"))
        }
    })
}

/// Go's message for a `date-time` that does not parse (the last layout tried, as
/// kube-openapi reports it; simplified).
pub fn date_time_error(s: &str) -> String {
    format!(
        "parsing time {} as \"2006-01-02T15:04:05\": cannot parse {} as \"2006\"",
        go_quote(s),
        go_quote(s)
    )
}

fn go_quote(s: &str) -> String {
    cel_runtime::format::go_quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_strfmt() {
        let nanos = |s: &str| parse_duration(s).map(|d| d.nanos);
        assert_eq!(nanos("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(nanos("3 days"), Ok(3 * 86_400_000_000_000));
        assert_eq!(nanos("1 week"), Ok(604_800_000_000_000));
        assert_eq!(nanos("2h 5min"), Ok(7_500_000_000_000));
        assert_eq!(
            nanos("soon"),
            Err("unable to parse soon as duration".to_string())
        );
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(parse_date("2021-01-02").unwrap().seconds, 1_609_545_600);
        assert!(parse_date("2021-1-2").is_none());
        assert!(parse_date("2021-02-30").is_none());
        assert_eq!(parse_date_time("").unwrap().seconds, 0);
        assert_eq!(
            parse_date_time("2021-01-01T00:00:00Z").unwrap().seconds,
            1_609_459_200
        );
        assert_eq!(
            parse_date_time("2021-01-01T00:00:00").unwrap().seconds,
            1_609_459_200
        );
        assert_eq!(
            parse_date_time("2021-01-01T01:00:00.5+01:00")
                .unwrap()
                .nanos,
            500_000_000
        );
        assert!(parse_date_time("2021-01-01").is_none());
    }
}
