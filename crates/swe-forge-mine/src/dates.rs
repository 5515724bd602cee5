//! Dates of the mining window: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ` (UTC) to and from Unix
//! seconds, without a calendar library.

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
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').ok_or_else(bad)?)),
        None => (s, None),
    };
    let d: Vec<i64> = date.split('-').map(|p| p.parse::<i64>()).collect::<Result<_, _>>().map_err(|_| bad())?;
    let [y, m, day] = d[..] else { return Err(bad()) };
    if swe_forge_core::parse_day(date).is_none() {
        return Err(bad());
    }
    let secs = match time {
        Some(t) => {
            let p: Vec<i64> = t.split(':').map(|p| p.parse::<i64>()).collect::<Result<_, _>>().map_err(|_| bad())?;
            let [h, mi, se] = p[..] else { return Err(bad()) };
            h * 3600 + mi * 60 + se
        }
        None if end_of_day => 86_399,
        None => 0,
    };
    Ok(days_from_civil(y, m, day) * 86_400 + secs)
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_time(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

// Howard Hinnant's algorithms (public domain).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
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
    }
}
