//! Days and times as the commands and records carry them, through jiff: `Day` (`YYYY-MM-DD`),
//! `Timestamp` (a record's RFC 3339 text with its day) and UTC seconds to and from RFC 3339.
//! Every flag and file that names a day goes through `Day::parse`, so `2024-13-45` or
//! `2023-02-29` is refused everywhere alike, and days compare as dates, never as text.

use jiff::civil::{Date, Time};
use jiff::tz::Offset;

use crate::DateError;

/// A real day of the proleptic Gregorian calendar from year 0001, written `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(Date);

impl Day {
    /// `s` as a day when it is exactly `YYYY-MM-DD` and that day exists.
    pub fn parse(s: &str) -> Option<Day> {
        let b = s.as_bytes();
        let shape = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !shape {
            return None;
        }
        let (y, m, d) = (s[..4].parse().ok()?, s[5..7].parse().ok()?, s[8..].parse().ok()?);
        // Year 0000 is no year of the calendar a date is written in (1 BC comes before 0001).
        if y == 0 {
            return None;
        }
        Date::new(y, m, d).ok().map(Day)
    }

    /// The UTC day of Unix second `secs` (the nearest end beyond years -9999 to 9999).
    pub fn of_second(secs: i64) -> Day {
        Day(Offset::UTC.to_datetime(instant(secs)).date())
    }

    /// Unix seconds of the day's first second (UTC).
    pub fn first_second(self) -> i64 {
        Offset::UTC.to_timestamp(self.0.to_datetime(Time::midnight())).map_or(i64::MIN, |t| t.as_second())
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.0.year(), self.0.month(), self.0.day())
    }
}

impl std::str::FromStr for Day {
    type Err = DateError;

    fn from_str(s: &str) -> Result<Day, DateError> {
        Day::parse(s).ok_or_else(|| DateError::NotADay(s.to_owned()))
    }
}

impl serde::Serialize for Day {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Day {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`; seconds beyond years -9999 to 9999 give the nearest end.
pub fn rfc3339_utc(secs: i64) -> String {
    instant(secs).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339_utc_millis_now() -> String {
    let now = jiff::Timestamp::now();
    format!("{}.{:03}Z", now.strftime("%Y-%m-%dT%H:%M:%S"), now.subsec_millisecond())
}

/// The Unix seconds of `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds), when `s` is exactly that.
pub fn utc_seconds(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let shape = b.len() == 20
        && Day::parse(&s[..10]).is_some()
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && [11, 12, 14, 15, 17, 18].iter().all(|&i| b[i].is_ascii_digit());
    if !shape {
        return None;
    }
    s.parse::<jiff::Timestamp>().ok().map(jiff::Timestamp::as_second)
}

fn instant(secs: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(secs).unwrap_or(if secs < 0 { jiff::Timestamp::MIN } else { jiff::Timestamp::MAX })
}

/// A point in time as records carry it: RFC 3339 (`2024-01-02T03:04:05Z`,
/// `2024-01-01T23:30:00-05:00`, with `T` or a space, fractions of a second allowed) or a bare
/// day (`2024-01-02`), checked when made or read: a day that does not exist, year 0000, an
/// hour, minute or second out of range (`T25:61:61Z`) or a time without its offset is refused.
/// Its day ([`Timestamp::date`]) is the UTC day, as GitHub and the cutoffs count days.
/// It orders as its text, which for these shapes is the order of its day first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    text: String,
    day: Day,
}

impl Timestamp {
    /// `s` as a timestamp: a real `YYYY-MM-DD` day, alone or followed by `T` (or a space) and
    /// `HH:MM:SS`, an optional fraction and `Z` or `±HH:MM`, each in range.
    pub fn parse(s: &str) -> Result<Timestamp, DateError> {
        let bad = || DateError::NotATimestamp(s.to_owned());
        let day = s.get(..10).and_then(Day::parse).ok_or_else(bad)?;
        if s.len() == 10 {
            return Ok(Timestamp { text: s.to_owned(), day });
        }
        let b = s.as_bytes();
        let time = s.is_ascii()
            && s.len() >= 20
            && matches!(b[10], b'T' | b't' | b' ')
            && b[13] == b':'
            && b[16] == b':'
            && [11, 12, 14, 15, 17, 18].iter().all(|&i| b[i].is_ascii_digit());
        let rest = if time { &s[19..] } else { return Err(bad()) };
        let rest = match rest.strip_prefix('.') {
            Some(f) => f.trim_start_matches(|c: char| c.is_ascii_digit()),
            None => rest,
        };
        let offset = rest.eq_ignore_ascii_case("z")
            || (rest.len() == 6
                && matches!(rest.as_bytes()[0], b'+' | b'-')
                && rest.as_bytes()[3] == b':'
                && [1, 2, 4, 5].iter().all(|&i| rest.as_bytes()[i].is_ascii_digit()));
        // jiff checks the ranges (hour 0-23, minute and second 0-59, a leap second 60).
        if !offset {
            return Err(bad());
        }
        let instant = s.replacen(' ', "T", 1).parse::<jiff::Timestamp>().map_err(|_| bad())?;
        let utc = Day::of_second(instant.as_second());
        if utc.0.year() < 1 {
            return Err(bad());
        }
        Ok(Timestamp { text: s.to_owned(), day: utc })
    }

    /// The day, `YYYY-MM-DD`, as written (in the time's own offset).
    pub fn day(&self) -> &str {
        &self.text[..10]
    }

    /// The UTC day, to compare as a date (`2023-12-31T23:30:00-05:00` is on 2024-01-01).
    pub fn date(&self) -> Day {
        self.day
    }

    /// The text as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_days_only() {
        assert_eq!(Day::parse("2024-02-29").unwrap().to_string(), "2024-02-29");
        assert_eq!(Day::parse("2000-02-29").unwrap().to_string(), "2000-02-29");
        assert_eq!(Day::parse("0001-01-01").unwrap().to_string(), "0001-01-01");
        for bad in [
            "2024-13-45",
            "2023-02-29",
            "1900-02-29",
            "2024-04-31",
            "2024-00-10",
            "2024-1-1",
            "24-01-01x",
            "",
            "0000-01-01",
        ] {
            assert_eq!(Day::parse(bad), None, "{bad}");
        }
        let d: Result<Day, _> = serde_json::from_str("\"2024-02-30\"");
        assert!(d.unwrap_err().to_string().contains("not a YYYY-MM-DD day"));
        assert_eq!("2024-1-1".parse::<Day>(), Err(DateError::NotADay("2024-1-1".into())));
        assert_eq!(serde_json::to_string(&Day::parse("2024-03-01").unwrap()).unwrap(), "\"2024-03-01\"");
    }

    #[test]
    fn days_compare_as_dates() {
        let days = ["2023-12-31", "2024-01-01", "2024-02-29", "2024-10-01"].map(|d| Day::parse(d).unwrap());
        assert!(days.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Day::parse("1970-01-01").unwrap().first_second(), 0);
        assert_eq!(Day::parse("2024-01-01").unwrap().first_second(), 1_704_067_200);
        assert_eq!(Day::of_second(1_709_251_199).to_string(), "2024-02-29");
        assert_eq!(Day::of_second(-1).to_string(), "1969-12-31");
    }

    #[test]
    fn utc_seconds_to_and_from_rfc3339() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(1_704_067_200), "2024-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(rfc3339_utc(1_723_507_200 + 9 * 3600 + 5 * 60 + 7), "2024-08-13T09:05:07Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(-1), "1969-12-31T23:59:59Z");
        assert_eq!(utc_seconds("2024-01-01T00:00:00Z"), Some(1_704_067_200));
        assert_eq!(utc_seconds("1969-12-31T23:59:59Z"), Some(-1));
        for bad in
            ["2024-01-01", "2024-01-01T00:00:00", "2024-01-01T24:00:00Z", "2024-02-30T00:00:00Z", "2024-01-01T1:2:3Z"]
        {
            assert_eq!(utc_seconds(bad), None, "{bad}");
        }
        let now = rfc3339_utc_millis_now();
        assert_eq!((now.len(), &now[10..11], &now[19..20], &now[23..]), (24, "T", ".", "Z"), "{now}");
        assert!(now[20..23].bytes().all(|b| b.is_ascii_digit()), "{now}");
    }

    #[test]
    fn timestamps_are_checked_and_give_their_day() {
        let t = Timestamp::parse("2024-01-02T03:04:05Z").unwrap();
        assert_eq!(
            (t.day(), t.date(), t.as_str()),
            ("2024-01-02", Day::parse("2024-01-02").unwrap(), "2024-01-02T03:04:05Z")
        );
        assert_eq!(Timestamp::parse("2024-02-29").unwrap().day(), "2024-02-29");
        // The day of a time in another offset is its UTC day.
        let late = Timestamp::parse("2023-12-31T23:30:00-05:00").unwrap();
        assert_eq!((late.day(), late.date().to_string()), ("2023-12-31", "2024-01-01".to_owned()));
        let early = Timestamp::parse("2024-01-01 00:30:00.250+02:00").unwrap();
        assert_eq!(early.date().to_string(), "2023-12-31");
        assert_eq!(Timestamp::parse("2016-12-31T23:59:60Z").unwrap().date().to_string(), "2016-12-31");
        for bad in [
            "2024",
            "2023-02-29T00:00:00Z",
            "2024-01-0é",
            "2024-01-02X",
            "",
            "2024-01-02T00:00:0é",
            "2024-01-02T25:61:61Z",
            "2024-01-02T23:60:00Z",
            "2024-01-02T03:04:05",
            "2024-01-02 03:04",
            "2024-01-02T03:04:05+5",
            "2024-01-02T03:04:05Zjunk",
            "0000-01-01T00:00:00Z",
            "0001-01-01T00:30:00+01:00",
        ] {
            assert_eq!(Timestamp::parse(bad), Err(DateError::NotATimestamp(bad.into())), "{bad}");
        }
        let t: Result<Timestamp, _> = serde_json::from_str("\"2024-13-01\"");
        assert!(t.unwrap_err().to_string().contains("not an RFC 3339 date"));
        assert_eq!(
            serde_json::to_string(&Timestamp::parse("2024-01-02 03:04:05+01:00").unwrap()).unwrap(),
            "\"2024-01-02 03:04:05+01:00\""
        );
        let t: Result<Timestamp, _> = serde_json::from_str("\"2024-06-01T25:61:61Z\"");
        assert!(t.unwrap_err().to_string().contains("2024-06-01T25:61:61Z"));
    }
}
