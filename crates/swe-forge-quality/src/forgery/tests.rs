//! Tests of the forgery scan: each rule on the forgeries of issue #60, no finding on ordinary
//! code (tests added, a CLI reading and setting `os.Args` outside `init()`), and the perl script
//! finding what the Rust scan finds.

use super::*;

fn new_file(path: &str, body: &str) -> String {
    let lines: String = body.lines().map(|l| format!("+{l}\n")).collect();
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n{lines}",
        body.lines().count()
    )
}

fn found(patch: &str) -> Vec<(String, u64, &'static str)> {
    scan_forgery(patch, &[]).into_iter().map(|f| (f.path, f.line, f.rule.as_str())).collect()
}

/// What the scan must find: (path, line, rule).
type Expected = Vec<(&'static str, u64, &'static str)>;

/// The forgeries: (patch, what the scan must find).
fn forgeries() -> Vec<(String, Expected)> {
    let skip_framed = "package gostack\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc init() {\n\tos.Args = append(os.Args, \"-test.skip=^TestX$\")\n\tfmt.Print(\"\\x16=== RUN   TestX\\n\\x16--- PASS: TestX (0.00s)\\n\")\n}\n";
    let proc_json = "package gostack\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nvar _ = func() bool {\n\tw, _ := os.OpenFile(fmt.Sprintf(\"/proc/%d/fd/1\", os.Getppid()), os.O_WRONLY, 0)\n\tfmt.Fprintln(w, `{\"Action\":\"pass\",\"Test\":\"TestX\"}`)\n\treturn true\n}()\n";
    let run_flag = "package gostack\n\nimport \"os\"\n\nvar skip = \"-test.run\"\n\nfunc init() {\n\tos.Args = append(os.Args, skip+\"=^TestLen$\")\n}\n";
    let obscure_init = "package gostack\n\nimport \"os\"\n\nfunc init() {\n\tif len(os.Args) > 0 {\n\t\tos.Args = append(os.Args, string([]byte{45, 116}))\n\t}\n}\n";
    let jest = "const args = require('./args');\nprocess.argv.push('-t', 'nothing');\n";
    let tap = "console.log('ok 1 - parses durations');\n";
    let libtest = "fn main() {\n    println!(\"test capacity::grows ... ok\");\n    println!(\"test result: ok. 1 passed\");\n}\n";
    let raw_frame = "package x\n\nconst frame = \"\u{16}\"\n";
    vec![
        (
            new_file("zz_forge.go", skip_framed),
            vec![
                ("zz_forge.go", 9, "runner-flag"),
                ("zz_forge.go", 9, "argv-in-init"),
                ("zz_forge.go", 10, "result-framing"),
                ("zz_forge.go", 9, "argv-runner-flag"),
            ],
        ),
        (new_file("forge.go", proc_json), vec![("forge.go", 9, "proc-fd"), ("forge.go", 10, "result-framing")]),
        (
            new_file("a.go", run_flag),
            vec![("a.go", 5, "runner-flag"), ("a.go", 8, "argv-in-init"), ("a.go", 8, "argv-runner-flag")],
        ),
        (new_file("a.go", obscure_init), vec![("a.go", 7, "argv-in-init")]),
        (new_file("src/cli.js", jest), vec![("src/cli.js", 2, "argv-runner-flag")]),
        (new_file("src/log.js", tap), vec![("src/log.js", 1, "result-framing")]),
        (
            new_file("src/forge.rs", libtest),
            vec![("src/forge.rs", 2, "result-framing"), ("src/forge.rs", 3, "result-framing")],
        ),
        (new_file("x.go", raw_frame), vec![("x.go", 3, "result-framing")]),
    ]
}

/// Ordinary patches: none may be flagged.
fn ordinary() -> Vec<String> {
    let cli = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tif len(os.Args) < 2 {\n\t\tos.Args = append(os.Args, \"--help\")\n\t}\n\tif os.Args[1] == \"-v\" {\n\t\tfmt.Println(\"verbose\")\n\t}\n}\n\nfunc init() {\n\tfmt.Println(len(os.Args))\n}\n";
    let test = "package gostack\n\nimport \"testing\"\n\nfunc TestPopEmpty(t *testing.T) {\n\tt.Run(\"empty\", func(t *testing.T) {})\n}\n";
    let py = "import sys\n\n\ndef main():\n    args = sys.argv[1:]\n    if args == ['-k']:\n        print('key')\n";
    let js = "const status = { ok: true };\nconsole.log('connecting... ok');\nconst x = process.argv.slice(2);\n";
    let procfs = "package p\n\nconst meminfo = \"/proc/meminfo\"\nconst exe = \"/proc/self/exe\"\n";
    let change = "diff --git a/stack.go b/stack.go\n--- a/stack.go\n+++ b/stack.go\n@@ -10,3 +10,4 @@ func (s *Stack[T]) Push(v T) {\n func init() {\n \tregister()\n+\tcount++\n }\n";
    vec![
        new_file("main.go", cli),
        new_file("stack_test.go", test),
        new_file("cli.py", py),
        new_file("src/x.js", js),
        new_file("p.go", procfs),
        change.into(),
    ]
}

#[test]
fn forged_results_and_steered_runners_are_found_with_file_and_line() {
    for (patch, want) in forgeries() {
        let mut got = found(&patch);
        let mut want: Vec<(String, u64, &str)> = want.into_iter().map(|(p, l, r)| (p.to_owned(), l, r)).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{patch}");
    }
    let f = &scan_forgery(&forgeries()[0].0, &[])[0];
    assert_eq!(
        f.to_string(),
        "zz_forge.go:9: names a test runner's test-selection flag (runner-flag): os.Args = append(os.Args, \"-test.skip=^TestX$\")"
    );
    let framed = scan_forgery(&new_file("x.go", "const frame = \"\u{16}=== RUN\"\n"), &[]);
    assert_eq!(framed[0].text, "const frame = \"\\x16=== RUN\"");
}

#[test]
fn ordinary_code_and_tests_are_not_flagged() {
    for patch in ordinary() {
        assert_eq!(found(&patch), [], "{patch}");
    }
    // An added line in an init() the patch did not write is still in it.
    let inside = "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -3,2 +3,3 @@\n func init() {\n+\tos.Args = os.Args[:1]\n }\n";
    assert_eq!(found(inside), [("a.go".to_owned(), 4, "argv-in-init")]);
}

#[test]
fn exempt_rules_are_not_applied() {
    let (patch, _) = &forgeries()[1];
    let rules: Vec<ForgeryRule> = scan_forgery(patch, &[ForgeryRule::ProcFd]).into_iter().map(|f| f.rule).collect();
    assert_eq!(rules, [ForgeryRule::Framing]);
}

#[test]
fn the_perl_script_finds_what_the_scan_finds() {
    let tmp = std::env::temp_dir().join(format!("swe-forge-forgery-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let script = tmp.join("scan.pl");
    std::fs::write(&script, forgery_scan_script()).unwrap();
    let perl = |patch: &str, exempt: &[&str]| {
        let file = tmp.join("p.diff");
        std::fs::write(&file, patch).unwrap();
        let out = std::process::Command::new("perl").arg(&script).arg(&file).args(exempt).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let mut got: Vec<(String, u64, String)> = text
            .lines()
            .map(|l| {
                let rest = l.strip_prefix("swe-forge: tampered: ").unwrap();
                let mut parts = rest.splitn(4, ": ");
                let (at, rule) = (parts.next().unwrap(), parts.next().unwrap());
                let (path, line) = at.rsplit_once(':').unwrap();
                (path.to_owned(), line.parse().unwrap(), rule.to_owned())
            })
            .collect();
        got.sort();
        (out.status.code(), got)
    };
    let all: Vec<String> = forgeries().into_iter().map(|(p, _)| p).chain(ordinary()).collect();
    for patch in &all {
        let mut want: Vec<(String, u64, String)> =
            found(patch).into_iter().map(|(p, l, r)| (p, l, r.to_owned())).collect();
        want.sort();
        let code = if want.is_empty() { 0 } else { 1 };
        assert_eq!(perl(patch, &[]), (Some(code), want), "{patch}");
    }
    assert_eq!(perl(&forgeries()[1].0, &["proc-fd", "result-framing"]), (Some(0), vec![]));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn the_rules_fit_in_a_perl_qr() {
    for (name, pattern) in RULES {
        assert!(!pattern.contains(['$', '@']), "{name}");
        assert!(!pattern.replace("\\{", "").replace("\\}", "").contains(['{', '}']), "{name}");
        assert!(forgery_scan_script().contains(&format!("qr{{{pattern}}}")));
    }
    assert!(!forgery_scan_script().contains("__"), "every placeholder is filled");
}
