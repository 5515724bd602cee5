//! Calendar days as the commands take them (`YYYY-MM-DD`): one check for every flag and file
//! that names a day, so `2024-13-45` or `2023-02-29` is refused everywhere alike.

/// The year, month and day of `s` when it is a real `YYYY-MM-DD` day of the proleptic
/// Gregorian calendar.
pub fn parse_day(s: &str) -> Option<(i64, u32, u32)> {
    let b = s.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return None;
    }
    let (y, m, d) = (s[..4].parse::<i64>().ok()?, s[5..7].parse::<u32>().ok()?, s[8..].parse::<u32>().ok()?);
    (1..=12).contains(&m).then_some(())?;
    (1..=days_in_month(y, m)).contains(&d).then_some((y, m, d))
}

/// Days in month `m` (1-12) of year `y`.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_days_only() {
        assert_eq!(parse_day("2024-02-29"), Some((2024, 2, 29)));
        for bad in ["2024-13-45", "2023-02-29", "1900-02-29", "2024-04-31", "2024-00-10", "2024-1-1", "24-01-01x", ""] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
        assert_eq!(parse_day("2000-02-29"), Some((2000, 2, 29)));
    }
}

/// A point in time as records carry it: RFC 3339 (`2024-01-02T03:04:05Z`) or a bare day
/// (`2024-01-02`), checked when made or read, so its day can be taken without slicing text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Timestamp(String);

impl Timestamp {
    /// `s` as a timestamp: a real `YYYY-MM-DD` day, then nothing or `T`/space and ASCII text.
    pub fn parse(s: &str) -> Result<Timestamp, String> {
        let ok = s.len() >= 10
            && s.is_char_boundary(10)
            && parse_day(&s[..10]).is_some()
            && (s.len() == 10 || (matches!(s.as_bytes()[10], b'T' | b' ') && s.is_ascii()));
        if ok { Ok(Timestamp(s.to_owned())) } else { Err(format!("`{s}` is not an RFC 3339 date")) }
    }

    /// The day, `YYYY-MM-DD`.
    pub fn day(&self) -> &str {
        &self.0[..10]
    }

    /// The text as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod timestamp_tests {
    use super::*;

    #[test]
    fn timestamps_are_checked_and_give_their_day() {
        assert_eq!(Timestamp::parse("2024-01-02T03:04:05Z").unwrap().day(), "2024-01-02");
        assert_eq!(Timestamp::parse("2024-02-29").unwrap().day(), "2024-02-29");
        for bad in ["2024", "2023-02-29T00:00:00Z", "2024-01-0é", "2024-01-02X", "", "2024-01-02T00:00:0é"] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
        let t: Result<Timestamp, _> = serde_json::from_str("\"2024-13-01\"");
        assert!(t.unwrap_err().to_string().contains("not an RFC 3339 date"));
    }
}
