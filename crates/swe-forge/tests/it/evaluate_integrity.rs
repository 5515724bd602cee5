//! Evaluation cannot be won by forging the test results, on the real engine, for Go, Rust and
//! jest. Three layers, each shown to matter: a patch's changes to tests and test-runner
//! configuration are dropped (a forgery through them comes out `unresolved`, the file named with
//! its rule); a patch whose added lines print result lines or steer the runner (a Go `init()`, a
//! Cargo.toml `[[test]]` target printing libtest's lines) is `tampered` by the forgery scan before
//! it runs; and a forgery the scan cannot read (a jest results processor named in package.json,
//! Go strings built at run time) fools the parser, so its verdict alone says resolved, yet the
//! canaries make it `tampered`. The gold patch still resolves in each.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use swe_forge_core::Instance;

use crate::environments::validate;
use crate::evaluate::{evaluate, patch_of};
use crate::support::{make_repos, read_records, root};

/// A diff adding `path` with `content`.
pub(crate) fn new_file(path: &str, content: &str) -> String {
    let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n{lines}",
        content.lines().count()
    )
}

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    repos: PathBuf,
    dataset: PathBuf,
    record: Instance,
}

/// One fixture instance, validated and accepted.
fn accepted(id: &str) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_owned();
    let repos = make_repos(&dir);
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let one = fixtures.iter().find(|r| r.instance_id == id).unwrap();
    let done = validate(&[one], &repos, &dir.join("v"), None);
    assert_eq!(done[0].status(), swe_forge_core::ValidationStatus::Accepted, "{:?}", done[0].swe_forge);
    Fixture { dataset: dir.join("v/validated.jsonl"), record: done[0].clone(), _tmp: tmp, dir, repos }
}

impl Fixture {
    fn repo(&self) -> PathBuf {
        self.repos.join(&self.record.org).join(&self.record.repo)
    }

    /// The listed tests (FAIL_TO_PASS and PASS_TO_PASS), as `(part before the first ::, rest)`.
    fn listed(&self) -> Vec<(String, String)> {
        let ids = self.record.fixed_tests.keys().chain(self.record.p2p_tests.keys());
        ids.map(|id| id.split_once("::").map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap()).collect()
    }

    /// Evaluates `predictions` (model -> patch) and the gold patch; every evaluation record by
    /// model.
    fn evaluate(&self, predictions: &[(&str, String)]) -> BTreeMap<String, Value> {
        let id = &self.record.instance_id;
        let mut lines: String = predictions
            .iter()
            .map(|(model, patch)| {
                format!("{}\n", json!({"instance_id": id, "model_name_or_path": model, "model_patch": patch}))
            })
            .collect();
        lines.push_str(&format!(
            "{}\n",
            json!({"instance_id": id, "model_name_or_path": "gold", "model_patch": self.record.fix_patch})
        ));
        let file = self.dir.join("preds.jsonl");
        std::fs::write(&file, lines).unwrap();
        let out = self.dir.join("eval");
        evaluate(&self.dataset, file.to_str().unwrap(), &self.repos, &out, &[]);
        let text = std::fs::read_to_string(out.join("evaluations.jsonl")).unwrap();
        let all: BTreeMap<String, Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|v| (v["model"].as_str().unwrap().to_owned(), v))
            .collect();
        assert_eq!(all["gold"]["outcome"], "resolved", "{}", all["gold"]);
        assert_eq!(all["gold"]["dropped_files"], Value::Null, "{}", all["gold"]);
        assert!(
            !all["gold"]["warnings"].to_string().contains("canary"),
            "the canaries are placed and sound for the gold patch: {}",
            all["gold"]
        );
        all
    }
}

/// `ev` is not resolved because `path` was dropped by `rule`.
fn dropped(ev: &Value, path: &str, rule: &str) {
    assert_eq!(ev["outcome"], "unresolved", "{ev}");
    assert_eq!(ev["dropped_files"], json!([{"path": path, "rule": rule}]), "{ev}");
}

/// `ev` is tampered although its verdict, from the forged statuses, has every FAIL_TO_PASS test
/// passing (with `resolved_verdict`, every listed test: the canaries alone stopped it).
fn tampered(ev: &Value, resolved_verdict: bool) {
    assert_eq!(ev["outcome"], "tampered", "{ev}");
    assert!(ev["detail"].as_str().unwrap().starts_with("canaries: run 0 reported the pass canary"), "{ev}");
    assert_eq!(ev["verdict"]["f2p_failed"], json!({}), "the forgery fooled the parser: {ev}");
    assert_eq!(ev["verdict"]["resolved"], resolved_verdict, "{ev}");
    assert_eq!(ev["dropped_files"], Value::Null, "{ev}");
}

/// `ev` is tampered by the forgery scan, which names `path`: it never ran.
fn scanned(ev: &Value, path: &str) {
    assert_eq!(ev["outcome"], "tampered", "{ev}");
    assert!(ev["detail"].as_str().unwrap().starts_with(&format!("forgery scan: {path}:")), "{ev}");
    assert_eq!((&ev["verdict"], &ev["runs"]), (&Value::Null, &json!([])), "{ev}");
}

#[test]
fn go_forged_test_output_is_dropped_or_caught_by_the_canaries() {
    let f = accepted("forge-fixtures__gostack-1");
    let names: Vec<String> = f.listed().into_iter().map(|(_, test)| test).collect();
    let forge = |header: &str| {
        let prints: String =
            names.iter().map(|n| format!("\tfmt.Printf(\"=== RUN   {n}\\n--- PASS: {n} (0.00s)\\n\")\n")).collect();
        format!(
            "package gostack\n\nimport (\n\t\"fmt\"\n\t\"os\"\n{}\n)\n\n{header} {{\n{prints}\tfmt.Println(\"PASS\")\n\tos.Exit(0)\n}}\n",
            if header.contains("testing") { "\t\"testing\"" } else { "" }
        )
    };
    let all = f.evaluate(&[
        ("test-main", new_file("zz_hack_test.go", &forge("func TestMain(m *testing.M)"))),
        ("init", new_file("zz_hack.go", &forge("func init()"))),
    ]);
    dropped(&all["test-main"], "zz_hack_test.go", "test file: Go *_test.go");
    scanned(&all["init"], "zz_hack.go");
}

#[test]
fn rust_forged_test_output_is_dropped_or_caught_by_the_canaries() {
    let f = accepted("forge-fixtures__ringq-7");
    let mut by_binary: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (binary, test) in f.listed() {
        by_binary.entry(binary).or_default().push(test);
    }
    let libtest = |tests: &[String]| -> Vec<String> {
        let mut lines = vec![String::new(), format!("running {} tests", tests.len())];
        lines.extend(tests.iter().map(|t| format!("test {t} ... ok")));
        lines.push(String::new());
        lines.push(format!(
            "test result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            tests.len()
        ));
        lines
    };
    // A cargo runner that prints every listed test of the binary it is given as passing.
    let cases: String = by_binary
        .iter()
        .map(|(b, tests)| {
            let quoted: Vec<String> = libtest(tests).iter().map(|l| format!("'{l}'")).collect();
            format!("  {b}) printf '%s\\n' {} ;;\n", quoted.join(" "))
        })
        .collect();
    let runner = [
        new_file(".cargo/config.toml", "[target.'cfg(all())']\nrunner = [\"sh\", \"forge.sh\"]\n"),
        new_file("forge.sh", &format!("b=$(basename \"$1\")\ncase \"${{b%-*}}\" in\n{cases}esac\n")),
    ]
    .concat();
    // The FAIL_TO_PASS tests' integration test replaced by a program that prints them as passing.
    let capacity = &by_binary["capacity"];
    let prints: String = libtest(capacity).iter().map(|l| format!("    println!(\"{l}\");\n")).collect();
    let target = [
        patch_of(
            &f.repo(),
            &f.record.base.sha,
            &[
                ("Cargo.toml", "edition = \"2021\"", "edition = \"2021\"\nautotests = false"),
                (
                    "Cargo.toml",
                    "[dependencies]",
                    "[[test]]\nname = \"capacity\"\npath = \"src/forge.rs\"\nharness = false\n\n[[test]]\nname = \"basics\"\npath = \"tests/basics.rs\"\n\n[dependencies]",
                ),
            ],
            &f.dir,
        ),
        new_file("src/forge.rs", &format!("fn main() {{\n{prints}}}\n")),
    ]
    .concat();
    let all = f.evaluate(&[("runner", runner), ("test-target", target)]);
    // The runner's configuration is dropped; the script it named, left in, prints libtest's lines.
    let runner = &all["runner"];
    assert_eq!(
        runner["dropped_files"],
        json!([{"path": ".cargo/config.toml", "rule": "test runner configuration: cargo configuration (.cargo/config)"}]),
        "{runner}"
    );
    assert!(runner["detail"].as_str().unwrap().starts_with("forgery scan: forge.sh:3: "), "{runner}");
    assert_eq!(runner["outcome"], "tampered", "{runner}");
    scanned(&all["test-target"], "src/forge.rs");
}

#[test]
fn jest_forged_results_are_dropped_or_caught_by_the_canaries() {
    let f = accepted("forge-fixtures__jsduration-12");
    // A results processor that marks every test passed: jest writes its --json report after it.
    let processor = new_file(
        "src/forge.js",
        "module.exports = (results) => {\n  for (const file of results.testResults) {\n    file.numFailingTests = 0;\n    file.failureMessage = null;\n    for (const t of file.testResults) {\n      t.status = 'passed';\n      t.failureMessages = [];\n    }\n  }\n  results.numFailedTests = 0;\n  results.success = true;\n  return results;\n};\n",
    );
    let config = [
        processor.clone(),
        new_file("jest.config.js", "module.exports = { testResultsProcessor: '<rootDir>/src/forge.js' };\n"),
    ]
    .concat();
    let package = [
        processor,
        patch_of(
            &f.repo(),
            &f.record.base.sha,
            &[(
                "package.json",
                "\"license\": \"MIT\"",
                "\"license\": \"MIT\",\n  \"jest\": { \"testResultsProcessor\": \"<rootDir>/src/forge.js\" }",
            )],
            &f.dir,
        ),
    ]
    .concat();
    let all = f.evaluate(&[("config", config), ("package-json", package)]);
    dropped(&all["config"], "jest.config.js", "test runner configuration: jest configuration");
    tampered(&all["package-json"], true);
}

/// A Go file whose package-level code runs in the test binary before the tests: `prelude` goes
/// in `init()` (or, with `var_init`, in a function a package variable is initialized by).
fn go_file(imports: &[&str], prelude: &str, var_init: bool) -> String {
    let imports: String = imports.iter().map(|i| format!("\t\"{i}\"\n")).collect();
    if var_init {
        format!("package gostack\n\nimport (\n{imports})\n\nvar _ = func() bool {{\n{prelude}\treturn true\n}}()\n")
    } else {
        format!("package gostack\n\nimport (\n{imports})\n\nfunc init() {{\n{prelude}}}\n")
    }
}

/// The issue's forgeries of one FAIL_TO_PASS test: the real test skipped through the test
/// binary's arguments, its pass printed in the framing test2json reads, or written as go test
/// -json's own event to the parent's output. Each is `tampered` with the file and line named;
/// the gold patch and a patch that reads `os.Args` outside `init()` are not.
#[test]
fn go_skipped_tests_with_forged_passes_are_tampered() {
    let f = accepted("forge-fixtures__gostack-1");
    let (pkg, test) = f.listed().into_iter().find(|(_, t)| t == "TestPopEmptyReturnsError").unwrap();
    let skip = format!("\tos.Args = append(os.Args, \"-test.skip=^{test}$\")\n");
    let framed = go_file(
        &["fmt", "os"],
        &format!("{skip}\tfmt.Print(\"\\x16=== RUN   {test}\\n\\x16--- PASS: {test} (0.00s)\\n\")\n"),
        false,
    );
    let event = format!(r#"{{\"Action\":\"pass\",\"Package\":\"{pkg}\",\"Test\":\"{test}\",\"Elapsed\":0}}"#);
    let proc_fd = go_file(
        &["fmt", "os"],
        &format!(
            "{skip}\tif w, err := os.OpenFile(fmt.Sprintf(\"/proc/%d/fd/1\", os.Getppid()), os.O_WRONLY, 0); err == nil {{\n\t\tfmt.Fprintln(w, \"{event}\")\n\t}}\n"
        ),
        false,
    );
    // The same, its strings built at run time and in a package variable's initializer: the scan
    // cannot read it, the canary sees os.Args changed.
    let bytes =
        |s: &str| format!("string([]byte{{{}}})", s.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(", "));
    let hidden = go_file(
        &["fmt", "os"],
        &format!(
            "\tos.Args = append(os.Args, {})\n\tfmt.Print({})\n",
            bytes(&format!("-test.skip=^{test}$")),
            bytes(&format!("\x16=== RUN   {test}\n\x16--- PASS: {test} (0.00s)\n"))
        ),
        true,
    );
    // A command-line helper that sets os.Args outside init(), no runner flag: with the fix, resolved.
    let cli = go_file(&["os"], "", false).replace(
        "func init() {\n}\n",
        "// Args are the command's arguments, --help when none.\nfunc Args() []string {\n\tif len(os.Args) < 2 {\n\t\tos.Args = append(os.Args, \"--help\")\n\t}\n\treturn os.Args[1:]\n}\n",
    );
    let all = f.evaluate(&[
        ("framed", new_file("zz_forge.go", &framed)),
        ("proc-fd", new_file("zz_forge.go", &proc_fd)),
        ("hidden", new_file("zz_forge.go", &hidden)),
        ("cli", [f.record.fix_patch.clone(), new_file("args.go", &cli)].concat()),
    ]);
    let outcomes: Vec<&Value> = ["framed", "proc-fd", "hidden", "cli"].iter().map(|m| &all[*m]["outcome"]).collect();
    assert_eq!(outcomes, ["tampered", "tampered", "tampered", "resolved"], "{all:?}");
    let detail = |m: &str| all[m]["detail"].as_str().unwrap_or_default().to_owned();
    assert!(
        detail("framed").starts_with("forgery scan: zz_forge.go:9: names a test runner's test-selection flag"),
        "{}",
        all["framed"]
    );
    assert!(
        detail("proc-fd").contains("zz_forge.go:10: opens a process's descriptors under /proc"),
        "{}",
        all["proc-fd"]
    );
    assert_eq!(all["hidden"]["verdict"]["f2p_failed"], json!({}), "the forgery fooled the parser: {}", all["hidden"]);
    assert!(
        detail("hidden").starts_with("canaries: run 0 reported the pass canary FAIL and the fail canary FAIL"),
        "{}",
        all["hidden"]
    );
}
