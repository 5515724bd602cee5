//! Suites that refuse to run as root. Test runs are root by default (many suites expect it), but
//! some stop at once when they are (libuv's runner: `The libuv test suite cannot be run as root.`,
//! PostgreSQL's `initdb`, a browser's `Running as root without --no-sandbox is not supported`):
//! every test then fails, or the suite is one failed result. [`root_refusal`] finds such a line in
//! a base run's output, and validation runs the instance again as an unprivileged test user (an
//! attempt in the record's provenance).

/// The first line of `text` (a run's log, or the output a results file kept) that says the
/// program refuses to run as root, trimmed.
pub fn root_refusal(text: &str) -> Option<String> {
    const AS_ROOT: [&str; 4] = [" as root", " as the root user", " by root", " as superuser"];
    const REFUSED: [&str; 11] = [
        "cannot",
        "can not",
        "can't",
        "must not",
        "should not",
        "do not",
        "not supported",
        "not allowed",
        "not permitted",
        "refus",
        "won't",
    ];
    text.lines().find_map(|line| {
        let lower = line.to_lowercase();
        (lower.contains("run")
            && AS_ROOT.iter().any(|p| lower.contains(p))
            && REFUSED.iter().any(|w| lower.contains(w)))
        .then(|| without_tags(line).trim().chars().take(300).collect())
    })
}

/// `line` without XML tags (a results file's `<system-out>` around the line).
fn without_tags(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) => rest = &rest[open + close + 1..],
            None => {
                rest = &rest[open..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_to_run_as_root_are_found_and_other_lines_are_not() {
        for line in [
            "The libuv test suite cannot be run as root.",
            "initdb: error: cannot be run as root",
            "[0101/000000.000:ERROR:zygote_host_impl_linux.cc(90)] Running as root without --no-sandbox is not supported.",
            "can not run elasticsearch as root",
            "This program must not be run as root",
        ] {
            let log = format!("Test project /testbed/build\n{line}\n1/2 Test #1: uv_test ...***Failed\n");
            assert_eq!(root_refusal(&log).as_deref(), Some(line.trim()), "{line}");
        }
        let xml = "\t\t<system-out>The libuv test suite cannot be run as root.\n</system-out>";
        assert_eq!(root_refusal(xml).as_deref(), Some("The libuv test suite cannot be run as root."));
        for line in ["test root_dir ... ok", "running as root: fine", "cannot open file", "root cause: cannot parse"] {
            assert_eq!(root_refusal(line), None, "{line}");
        }
    }
}
