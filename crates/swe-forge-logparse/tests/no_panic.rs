//! Robustness: no input, however mangled, makes a parser or the detector panic. Random byte
//! strings come from a seeded xorshift generator, biased towards fragments of real logs so
//! that the parsers' deeper states are reached too.

use std::fs;
use std::path::Path;

use swe_forge_core::TestStatus;
use swe_forge_logparse::{Framework, detect, exit_code_consistent, msb_rollup, parse, parse_files, parse_reader};

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Fragments that steer the parsers into their interesting states.
const FRAGMENTS: &[&str] = &[
    "\n",
    "\r\n",
    "\r",
    "\u{1b}[32m",
    "\u{1b}[",
    "\u{1b}]8;;",
    "\u{1b}(B",
    "test ",
    " ... ",
    " ...",
    "ok",
    "FAILED",
    "ignored, reason",
    "test result: FAILED. 1 passed; 2 failed; 3 ignored; 0 measured",
    "running 3 tests",
    "     Running unittests src/lib.rs (target/debug/deps/x-0123abcd4567ef89)",
    "     Running tests/a.rs (target/debug/deps/a-0123abcd)",
    "     Running unittests src/main.rs (",
    "   Doc-tests x",
    "src/lib.rs - f (line 3) - compile fail",
    " - should panic",
    "error: test failed, to rerun pass `--lib`",
    "process didn't exit successfully",
    "=== RUN   TestA",
    "--- PASS: TestA/sub (0.00s)",
    "--- FAIL: ",
    "--- SKIP: TestB",
    "ok  \texample.com/m/a\t0.01s",
    "FAIL\texample.com/m/a\t0.01s",
    "FAIL\texample.com/m/b [build failed]",
    "?   \texample.com/m/c\t[no test files]",
    "{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"TestA\"}",
    "{\"Action\":\"fail\",\"Package\":\"p\"}",
    "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestA/x\"}",
    "{\"Action\":\"output\",\"Package\":\"p\",\"Output\":\"FAIL\\tp [build failed]\\n\"}",
    "{\"Action\":\"fail\",\"Package\":\"p\",\"FailedBuild\":\"p\"}",
    "{\"Action\":",
    "{ \"type\": \"suite\", \"event\": \"started\", \"test_count\": 3 }",
    "{ \"type\": \"test\", \"event\": \"started\", \"name\": \"tests::a\" }",
    "{ \"type\": \"test\", \"name\": \"tests::a\", \"event\": \"failed\", \"stdout\": \"x\\n\" }",
    "{\"type\":\"test\",\"event\":\"ignored\",\"name\":\"c::b$t#2\"}",
    "{\"type\":\"test\",\"event\":\"timeout\",\"name\":\"c::b@stress-1$\"}",
    "{\"type\":\"suite\",\"event\":\"started\",\"nextest\":{\"crate\":\"c\",\"test_binary\":\"b\",\"kind\":\"bin\"}}",
    "{ \"type\": \"suite\", \"event\": \"ok\", \"passed\": 1, \"failed\": 0, \"ignored\": 0 }",
    "{\"type\":\"bench\",\"name\":\"b\",\"median\":1}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "é",
    "\u{0}",
    "[INFO] Running com.example.CalcTest",
    "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! -- in com.example.CalcTest",
    "[ERROR] com.example.CalcTest.isSmall(int)[3] -- Time elapsed: 0.008 s <<< FAILURE!",
    "adds(com.example.CalcTest)  Time elapsed: 0.01 sec  <<< ERROR!",
    "[WARNING] Flakes: ",
    "Crashed tests:",
    "<?xml version=\"1.0\"?>",
    "<testsuite name=\"s\">",
    "<testcase name=\"isSmall(int)[1]\" classname=\"com.x.T\"",
    "<testcase name=\"a\" classname=\"a\" status=\"notrun\"/>",
    "<failure message=\"x\">",
    "<skipped message=\"Unable to find executable\"/>",
    "<flakyFailure/>",
    "</testcase>",
    "</testsuite>",
    "<![CDATA[",
    "<Catch name=\"x\"><TestCase name=\"t\">",
    "<OverallResult success=\"false\" skips=\"1\"/>",
    "</TestCase>",
    "{\"numFailedTestSuites\":1,\"testResults\":[{\"assertionResults\":[{\"ancestorTitles\":[\"d\"],\"title\":\"t\",\"status\":\"passed\"}],\"name\":\"/testbed/a.test.js\",\"status\":\"passed\"}",
    "{\"numTotalTestSuites\":1,\"testResults\":[",
    "{\n  \"stats\": {},\n  \"passes\": [{\"title\":\"t\",\"fullTitle\":\"d t\",\"file\":\"/testbed/a.js\"}",
    "\"failures\": [",
    "PASS tests/a.test.js",
    "FAIL tests/b.test.js (5.1 s)",
    "  describe block",
    "    ✓ passes (5 ms)",
    "    ✕ fails",
    "    ○ skipped later",
    "  ● d › t",
    " ✓ a.test.ts > d > t 5ms",
    " × a.test.ts > d > t",
    " FAIL  a.test.ts [ a.test.ts ]",
    "  7 passing (16ms)",
    "    1) fails",
    "    - pending",
    "▶ suite",
    "  ✔ inner (1.2ms)",
    "✖ failing tests:",
    "﹣ skipped (0.1ms) # SKIP",
    "ℹ tests 3",
    "TAP version 13",
    "# Subtest: group",
    "    ok 1 - inner",
    "not ok 2 - x # TODO later",
    "  ---",
    "  ...",
    "1..5",
    "Bail out! broken",
    "t/basic.t ..",
    "      Start  1: gtest_all",
    " 1/10 Test  #1: gtest_all ........................***Failed    0.01 sec",
    " 2/10 Test  #2: b ....   Passed    0.00 sec",
    "The following tests FAILED:",
    "\t  2 - gtest_crash (SEGFAULT)",
    "The following tests did not run:",
    "Test project /testbed/build",
    "[ RUN      ] Suite.Test",
    "[       OK ] Suite.Test (0 ms)",
    "[  FAILED  ] Small/P.T/2, where GetParam() = 3 (0 ms)",
    "[ DISABLED ] S.DISABLED_x",
    "-------------------------------------------------------------------------------",
    "...............................................................................",
    "/testbed/t.cpp:4: FAILED:",
    "/testbed/t.cpp:4: PASSED:",
    "test cases: 5 | 2 passed | 3 failed",
    "===============================================================================",
    "PASS: tests/a.sh",
    "XFAIL: tests/t.tap 4 - fourth # TODO someday",
    "ERROR: tests/e.sh",
    "# TOTAL: 11",
];

fn random_input(rng: &mut XorShift, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.below(4) {
        // Raw random bytes.
        0 => {
            let n = rng.below(512);
            out.extend((0..n).map(|_| rng.next() as u8));
        }
        // A mutated real log: random byte flips, deletions and truncation.
        1 if !seeds.is_empty() => {
            out = seeds[rng.below(seeds.len())].clone();
            for _ in 0..rng.below(16) {
                if out.is_empty() {
                    break;
                }
                let i = rng.below(out.len());
                match rng.below(3) {
                    0 => out[i] = rng.next() as u8,
                    1 => {
                        out.remove(i);
                    }
                    _ => out.truncate(i),
                }
            }
        }
        // Fragment soup with random bytes mixed in.
        _ => {
            for _ in 0..rng.below(64) {
                if rng.below(5) == 0 {
                    out.push(rng.next() as u8);
                } else {
                    out.extend_from_slice(FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes());
                }
            }
        }
    }
    out
}

#[test]
fn no_input_makes_a_parser_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data");
    let mut seeds = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for f in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = f.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "log" || x == "xml" || x == "trs") {
                seeds.push(fs::read(&path).expect("readable"));
            }
        }
    }
    seeds.sort();
    let mut rng = XorShift(0x5eed_f0e9_1234_abcd);
    for _ in 0..3000 {
        let input = random_input(&mut rng, &seeds);
        let guess = detect(&input);
        for fw in Framework::ALL {
            let parsed = parse(fw, &input);
            assert!(parsed.tests.keys().all(|id| !id.is_empty()), "{fw}");
            assert!(parsed.tests.values().all(|s| *s != TestStatus::None), "{fw}");
            let _ = msb_rollup(&parsed);
            let _ = exit_code_consistent(&parsed, Some(1));
        }
        if let Some(fw) = guess {
            let files = vec![("a.xml".to_owned(), input.clone()), ("b/c.trs".to_owned(), input)];
            let _ = parse_files(fw, &files);
            let _ = parse_files(Framework::Automake, &files);
            let _ = parse_files(Framework::JunitXml, &files);
        }
    }
}

#[test]
fn pathological_inputs() {
    let long_glue = "test a ... ".repeat(100_000);
    let deep_json = format!("{}{}", "{\"Action\":".repeat(10_000), "\n");
    let ansi_only = "\u{1b}[".repeat(50_000);
    let deep_array = format!("{{\"testResults\":{}", "[".repeat(100_000));
    let deep_xml = "<testsuite>".repeat(50_000);
    let open_json = "{\"passes\":[{\"title\":\"".to_owned() + &"x".repeat(1 << 20);
    let ticks = "✓ ".repeat(100_000);
    let inputs: [&[u8]; 10] = [
        b"",
        b"\n\n\n",
        b"\xff\xfe\xfd",
        long_glue.as_bytes(),
        deep_json.as_bytes(),
        ansi_only.as_bytes(),
        deep_array.as_bytes(),
        deep_xml.as_bytes(),
        open_json.as_bytes(),
        ticks.as_bytes(),
    ];
    for input in inputs {
        let _ = detect(input);
        for fw in Framework::ALL {
            let _ = parse(fw, input);
        }
    }
}

/// `len` bytes of `fill` between `head` and `tail`, made as they are read.
struct Padded {
    head: std::io::Cursor<Vec<u8>>,
    fill: u8,
    left: u64,
    tail: std::io::Cursor<Vec<u8>>,
}

impl std::io::Read for Padded {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.head.read(out)?;
        if n > 0 {
            return Ok(n);
        }
        if self.left > 0 {
            let n = out.len().min(self.left as usize);
            out[..n].fill(self.fill);
            self.left -= n as u64;
            return Ok(n);
        }
        self.tail.read(out)
    }
}

fn padded(head: &str, fill: u8, len: u64, tail: &str) -> Padded {
    Padded {
        head: std::io::Cursor::new(head.as_bytes().to_vec()),
        fill,
        left: len,
        tail: std::io::Cursor::new(tail.as_bytes().to_vec()),
    }
}

#[test]
fn huge_xml_events_are_read_in_bounded_memory() {
    // 40 MiB of output inside one test case, in text and in CDATA: the test still counts.
    let size = 40 << 20;
    for (open, close) in [("<system-out>", "</system-out>"), ("<system-out><![CDATA[", "]]></system-out>")] {
        let head = format!(r#"<testsuite name="s"><testcase classname="p.A" name="big">{open}"#);
        let tail = format!(r#"{close}</testcase><testcase classname="p.A" name="after"/></testsuite>"#);
        let parsed = parse_reader(Framework::JunitXml, padded(&head, b'x', size, &tail));
        assert_eq!(parsed.tests.len(), 2, "{:?}", parsed.warnings);
    }
    // NUL bytes (`/dev/zero`) and one endless attribute: a partial result, no abort.
    let parsed = parse_reader(Framework::JunitXml, padded("", 0, size, ""));
    assert!(parsed.tests.is_empty());
    let head = r#"<testsuite><testcase classname="p.A" name="ok"/><testcase name=""#;
    let parsed = parse_reader(Framework::JunitXml, padded(head, b'y', size, ""));
    assert_eq!(parsed.tests.len(), 1, "{:?}", parsed.warnings);
    let parsed = parse_reader(Framework::Catch2Xml, padded("<Catch><!--", b'-', size, ""));
    assert!(parsed.tests.is_empty());
}
