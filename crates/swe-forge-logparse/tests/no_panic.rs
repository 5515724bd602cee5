//! Robustness: no input, however mangled, makes a parser or the detector panic. Random byte
//! strings come from a seeded xorshift generator, biased towards fragments of real logs so
//! that the parsers' deeper states are reached too.

use std::fs;
use std::path::Path;

use swe_forge_logparse::{Framework, detect, parse};

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
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "é",
    "\u{0}",
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
    for dir in fs::read_dir(root).expect("test_data").flatten() {
        for f in fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|x| x == "log") {
                seeds.push(fs::read(f.path()).expect("readable"));
            }
        }
    }
    let mut rng = XorShift(0x5eed_f0e9_1234_abcd);
    for _ in 0..3000 {
        let input = random_input(&mut rng, &seeds);
        let guess = detect(&input);
        for fw in Framework::ALL {
            let parsed = parse(fw, &input);
            assert!(parsed.tests.keys().all(|id| !id.is_empty()));
        }
        let _ = guess;
    }
}

#[test]
fn pathological_inputs() {
    let long_glue = "test a ... ".repeat(100_000);
    let deep_json = format!("{}{}", "{\"Action\":".repeat(10_000), "\n");
    let ansi_only = "\u{1b}[".repeat(50_000);
    let inputs: [&[u8]; 6] =
        [b"", b"\n\n\n", b"\xff\xfe\xfd", long_glue.as_bytes(), deep_json.as_bytes(), ansi_only.as_bytes()];
    for input in inputs {
        let _ = detect(input);
        for fw in Framework::ALL {
            let _ = parse(fw, input);
        }
    }
}
