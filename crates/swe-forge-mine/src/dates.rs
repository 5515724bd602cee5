//! Dates of the mining window: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ` (UTC) to and from Unix
//! seconds, through core's dates.

use swe_forge_core::{Day, rfc3339_utc, utc_seconds};

use crate::error::MineError;

/// A closed time window in Unix seconds (UTC); `until` given as a date covers that whole day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First second included.
    pub since: i64,
    /// Last second included.
    pub until: i64,
}

impl Window {
    /// Everything.
    pub const ALL: Window = Window { since: i64::MIN, until: i64::MAX };

    /// Parses the two bounds; either may be absent.
    pub fn parse(since: Option<&str>, until: Option<&str>) -> Result<Window, MineError> {
        let since = since.map(|s| parse_time(s, false)).transpose()?.unwrap_or(i64::MIN);
        let until = until.map(|s| parse_time(s, true)).transpose()?.unwrap_or(i64::MAX);
        if since > until {
            return Err(MineError::Invalid { what: "window", message: "--since is after --until".into() });
        }
        Ok(Window { since, until })
    }

    /// Whether `t` lies in the window.
    pub fn contains(&self, t: i64) -> bool {
        self.since <= t && t <= self.until
    }

    /// `since..until` as GitHub's search syntax wants it (`*` for an open end).
    pub fn search_range(&self) -> String {
        let b = |t: i64, open: bool| if open { "*".to_owned() } else { format_time(t) };
        format!("{}..{}", b(self.since, self.since == i64::MIN), b(self.until, self.until == i64::MAX))
    }
}

/// `YYYY-MM-DD` (start of day, or end of day when `end_of_day`) or `YYYY-MM-DDTHH:MM:SSZ`.
pub fn parse_time(s: &str, end_of_day: bool) -> Result<i64, MineError> {
    let bad =
        || MineError::Invalid { what: "date", message: format!("{s:?} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ") };
    if let Some(day) = Day::parse(s) {
        return Ok(day.first_second() + if end_of_day { 86_399 } else { 0 });
    }
    utc_seconds(s).ok_or_else(bad)
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_time(t: i64) -> String {
    rfc3339_utc(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_bounds() {
        assert_eq!(parse_time("1970-01-01", false).unwrap(), 0);
        assert_eq!(parse_time("2024-01-01T00:00:00Z", false).unwrap(), 1_704_067_200);
        assert_eq!(format_time(1_704_067_200), "2024-01-01T00:00:00Z");
        assert_eq!(format_time(parse_time("2024-02-29", true).unwrap()), "2024-02-29T23:59:59Z");
        let w = Window::parse(Some("2024-01-01"), Some("2024-01-31")).unwrap();
        assert!(w.contains(1_704_067_200) && !w.contains(1_704_067_199));
        assert_eq!(w.search_range(), "2024-01-01T00:00:00Z..2024-01-31T23:59:59Z");
        assert_eq!(Window::ALL.search_range(), "*..*");
        assert!(Window::parse(Some("2024-02-01"), Some("2024-01-01")).is_err());
        assert!(parse_time("2024-13-01", false).is_err());
        assert!(parse_time("yesterday", false).is_err());
        assert!(parse_time("2024-01-01T25:00:00Z", false).is_err());
    }
}
