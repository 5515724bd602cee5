//! Format detection: counts the lines that only one format would print and picks the format
//! with the most. test2json events win ties (a `go test -json` log also carries `-v` text,
//! but only inside JSON strings), then `go test -v`, then libtest.

use crate::{Framework, cargo_libtest, go_json, go_verbose, text};

pub(crate) fn detect(log: &str) -> Option<Framework> {
    let (mut json, mut go, mut cargo) = (0usize, 0usize, 0usize);
    for line in text::lines(log) {
        let line = line.trim_end();
        let trimmed = line.trim_start();
        if trimmed.starts_with('{') {
            json += usize::from(go_json::is_event(trimmed));
        } else if go_verbose::result(line).is_some()
            || go_verbose::run(line).is_some()
            || matches!(go_verbose::summary(line), Some(go_verbose::Summary::Ok(_) | go_verbose::Summary::Fail(_)))
        {
            go += 1;
        } else if trimmed.strip_prefix("Running ").is_some_and(|r| cargo_libtest::running_header(r.trim()).is_some())
            || trimmed.starts_with("Doc-tests ")
            || trimmed.starts_with("test result: ")
            || cargo_libtest::running_count(line).is_some()
            || cargo_libtest::test_line(line).is_some_and(|(_, rest)| cargo_libtest::status_word(rest).is_some())
        {
            cargo += 1;
        }
    }
    let best = json.max(go).max(cargo);
    if best == 0 {
        None
    } else if json == best {
        Some(Framework::GoTestJson)
    } else if go == best {
        Some(Framework::GoTestVerbose)
    } else {
        Some(Framework::CargoLibtest)
    }
}
