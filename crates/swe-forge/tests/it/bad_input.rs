//! What a user sees for bad input: an unreachable engine, a malformed record, a bad pipeline.

use crate::support::{root, swe_forge, text};
use std::process::Command;

#[test]
fn unreachable_engine_gives_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["validate", "--records"])
        .arg(root().join("data/fixtures/instances.jsonl"))
        .args(["--repos", "nowhere", "--out"])
        .arg(tmp.path().join("v.jsonl"))
        .env("DOCKER_HOST", format!("unix://{}/no-such.sock", tmp.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no Docker engine answers at unix://"), "{stderr}");
    assert!(stderr.contains("scripts/setup-docker.sh"), "{stderr}");
}

#[test]
fn malformed_record_names_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(root().join("data/fixtures/instances.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let bad = first.replacen("\"number\": 1", "\"number\": \"one\"", 1);
    assert_ne!(bad, first);
    let path = tmp.path().join("bad.jsonl");
    std::fs::write(&path, format!("{first}\n{bad}\n")).unwrap();
    let out = swe_forge(&[
        "validate",
        "--records",
        path.to_str().unwrap(),
        "--repos",
        "x",
        "--out",
        tmp.path().join("o.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("line 2: field `number`"), "{}", text(&out));
}

#[test]
fn names_that_leave_their_folder_and_repeated_ids_are_refused_where_records_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(root().join("data/fixtures/instances.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let escaping = first.replacen("\"instance_id\": \"forge-fixtures__gostack-1\"", "\"instance_id\": \"/tmp/x\"", 1);
    assert_ne!(escaping, first);
    for (name, content, says) in [
        ("abs.jsonl", format!("{escaping}\n"), "line 1: field `instance_id`: \"/tmp/x\" holds a path separator"),
        (
            "dup.jsonl",
            format!("{first}\n{first}\n"),
            "line 2: instance forge-fixtures__gostack-1 already appeared on line 1",
        ),
    ] {
        let path = tmp.path().join(name);
        std::fs::write(&path, content).unwrap();
        let work = tmp.path().join("w");
        let out = tmp.path().join("o.jsonl");
        let args = [
            "regrade",
            "--records",
            path.to_str().unwrap(),
            "--work-dir",
            work.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        let o = swe_forge(&args);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
    }
    let o = swe_forge(&["mine", "--repo", "../../x", "--out", tmp.path().join("c.jsonl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("\"..\" names a folder above or at its own"), "{}", text(&o));
    assert!(!tmp.path().join("c.jsonl").exists());
    // Days that do not exist are refused wherever a day is taken.
    let fixtures = root().join("data/fixtures/instances.jsonl");
    let o = swe_forge(&[
        "curate",
        "--dataset",
        fixtures.to_str().unwrap(),
        "-o",
        tmp.path().join("cur.jsonl").to_str().unwrap(),
        "--splits",
        tmp.path().join("splits").to_str().unwrap(),
        "--cutoff",
        "2024-13-45",
    ]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("\"2024-13-45\" is not a YYYY-MM-DD day"), "{}", text(&o));
    let o = swe_forge(&[
        "mine",
        "--repo",
        "a/b",
        "--since",
        "2023-02-29",
        "-o",
        tmp.path().join("m.jsonl").to_str().unwrap(),
    ]);
    // A usage error, as clap's own (issue #60).
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("\"2023-02-29\" is not YYYY-MM-DD"), "{}", text(&o));
}

#[test]
fn pipeline_with_a_typo_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("p.toml");
    std::fs::write(
        &path,
        "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='v'\n[validate]\ntimout=3\n",
    )
    .unwrap();
    let out = swe_forge(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("unknown field `timout`"), "{}", text(&out));
}

#[test]
fn an_error_quoting_a_huge_input_line_stays_short() {
    // TOML's parse errors quote the line, here 200,000 brackets (past its nesting limit).
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep.toml");
    std::fs::write(&path, format!("[validate]\nx = {}{}\n", "[".repeat(100_000), "]".repeat(100_000))).unwrap();
    let out = swe_forge(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is invalid") && err.contains("more bytes)"), "{}", &err[..err.len().min(4000)]);
    assert!(err.len() < 8 << 10, "{} bytes of error", err.len());
}

#[test]
fn every_command_has_help() {
    for cmd in [&["--help"][..], &["images", "--help"]] {
        let out = swe_forge(cmd);
        assert!(out.status.success(), "{cmd:?}: {}", text(&out));
        assert!(text(&out).contains("Usage:"), "{cmd:?}");
    }
    // Every command's help ends with an example of its use.
    for cmd in [
        "validate",
        "export",
        "run",
        "demo",
        "mine",
        "parse",
        "revalidate",
        "evaluate",
        "regrade",
        "review",
        "curate",
        "report",
        "publish",
        "completions",
        "bench overhead",
        "bench runs",
        "bench scale",
        "images bootstrap",
        "images list",
        "images sizes",
        "images verify",
        "images cleanup",
        "images prune",
        "images push",
        "images pull",
        "images save",
        "images load",
    ] {
        let args: Vec<&str> = cmd.split(' ').chain(["--help"]).collect();
        let out = swe_forge(&args);
        assert!(out.status.success(), "{cmd}: {}", text(&out));
        let help = text(&out);
        assert!(
            help.contains(&format!("Example:\n  swe-forge {cmd}"))
                || help.contains(&format!("Examples:\n  swe-forge {cmd}")),
            "{cmd}: {help}"
        );
    }
    // The commands that only group others show examples of theirs.
    for cmd in ["bench", "images"] {
        let out = swe_forge(&[cmd, "--help"]);
        assert!(text(&out).contains(&format!("Examples:\n  swe-forge {cmd} ")), "{cmd}: {}", text(&out));
    }
    // The top command's help lists every exit code, each once, with an example.
    let top = String::from_utf8(swe_forge(&["--help"]).stdout).unwrap();
    let codes = top.split_once("Exit codes:\n").map(|(_, rest)| rest).unwrap_or_else(|| panic!("{top}"));
    let listed: Vec<&str> =
        codes.lines().take_while(|l| !l.is_empty()).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(listed, ["0", "1", "2", "130", "141"], "{top}");
    assert!(top.contains("Example:\n  swe-forge run pipelines/demo.toml"), "{top}");
    // A usage error exits with the code the help gives it.
    assert_eq!(swe_forge(&["export", "--no-such-flag"]).status.code(), Some(2));
}

/// `-v` shows swe-forge's own debug lines (its crates are `swe_forge*`) and no library's; `-vv`
/// shows the libraries' too (bollard's, talking to the engine); neither shows none.
#[test]
fn one_v_is_swe_forge_s_debug_lines_and_two_are_every_library_s() {
    // The target of each debug line (`<time> DEBUG <target>: ...`).
    let targets = |flags: &[&str]| -> std::collections::BTreeSet<String> {
        let out = swe_forge(&[flags, &["images", "list"]].concat());
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter_map(|l| l.split_once(" DEBUG ").and_then(|(_, rest)| rest.split_once(':')))
            .map(|(target, _)| target.trim().split("::").next().unwrap().to_owned())
            .collect()
    };
    assert!(targets(&[]).is_empty(), "no debug lines by default");
    let one = targets(&["-v"]);
    assert!(one.contains("swe_forge") && one.contains("swe_forge_docker"), "{one:?}");
    assert!(one.iter().all(|t| t.starts_with("swe_forge")), "-v shows only swe-forge's own: {one:?}");
    let two = targets(&["-vv"]);
    assert!(two.contains("swe_forge_docker") && two.contains("bollard"), "-vv shows the Docker client's: {two:?}");
}

#[test]
fn one_vocabulary_version_completions_stdin_stdout_and_a_closed_pipe() {
    let v = swe_forge(&["--version"]);
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("swe-forge 0.0.0 (commit "), "{}", text(&v));
    let c = swe_forge(&["completions", "bash"]);
    assert!(
        c.status.success() && String::from_utf8_lossy(&c.stdout).contains("complete -F _swe__forge"),
        "{}",
        text(&c)
    );
    // Records from stdin, JSONL to stdout; --dataset and --records name the same input.
    let fixtures = std::fs::read(root().join("data/fixtures/instances.jsonl")).unwrap();
    for flag in ["--records", "--dataset"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(["export", flag, "-", "--jsonl", "-", "--all", "-q"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), &fixtures).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let lines = String::from_utf8_lossy(&out.stdout).lines().count();
        assert_eq!(lines, String::from_utf8_lossy(&fixtures).lines().count(), "{}", text(&out));
    }
    // A folder output cannot be stdout.
    let r =
        swe_forge(&["report", "--dataset", root().join("data/fixtures/instances.jsonl").to_str().unwrap(), "-o", "-"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(text(&r).contains("cannot go to stdout"), "{}", text(&r));
    assert!(!std::path::Path::new("-").exists());
    // A reader that stops early ends the process quietly with 141, whichever way it writes:
    // one script at once, a line at a time, records as JSONL.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("go.log");
    let lines: String = (0..20_000).map(|i| format!("=== RUN   TestN{i}\n--- PASS: TestN{i} (0.00s)\n")).collect();
    std::fs::write(&log, lines + "ok  \tp\t0.01s\n").unwrap();
    let dataset = root().join("data/fixtures/instances.jsonl");
    for args in [
        &["completions", "zsh"][..],
        &["parse", "-f", "go-test", log.to_str().unwrap()],
        &["export", "--records", dataset.to_str().unwrap(), "--all", "--jsonl", "-"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("error:"), "{args:?}: {}", text(&out));
        assert_eq!(out.status.code(), Some(141), "{args:?}: {}", text(&out));
    }
}

/// `swe-forge ARGS` with its address space capped at 4 GiB (stdin from `stdin`), so that a read
/// that grows without bound aborts instead of eating the machine.
fn swe_forge_capped(args: &[&str], stdin: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\" < \"$SWE_FORGE_TEST_STDIN\"")
        .arg(env!("CARGO_BIN_EXE_swe-forge"))
        .args(args)
        .env("SWE_FORGE_TEST_STDIN", stdin)
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .output()
        .unwrap()
}

#[test]
fn an_endless_input_line_is_refused_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = root().join("data/fixtures/instances.jsonl");
    let out = tmp.path().join("o.jsonl");
    let labels_out = tmp.path().join("c.jsonl");
    let eval_out = tmp.path().join("eval");
    let (dataset, out, labels_out, eval_out) =
        (dataset.to_str().unwrap(), out.to_str().unwrap(), labels_out.to_str().unwrap(), eval_out.to_str().unwrap());
    for (args, stdin) in [
        (vec!["validate", "--records", "/dev/zero", "--repos", "x", "--out", out], "/dev/null"),
        (vec!["validate", "--records", "-", "--repos", "x", "--out", out], "/dev/zero"),
        (vec!["evaluate", "--dataset", dataset, "--predictions", "/dev/zero", "--out", eval_out], "/dev/null"),
        (vec!["curate", "--dataset", dataset, "--labels", "/dev/zero", "--out", labels_out], "/dev/null"),
        (vec!["export", "--records", "/dev/zero", "--jsonl", out], "/dev/null"),
    ] {
        let o = swe_forge_capped(&args, stdin);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("line 1 is longer than 64 MiB"), "{args:?}: {}", text(&o));
    }
    // A pipeline file without end (found by probing).
    let o = swe_forge_capped(
        &["validate", "--records", dataset, "--repos", "x", "--out", out, "--pipeline", "/dev/zero"],
        "/dev/null",
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("longer than 16 MiB, the most a configuration file may hold"), "{}", text(&o));
}

#[test]
fn records_from_a_fifo_are_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("records.fifo");
    let o = Command::new("mkfifo").arg(&fifo).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let dataset = std::fs::read(root().join("data/fixtures/instances.jsonl")).unwrap();
    let lines = dataset.iter().filter(|&&b| b == b'\n').count();
    let writer = {
        let fifo = fifo.clone();
        // Errors ignored: the command may close its end early, which is what would fail.
        std::thread::spawn(move || {
            if let Ok(mut f) = std::fs::File::options().write(true).open(&fifo) {
                let _ = std::io::Write::write_all(&mut f, &dataset);
            }
        })
    };
    let out = tmp.path().join("copy.jsonl");
    let o = swe_forge(&["export", "--all", "--records", fifo.to_str().unwrap(), "--jsonl", out.to_str().unwrap()]);
    writer.join().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(crate::support::read_records(&out).len(), lines);
}

#[test]
fn nonsense_limits_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let records = root().join("data/fixtures/instances.jsonl");
    let out = tmp.path().join("o.jsonl");
    for (flag, value) in [
        ("--timeout", "0"),
        ("--jobs", "0"),
        ("--memory-mb", "0"),
        ("--pids-limit", "0"),
        ("--cpus", "0"),
        ("--cpus", "NaN"),
    ] {
        let o = swe_forge(&[
            "validate",
            "--records",
            records.to_str().unwrap(),
            "--repos",
            "x",
            "--out",
            out.to_str().unwrap(),
            flag,
            value,
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", text(&o));
        assert!(text(&o).contains(flag), "{flag} {value}: {}", text(&o));
    }
    assert!(!out.exists());
}

#[test]
fn a_fix_patch_over_evaluations_limit_is_rejected_at_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let pipeline = crate::pipeline::pipeline_in(tmp.path(), "");
    let fixtures = crate::support::read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut big = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    // 12 MB: an added file of 12 MB in the diff; evaluation refuses patches over 8 MiB.
    let lines = 12 * 1024;
    let body: String = (0..lines).map(|_| format!("+{}\n", "x".repeat(1023))).collect();
    big.fix_patch.push_str(&format!(
        "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,{lines} @@\n{body}"
    ));
    let records = tmp.path().join("big.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&records).unwrap(), [&big]).unwrap();
    let out = tmp.path().join("v.jsonl");
    let o = swe_forge(&[
        "validate",
        "--records",
        records.to_str().unwrap(),
        "--repos",
        tmp.path().join("repos").to_str().unwrap(),
        "--pipeline",
        pipeline.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let done = crate::support::read_records(&out);
    assert_eq!(
        crate::pipeline::reasons(&done[0]),
        [swe_forge_core::RejectReason::UnsafePatch],
        "{:?}",
        done[0].swe_forge
    );
    let detail = &done[0].swe_forge.as_ref().unwrap().rejections[0].detail;
    assert!(detail.contains("fix_patch: patch of") && detail.contains("8 MiB"), "{detail}");
    // validate ends with its funnel: nothing built, one rejection by its reason.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("\nfunnel of 1 candidates:\n       0  built their image\n"), "{stdout}");
    assert!(stdout.ends_with("\n       1    unsafe_patch\n"), "{stdout}");
}

#[test]
fn escape_sequences_in_predictions_never_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = root().join("data/fixtures/instances.jsonl");
    let preds = tmp.path().join("preds.jsonl");
    // An id the dataset does not have (it is named in a warning), with ESC, CSI, BEL and C1.
    std::fs::write(
        &preds,
        "{\"instance_id\":\"x\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\",\"model_name_or_path\":\"m\\u001b[31m\",\"model_patch\":\"\"}\n",
    )
    .unwrap();
    let o = swe_forge(&[
        "evaluate",
        "--dataset",
        dataset.to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
        "--out",
        tmp.path().join("eval").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let all = text(&o);
    assert!(all.contains("predictions name instances the dataset does not have: x]0;pwned"), "{all:?}");
    assert!(!all.chars().any(|c| c.is_control() && c != '\n'), "{all:?}");
}
