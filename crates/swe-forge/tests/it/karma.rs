//! A karma suite with no override, on the real engine: a project of the PhantomJS era (its
//! configuration lists `karma-phantomjs-launcher` among its plugins and runs in PhantomJS) is
//! detected as `js-karma`; the setup survives phantomjs-prebuilt's install script (it downloads
//! the browser from a host this network cannot reach), adds karma-chrome-launcher, and the runs
//! use Debian's Chromium, headless, with one status per test from the JUnit XML of the reporter
//! the recipe inlines (`<describe> > … > <title>`).

use std::collections::BTreeSet;

use crate::environments::in_image;
use crate::toolchains::{accepted, fixture, instance};

const PACKAGE: &str = r#"{
  "name": "karma-math",
  "version": "1.0.0",
  "scripts": { "test": "karma start karma.conf.js --single-run" },
  "devDependencies": {
    "karma": "6.4.2",
    "karma-mocha": "2.0.1",
    "karma-phantomjs-launcher": "1.0.4",
    "mocha": "10.2.0"
  }
}
"#;

const CONFIG: &str = "module.exports = function (config) {
  config.set({
    frameworks: ['mocha'],
    files: ['src/*.js', 'test/*.test.js'],
    plugins: ['karma-mocha', 'karma-phantomjs-launcher'],
    browsers: ['PhantomJS'],
    reporters: ['progress']
  });
};
";

const MUL: &str = "function mul(a, b) {\n  return a * b;\n}\n";

const MUL_TEST: &str = "describe('math', function () {
  describe('mul', function () {
    it('doubles', function () {
      if (mul(2, 3) !== 6) throw new Error('mul(2, 3) = ' + mul(2, 3));
    });
    it('keeps zero', function () {
      if (mul(0, 7) !== 0) throw new Error('mul(0, 7) = ' + mul(0, 7));
    });
  });
});
";

const SUM_TEST: &str = "describe('sum', function () {
  it('adds', function () {
    if (sum(2, 3) !== 5) throw new Error('sum(2, 3) = ' + sum(2, 3) + ' in ' + navigator.userAgent);
  });
});
";

fn sum(body: &str) -> String {
    format!("function sum(a, b) {{\n  return {body};\n}}\n")
}

#[test]
fn a_phantomjs_karma_suite_runs_in_headless_chromium_with_a_status_per_test() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let base_sum = sum("a - b");
    let fx = fixture(
        &repos.join("forge-fixtures/karmamath"),
        "2024-01-01T00:00:00Z",
        &[
            ("package.json", PACKAGE),
            ("karma.conf.js", CONFIG),
            ("src/mul.js", MUL),
            ("src/sum.js", &base_sum),
            ("test/mul.test.js", MUL_TEST),
        ],
        &[("test/sum.test.js", SUM_TEST)],
        &[("src/sum.js", &sum("a + b"))],
    );
    let inst = instance("forge-fixtures", "karmamath", 3, fx);
    let out = crate::environments::validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    let keys = |m: &std::collections::BTreeMap<String, _>| m.keys().cloned().collect::<BTreeSet<String>>();
    assert_eq!(keys(&r.f2p_tests), BTreeSet::from(["sum > adds".to_owned()]), "{r:?}");
    assert_eq!(
        keys(&r.p2p_tests),
        BTreeSet::from(["math > mul > doubles".to_owned(), "math > mul > keeps zero".to_owned()]),
        "{r:?}"
    );
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert_eq!(prov.recipe, "js-karma", "{prov:?}");

    // In the image: the committed files unchanged (the karma configuration the runs use is outside),
    // PhantomJS's package without its browser, the launcher the setup added, and Chromium.
    let image = r.swe_forge.as_ref().unwrap().image.clone().unwrap();
    let (found, code) = in_image(
        &image,
        "cd /testbed && git status --porcelain --untracked-files=no | wc -l; ls node_modules/phantomjs-prebuilt/lib/phantom 2>&1 | grep -c 'No such file'; \
         test -d node_modules/karma-chrome-launcher && echo launcher; chromium --version | cut -d' ' -f1",
    );
    assert_eq!(code, Some(0), "{found}");
    assert_eq!(found.lines().collect::<Vec<_>>(), ["0", "1", "launcher", "Chromium"], "{found}");
}
