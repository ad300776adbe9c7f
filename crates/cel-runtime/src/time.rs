//! Timestamps and durations: parsing and printing them as cel-go does, the calendar
//! accessors (`getFullYear`, `getHours`, ...) with cel-go's time-zone arguments, and the
//! duration accessors.
//!
//! * Timestamps parse as Go's `time.Parse(time.RFC3339, s)`, including its leniencies (a
//!   one-digit hour, `,` before the fraction, offsets up to `+24:60`, more than nine
//!   fractional digits truncated) and its strictness (upper-case `T` and `Z`, an offset is
//!   required, no leap second). The offset the text was written with is kept for printing.
//!   The valid range is `0001-01-01T00:00:00Z` to `9999-12-31T23:59:59.999999999Z`; outside
//!   it, cel-go reports "timestamp overflow".
//! * Durations are int64 nanoseconds and parse as Go's `time.ParseDuration`.
//! * Time zones are IANA names (from jiff's bundled tz database, matched case-sensitively like
//!   Go on Linux), or `[+-]HH:MM` offsets read the way cel-go reads them (`05:30` and
//!   `+25:00` are accepted). `"Local"` is taken as UTC.
//!
//! All calendar arithmetic is done here with checked or wide integers; nothing panics.

use std::sync::OnceLock;

use crate::{Duration, Error, Result, Timestamp};

/// Seconds from the Unix epoch to `0001-01-01T00:00:00Z`, the smallest valid timestamp.
pub const MIN_UNIX_SECONDS: i64 = -62_135_596_800;
/// Seconds from the Unix epoch to `9999-12-31T23:59:59Z`, the largest valid timestamp second.
pub const MAX_UNIX_SECONDS: i64 = 253_402_300_799;

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// cel-go's error for a timestamp outside the valid range.
pub fn timestamp_overflow() -> Error {
    Error::new("timestamp overflow")
}

/// Whether a timestamp with these epoch seconds is in CEL's range.
#[inline]
pub fn seconds_in_range(seconds: i64) -> bool {
    (MIN_UNIX_SECONDS..=MAX_UNIX_SECONDS).contains(&seconds)
}

/// A timestamp, or "timestamp overflow" when the seconds are outside CEL's range.
#[inline]
pub fn checked_timestamp(seconds: i64, nanos: u32, offset_seconds: i32) -> Result<Timestamp> {
    if seconds_in_range(seconds) && nanos < 1_000_000_000 {
        Ok(Timestamp {
            seconds,
            nanos,
            offset_seconds,
        })
    } else {
        Err(timestamp_overflow())
    }
}

// ---------------------------------------------------------------------------------------
// Civil calendar.

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..=12).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date (year, month 1..=12, day 1..=31) of a day number.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The broken-down local time of an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CivilTime {
    /// The year (`getFullYear`).
    pub year: i64,
    /// The month, 1..=12.
    pub month: u32,
    /// The day of the month, 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=59.
    pub second: u32,
    /// 0..=999_999_999.
    pub nanosecond: u32,
    /// 0 = Sunday.
    pub weekday: u32,
    /// Day of the year, 0-based.
    pub year_day: u32,
}

/// The local time of an instant at a UTC offset (seconds east).
pub fn civil_time(seconds: i64, nanos: u32, offset_seconds: i64) -> CivilTime {
    let local = i128::from(seconds) + i128::from(offset_seconds);
    let days = local.div_euclid(86_400);
    let secs_of_day = local.rem_euclid(86_400) as u32;
    let days = i64::try_from(days).unwrap_or(if days < 0 { i64::MIN / 2 } else { i64::MAX / 2 });
    let (year, month, day) = civil_from_days(days);
    let weekday = (days + 4).rem_euclid(7) as u32;
    let year_day = (days - days_from_civil(year, 1, 1)) as u32;
    CivilTime {
        year,
        month,
        day,
        hour: secs_of_day / 3600,
        minute: secs_of_day / 60 % 60,
        second: secs_of_day % 60,
        nanosecond: nanos,
        weekday,
        year_day,
    }
}

// ---------------------------------------------------------------------------------------
// Timestamp text.

fn digit(b: u8) -> Option<u32> {
    b.is_ascii_digit().then(|| u32::from(b - b'0'))
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(s: &[u8], fixed: bool) -> Option<(u32, &[u8])> {
    let d0 = digit(*s.first()?)?;
    match s.get(1).and_then(|b| digit(*b)) {
        Some(d1) => Some((d0 * 10 + d1, &s[2..])),
        None if fixed => None,
        None => Some((d0, &s[1..])),
    }
}

fn expect(s: &[u8], b: u8) -> Option<&[u8]> {
    match s.split_first() {
        Some((&c, rest)) if c == b => Some(rest),
        _ => None,
    }
}

/// Parses RFC 3339 text exactly as Go's `time.Parse(time.RFC3339, s)` accepts it. The result
/// is not range-checked: a year-0 date gives seconds below [`MIN_UNIX_SECONDS`].
pub fn parse_timestamp(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    // Year: four characters, the first a digit, all digits.
    if b.len() < 4 {
        return None;
    }
    let mut year: i64 = 0;
    for &c in &b[..4] {
        year = year * 10 + i64::from(digit(c)?);
    }
    let rest = expect(&b[4..], b'-')?;
    let (month, rest) = getnum(rest, true)?;
    if !(1..=12).contains(&month) {
        return None;
    }
    let rest = expect(rest, b'-')?;
    let (day, rest) = getnum(rest, true)?;
    let rest = expect(rest, b'T')?;
    let (hour, rest) = getnum(rest, false)?;
    if hour >= 24 {
        return None;
    }
    let rest = expect(rest, b':')?;
    let (minute, rest) = getnum(rest, true)?;
    if minute >= 60 {
        return None;
    }
    let rest = expect(rest, b':')?;
    let (second, mut rest) = getnum(rest, true)?;
    if second >= 60 {
        return None;
    }
    // A fraction, written with '.' or ','; digits past the ninth are dropped.
    let mut nanos: u32 = 0;
    if rest.len() >= 2 && (rest[0] == b'.' || rest[0] == b',') && rest[1].is_ascii_digit() {
        let mut n = 1;
        let mut scale = 100_000_000;
        while n < rest.len() && rest[n].is_ascii_digit() {
            if scale > 0 {
                nanos += u32::from(rest[n] - b'0') * scale;
                scale /= 10;
            }
            n += 1;
        }
        rest = &rest[n..];
    }
    // The zone: 'Z' or ±hh:mm.
    let offset: i32 = if let Some(r) = expect(rest, b'Z') {
        rest = r;
        0
    } else {
        if rest.len() < 6 || rest[3] != b':' {
            return None;
        }
        let (hh, _) = getnum(&rest[1..3], true)?;
        let (mm, _) = getnum(&rest[4..6], true)?;
        if hh > 24 || mm > 60 {
            return None;
        }
        let magnitude = ((hh * 60 + mm) * 60) as i32;
        let sign = rest[0];
        rest = &rest[6..];
        match sign {
            b'+' => magnitude,
            b'-' => -magnitude,
            _ => return None,
        }
    };
    if !rest.is_empty() {
        return None;
    }
    if day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - i64::from(offset);
    Some(Timestamp {
        seconds,
        nanos,
        offset_seconds: offset,
    })
}

/// Formats a timestamp as Go's `t.Format(time.RFC3339Nano)` in the timestamp's own offset:
/// trailing fractional zeros trimmed, `Z` for a zero offset, else `±hh:mm`. This is
/// `string(timestamp)`.
pub fn format_timestamp(ts: Timestamp) -> String {
    use std::fmt::Write as _;
    let c = civil_time(ts.seconds, ts.nanos, i64::from(ts.offset_seconds));
    let mut out = String::with_capacity(35);
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    );
    if ts.nanos > 0 {
        let frac = format!("{:09}", ts.nanos);
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    if ts.offset_seconds == 0 {
        out.push('Z');
    } else {
        let minutes = ts.offset_seconds / 60;
        let sign = if minutes < 0 { '-' } else { '+' };
        let m = minutes.unsigned_abs();
        let _ = write!(out, "{sign}{:02}:{:02}", m / 60, m % 60);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Durations.

/// Go's `time` package quoting for its error messages: ASCII as is (with `"` and `\`
/// escaped), every byte of anything else as `\xHH`.
fn go_time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if !c.is_ascii() || c < ' ' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Parses a duration as Go's `time.ParseDuration`: an optional sign, then one or more
/// decimal numbers (with optional fraction) each followed by a unit among `ns`, `us`, `µs`,
/// `μs`, `ms`, `s`, `m`, `h`; `"0"` alone is allowed. The error is Go's message.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    const LIMIT: u64 = 1 << 63;
    let invalid = || format!("time: invalid duration {}", go_time_quote(s));
    let mut rest = s;
    let mut neg = false;
    if let Some(c) = rest.as_bytes().first()
        && (*c == b'-' || *c == b'+')
    {
        neg = *c == b'-';
        rest = &rest[1..];
    }
    if rest == "0" {
        return Ok(Duration { nanos: 0 });
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let b = rest.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // Integer part.
        let mut i = 0;
        let mut v: u64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(b[i] - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
            i += 1;
        }
        let pre = i > 0;
        // Fraction.
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let start = i;
            let mut overflow = false;
            while i < b.len() && b[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(b[i] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i > start;
        }
        if !pre && !post {
            return Err(invalid());
        }
        // Unit: everything up to the next digit or '.'.
        let unit_start = i;
        while i < b.len() && !(b[i] == b'.' || b[i].is_ascii_digit()) {
            i += 1;
        }
        if i == unit_start {
            return Err(format!(
                "time: missing unit in duration {}",
                go_time_quote(s)
            ));
        }
        // Both ends are ASCII or the string's end, so these are char boundaries.
        let unit_text = rest.get(unit_start..i).unwrap_or("");
        let unit: u64 = match unit_text {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_time_quote(unit_text),
                    go_time_quote(s)
                ));
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        total += v;
        if total > LIMIT {
            return Err(invalid());
        }
        rest = rest.get(i..).unwrap_or("");
    }
    if neg {
        // total <= 2^63, so the negation fits.
        return Ok(Duration {
            nanos: (total as i128).wrapping_neg() as i64,
        });
    }
    if total > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(Duration {
        nanos: total as i64,
    })
}

/// Go's `Duration.Seconds()`: whole seconds plus the remaining nanoseconds, as a double.
fn go_seconds(d: Duration) -> f64 {
    (d.nanos / NANOS_PER_SECOND) as f64 + (d.nanos % NANOS_PER_SECOND) as f64 / 1e9
}

/// `string(duration)` as cel-go writes it: `strconv.FormatFloat(d.Seconds(), 'f', -1, 64)`
/// followed by `s` (`1.5s`, `3600s`, `-90s`, `0s`, `0.000000001s`). Like cel-go it goes
/// through a double, so very long durations lose their last nanoseconds.
pub fn format_duration(d: Duration) -> String {
    let mut s = crate::format::format_double_fixed(go_seconds(d));
    s.push('s');
    s
}

/// The exact text of a duration in seconds (`1.000000001s`, `-90s`), which
/// [`parse_duration`] reads back to the same value.
pub fn format_duration_exact(d: Duration) -> String {
    let abs = d.nanos.unsigned_abs();
    let secs = abs / 1_000_000_000;
    let frac = abs % 1_000_000_000;
    let sign = if d.nanos < 0 { "-" } else { "" };
    if frac == 0 {
        format!("{sign}{secs}s")
    } else {
        let f = format!("{frac:09}");
        format!("{sign}{secs}.{}s", f.trim_end_matches('0'))
    }
}

/// `duration.getHours()`: the whole duration in hours, truncated (computed through a double,
/// as Go's `Duration.Hours()` does).
pub fn duration_hours(d: Duration) -> i64 {
    let h = 3_600_000_000_000;
    ((d.nanos / h) as f64 + (d.nanos % h) as f64 / 3.6e12) as i64
}

/// `duration.getMinutes()`: the whole duration in minutes, truncated.
pub fn duration_minutes(d: Duration) -> i64 {
    let m = 60_000_000_000;
    ((d.nanos / m) as f64 + (d.nanos % m) as f64 / 6e10) as i64
}

/// `duration.getSeconds()`: the whole duration in seconds, truncated.
pub fn duration_seconds(d: Duration) -> i64 {
    go_seconds(d) as i64
}

/// `duration.getMilliseconds()`: cel-go returns the **whole** duration in milliseconds
/// (`duration('1.234s')` → 1234), not the millisecond component the spec describes.
pub fn duration_milliseconds(d: Duration) -> i64 {
    d.nanos / 1_000_000
}

// ---------------------------------------------------------------------------------------
// Time zones.

/// A time zone argument of the timestamp accessors.
#[derive(Clone, Debug)]
pub enum Zone {
    /// A fixed offset, seconds east of UTC.
    Fixed(i64),
    /// An IANA zone.
    Named(jiff::tz::TimeZone),
}

impl Zone {
    /// The offset from UTC, in seconds east, at an instant.
    pub fn offset_at(&self, ts: Timestamp) -> i64 {
        match self {
            Zone::Fixed(s) => *s,
            Zone::Named(tz) => {
                let nanos = i32::try_from(ts.nanos).unwrap_or(0);
                let instant =
                    jiff::Timestamp::new(ts.seconds, nanos).unwrap_or(if ts.seconds < 0 {
                        jiff::Timestamp::MIN
                    } else {
                        jiff::Timestamp::MAX
                    });
                i64::from(tz.to_offset(instant).seconds())
            }
        }
    }
}

/// Go's `strconv.Atoi`, with its error text.
fn go_atoi(s: &str) -> Result<i64> {
    use std::num::IntErrorKind;
    s.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
            _ => "invalid syntax",
        };
        Error::new(format!(
            "strconv.Atoi: parsing {}: {why}",
            crate::format::go_quote(s)
        ))
    })
}

fn tz_database() -> &'static jiff::tz::TimeZoneDatabase {
    static DB: OnceLock<jiff::tz::TimeZoneDatabase> = OnceLock::new();
    DB.get_or_init(jiff::tz::TimeZoneDatabase::bundled)
}

/// Reads a time-zone argument as cel-go does: text with a `:` is an offset `hours:minutes`
/// (each part read by `strconv.Atoi`, minutes within 0 to 59; a leading `-` subtracts the
/// minutes too); anything else is an IANA name (`""` is UTC). Errors carry Go's messages:
/// "unknown time zone X", "time: invalid location name", `strconv.Atoi: parsing "x":
/// invalid syntax`, "timezone offset minutes out of range [0, 59]: +00:99".
pub fn parse_time_zone(tz: &str) -> Result<Zone> {
    parse_time_zone_with(tz, true)
}

/// [`parse_time_zone`], with the range check of the minutes (cel-go v0.29) or without it,
/// as older cel-go releases read `+00:99` as 99 minutes.
pub fn parse_time_zone_with(tz: &str, check_minutes: bool) -> Result<Zone> {
    if let Some(colon) = tz.find(':') {
        let hours = go_atoi(&tz[..colon])?;
        let minutes = go_atoi(&tz[colon + 1..])?;
        if check_minutes && !(0..=59).contains(&minutes) {
            return Err(Error::new(format!(
                "timezone offset minutes out of range [0, 59]: {tz}"
            )));
        }
        let total_minutes = if tz.starts_with('-') {
            hours.wrapping_mul(60).wrapping_sub(minutes)
        } else {
            hours.wrapping_mul(60).wrapping_add(minutes)
        };
        // Go: int((time.Duration(offset) * time.Minute).Seconds()), with int64 wrap-around.
        let nanos = total_minutes.wrapping_mul(60_000_000_000);
        return Ok(Zone::Fixed(nanos / NANOS_PER_SECOND));
    }
    match tz {
        "" | "UTC" | "Local" => return Ok(Zone::Fixed(0)),
        _ => {}
    }
    if tz.contains("..") || tz.starts_with('/') || tz.starts_with('\\') {
        return Err(Error::new("time: invalid location name"));
    }
    let unknown = || Error::new(format!("unknown time zone {tz}"));
    let zone = tz_database().get(tz).map_err(|_| unknown())?;
    // Go reads zone files from a case-sensitive file system; jiff matches names ignoring case.
    if zone.iana_name() != Some(tz) || tz == "Etc/Unknown" {
        return Err(unknown());
    }
    Ok(Zone::Named(zone))
}

/// A calendar field of a timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeField {
    /// `getFullYear`.
    FullYear,
    /// `getMonth`: 0-based.
    Month,
    /// `getDayOfYear`: 0-based.
    DayOfYear,
    /// `getDayOfMonth`: 0-based.
    DayOfMonth,
    /// `getDate`: 1-based day of the month.
    Date,
    /// `getDayOfWeek`: 0 = Sunday.
    DayOfWeek,
    /// `getHours`.
    Hours,
    /// `getMinutes`.
    Minutes,
    /// `getSeconds`.
    Seconds,
    /// `getMilliseconds`: the millisecond within the second.
    Milliseconds,
}

/// A calendar field of a timestamp in UTC.
pub fn timestamp_field_utc(ts: Timestamp, field: TimeField) -> i64 {
    field_of(civil_time(ts.seconds, ts.nanos, 0), field)
}

/// A calendar field of a timestamp in a time zone given as cel-go accepts it (see
/// [`parse_time_zone`]).
pub fn timestamp_field(ts: Timestamp, field: TimeField, tz: &str) -> Result<i64> {
    let zone = parse_time_zone(tz)?;
    Ok(timestamp_field_in(ts, field, &zone))
}

/// [`timestamp_field`] reading offsets as cel-go before v0.29 did (minutes unchecked).
pub fn timestamp_field_unchecked_minutes(ts: Timestamp, field: TimeField, tz: &str) -> Result<i64> {
    let zone = parse_time_zone_with(tz, false)?;
    Ok(timestamp_field_in(ts, field, &zone))
}

/// A calendar field of a timestamp in a parsed zone.
pub fn timestamp_field_in(ts: Timestamp, field: TimeField, zone: &Zone) -> i64 {
    field_of(civil_time(ts.seconds, ts.nanos, zone.offset_at(ts)), field)
}

fn field_of(c: CivilTime, field: TimeField) -> i64 {
    match field {
        TimeField::FullYear => c.year,
        TimeField::Month => i64::from(c.month) - 1,
        TimeField::DayOfYear => i64::from(c.year_day),
        TimeField::DayOfMonth => i64::from(c.day) - 1,
        TimeField::Date => i64::from(c.day),
        TimeField::DayOfWeek => i64::from(c.weekday),
        TimeField::Hours => i64::from(c.hour),
        TimeField::Minutes => i64::from(c.minute),
        TimeField::Seconds => i64::from(c.second),
        TimeField::Milliseconds => i64::from(c.nanosecond / 1_000_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        parse_timestamp(s).unwrap_or_else(|| panic!("parse {s}"))
    }

    #[test]
    fn civil_round_trip() {
        for days in [-719_162_i64, -1, 0, 1, 59, 365, 10_957, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(1, 1, 1) * 86_400, MIN_UNIX_SECONDS);
        assert_eq!(
            days_from_civil(9999, 12, 31) * 86_400 + 86_399,
            MAX_UNIX_SECONDS
        );
    }

    #[test]
    fn rfc3339_like_go() {
        let t = ts("2023-01-01T02:00:00+05:30");
        assert_eq!(t.offset_seconds, 19_800);
        assert_eq!(t, ts("2022-12-31T20:30:00Z"));
        assert_eq!(format_timestamp(t), "2023-01-01T02:00:00+05:30");
        assert_eq!(
            format_timestamp(ts("2011-08-18T19:03:37.01+01:00")),
            "2011-08-18T19:03:37.01+01:00"
        );
        assert_eq!(
            format_timestamp(ts("2023-01-01T00:00:00Z")),
            "2023-01-01T00:00:00Z"
        );
        assert_eq!(
            format_timestamp(ts("2023-01-01T00:00:00-00:00")),
            "2023-01-01T00:00:00Z"
        );
        // More than nine fractional digits are truncated.
        assert_eq!(ts("2023-01-01T00:00:00.1234567899Z").nanos, 123_456_789);
        // Go's leniencies.
        assert_eq!(
            ts("2023-01-01T2:00:00Z").seconds,
            ts("2023-01-01T02:00:00Z").seconds
        );
        assert_eq!(ts("2023-01-01T00:00:00,5Z").nanos, 500_000_000);
        assert!(parse_timestamp("2023-01-01T00:00:00+24:60").is_some());
        for bad in [
            "2023-01-01T00:00:00z",
            "2023-01-01t00:00:00Z",
            "2023-01-01T00:00:00",
            "2023-01-01",
            "2023-01-01T00:00:60Z",
            "10000-01-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2023-1-01T00:00:00Z",
            "2023-01-01T00:00:00+25:00",
            "2023-01-01T00:00:00.Z",
            " 2023-01-01T00:00:00Z",
            "2023-01-01T00:00:00Zx",
            "",
        ] {
            assert!(parse_timestamp(bad).is_none(), "{bad}");
        }
        assert!(parse_timestamp("2024-02-29T00:00:00Z").is_some());
        let zero = ts("0000-01-01T00:00:00Z");
        assert!(!seconds_in_range(zero.seconds));
        assert!(seconds_in_range(ts("0001-01-01T00:00:00Z").seconds));
        assert!(seconds_in_range(
            ts("9999-12-31T23:59:59.999999999Z").seconds
        ));
    }

    #[test]
    fn durations_like_go() {
        let d = |s: &str| parse_duration(s).map(|d| d.nanos);
        assert_eq!(d("1.5s"), Ok(1_500_000_000));
        assert_eq!(d("1h"), Ok(3_600_000_000_000));
        assert_eq!(d("-1m30s"), Ok(-90_000_000_000));
        assert_eq!(d("-1.5h"), Ok(-5_400_000_000_000));
        assert_eq!(d("+1s"), Ok(1_000_000_000));
        assert_eq!(d("0"), Ok(0));
        assert_eq!(d("1h1m1s1ms1us1ns"), Ok(3_661_001_001_001));
        assert_eq!(d("1µs"), Ok(1000));
        assert_eq!(d("1μs"), Ok(1000));
        assert_eq!(d(".5s"), Ok(500_000_000));
        assert_eq!(d("2562047h").map(|n| n > 0), Ok(true));
        assert_eq!(d("-9223372036854775808ns"), Ok(i64::MIN));
        assert!(d("9223372036854775808ns").is_err());
        assert!(d("2562048h").is_err());
        assert!(d("315576000000s").is_err());
        assert_eq!(
            d("1d"),
            Err("time: unknown unit \"d\" in duration \"1d\"".into())
        );
        assert_eq!(d("1"), Err("time: missing unit in duration \"1\"".into()));
        assert_eq!(d(""), Err("time: invalid duration \"\"".into()));
        assert!(d(".s").is_err());
        assert!(d("-").is_err());
        assert!(d("1h ").is_err());
    }

    #[test]
    fn duration_text() {
        let f = |n: i64| format_duration(Duration { nanos: n });
        assert_eq!(f(1_500_000_000), "1.5s");
        assert_eq!(f(3_600_000_000_000), "3600s");
        assert_eq!(f(-90_000_000_000), "-90s");
        assert_eq!(f(0), "0s");
        assert_eq!(f(1), "0.000000001s");
        assert_eq!(f(-1), "-0.000000001s");
        let e = |n: i64| format_duration_exact(Duration { nanos: n });
        assert_eq!(e(1_000_000_000_000_000_001), "1000000000.000000001s");
        assert_eq!(e(i64::MIN), "-9223372036.854775808s");
        assert_eq!(parse_duration(&e(i64::MIN)).map(|d| d.nanos), Ok(i64::MIN));
    }

    #[test]
    fn duration_accessors() {
        let d = |s: &str| parse_duration(s).unwrap_or(Duration { nanos: 0 });
        assert_eq!(duration_minutes(d("3h25m")), 205);
        assert_eq!(duration_hours(d("90m")), 1);
        assert_eq!(duration_hours(d("-90m")), -1);
        assert_eq!(duration_milliseconds(d("1.234s")), 1234);
        assert_eq!(duration_seconds(d("1m30s")), 90);
        assert_eq!(duration_seconds(d("1.999999999s")), 1);
    }

    #[test]
    fn zones_and_fields() {
        let t = ts("2023-01-01T02:00:00+05:30");
        assert_eq!(timestamp_field_utc(t, TimeField::Hours), 20);
        let t2 = ts("2023-01-01T02:00:00Z");
        assert_eq!(
            timestamp_field(t2, TimeField::Hours, "America/Los_Angeles"),
            Ok(18)
        );
        assert_eq!(timestamp_field(t2, TimeField::Hours, "+05:30"), Ok(7));
        assert_eq!(timestamp_field(t2, TimeField::Minutes, "05:30"), Ok(30));
        assert_eq!(timestamp_field(t2, TimeField::Hours, "-08:00"), Ok(18));
        assert_eq!(timestamp_field(t2, TimeField::Hours, "+25:00"), Ok(3));
        assert_eq!(timestamp_field(t2, TimeField::Hours, "UTC"), Ok(2));
        assert_eq!(timestamp_field(t2, TimeField::Hours, "Asia/Tokyo"), Ok(11));
        let y = ts("2024-12-31T23:00:00Z");
        assert_eq!(timestamp_field(y, TimeField::DayOfYear, "+02:00"), Ok(0));
        assert_eq!(timestamp_field_utc(y, TimeField::DayOfYear), 365);
        assert_eq!(
            timestamp_field(t2, TimeField::Hours, "Invalid/Zone"),
            Err(Error::new("unknown time zone Invalid/Zone"))
        );
        assert_eq!(
            timestamp_field(t2, TimeField::Hours, "america/los_angeles"),
            Err(Error::new("unknown time zone america/los_angeles"))
        );
        assert_eq!(
            timestamp_field(t2, TimeField::Hours, "x:00"),
            Err(Error::new("strconv.Atoi: parsing \"x\": invalid syntax"))
        );
        let d = ts("2023-03-15T10:20:30.456Z");
        assert_eq!(timestamp_field_utc(d, TimeField::FullYear), 2023);
        assert_eq!(timestamp_field_utc(d, TimeField::Month), 2);
        assert_eq!(timestamp_field_utc(d, TimeField::Date), 15);
        assert_eq!(timestamp_field_utc(d, TimeField::DayOfMonth), 14);
        assert_eq!(timestamp_field_utc(d, TimeField::DayOfWeek), 3);
        assert_eq!(timestamp_field_utc(d, TimeField::Seconds), 30);
        assert_eq!(timestamp_field_utc(d, TimeField::Milliseconds), 456);
        assert_eq!(timestamp_field_utc(d, TimeField::DayOfYear), 73);
    }
}
