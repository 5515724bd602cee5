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
