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

/// Whether log lines on stderr may carry colour: stderr is a terminal and `NO_COLOR` is unset or
/// empty (<https://no-color.org>).
pub fn stderr_colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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
}
