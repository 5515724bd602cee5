//! What reaches the terminal: text from outside (API answers, mirror and repository names, record
//! ids) has its control characters removed before it is printed, so an escape sequence in it
//! cannot move the cursor, retitle the window or recolour what follows; and log lines are
//! coloured only on a terminal, never when `NO_COLOR` is set.

use std::borrow::Cow;
use std::io::IsTerminal;

/// `text` without control characters (C0, DEL, C1), except line feeds and tabs.
pub fn clean(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if text.chars().any(unsafe_char) {
        Cow::Owned(text.chars().filter(|&c| !unsafe_char(c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// Longest line of an error message printed: a parser's error quotes the input's line (TOML's
/// does, with a caret under it), and that line may be megabytes long.
pub const ERROR_LINE_CAP: usize = 1000;

/// `text` as [`clean`] makes it, each line longer than [`ERROR_LINE_CAP`] characters cut there
/// with a note of how much was left out.
pub fn clean_error(text: &str) -> String {
    cap_lines(&clean(text), ERROR_LINE_CAP, "")
}

/// `text` with each line longer than `cap` characters cut there, followed by `… (N more
/// bytes{note})`.
pub fn cap_lines(text: &str, cap: usize, note: &str) -> String {
    let mut out = String::with_capacity(text.len().min(64 << 10));
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match line.char_indices().nth(cap) {
            Some((cut, _)) => {
                out.push_str(&line[..cut]);
                out.push_str(&format!("… ({} more bytes{note})", line.len() - cut));
            }
            None => out.push_str(line),
        }
    }
    out
}

/// When output may carry colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always, also into a file or pipe.
    Always,
    /// Never.
    Never,
}

/// Whether log lines on stderr carry colour under `when`: `always` and `never` say so; `auto`:
/// stderr is a terminal and `NO_COLOR` is unset or empty (<https://no-color.org>).
pub fn stderr_colour(when: ColorWhen) -> bool {
    colour(when, std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()))
}

fn colour(when: ColorWhen, terminal: bool, no_color: bool) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => terminal && !no_color,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_removed() {
        assert_eq!(clean("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(clean("plain"), Cow::Borrowed(_)));
        assert_eq!(clean("\u{1b}[2J\u{1b}]0;pwned\u{7}Not Found\r\u{9b}31m\u{7f}"), "[2J]0;pwnedNot Found31m");
    }

    #[test]
    fn colour_follows_the_flag_then_the_terminal_and_no_color() {
        assert!(colour(ColorWhen::Always, false, true), "always: into a pipe, NO_COLOR set");
        assert!(!colour(ColorWhen::Never, true, false));
        assert!(colour(ColorWhen::Auto, true, false));
        assert!(!colour(ColorWhen::Auto, false, false), "auto: not into a pipe");
        assert!(!colour(ColorWhen::Auto, true, true), "auto: NO_COLOR");
    }

    #[test]
    fn long_error_lines_are_cut() {
        let long = format!("x = {}\n  | ^\nshort", "[".repeat(5000));
        let cut = clean_error(&long);
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("x = [[[") && lines[0].ends_with("… (4004 more bytes)"), "{}", lines[0]);
        assert_eq!(lines[0].chars().count(), ERROR_LINE_CAP + "… (4004 more bytes)".chars().count());
        assert_eq!((lines[1], lines[2]), ("  | ^", "short"));
        assert_eq!(clean_error("é\u{1b}"), "é");
    }
}
