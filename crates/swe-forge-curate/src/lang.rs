//! The language of a record, for the card and the language splits: its `lang` when it has one
//! (validation sets it from the recipe), else the language most files of its fix and test patches
//! are written in (by extension; a `.h` header counts as C unless C++ files are there too), else
//! the language of the recipe its provenance names, else `unknown`. Published Multi-SWE-bench
//! records often carry no `lang`. Names are the recipes' (`javascript`, `typescript`, `cpp`).

use swe_forge_core::{Instance, PatchShape};

/// Languages in tie-break order, with their file extensions.
const EXTENSIONS: [(&str, &[&str]); 7] = [
    ("rust", &["rs"]),
    ("go", &["go"]),
    ("java", &["java"]),
    ("typescript", &["ts", "tsx", "mts", "cts"]),
    ("javascript", &["js", "jsx", "mjs", "cjs"]),
    ("cpp", &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "ipp"]),
    ("c", &["c"]),
];

/// The record's language (see the module docs).
pub fn language(inst: &Instance) -> String {
    if let Some(lang) = inst.lang.as_deref().filter(|l| !l.is_empty()) {
        return lang.to_owned();
    }
    from_patches(&[&inst.fix_patch, &inst.test_patch])
        .or_else(|| from_recipe(inst.swe_forge.as_ref()?.provenance.as_ref()?.recipe.as_str()))
        .unwrap_or("unknown")
        .to_owned()
}

fn from_patches(diffs: &[&str]) -> Option<&'static str> {
    let mut counts = [0usize; EXTENSIONS.len()];
    let mut headers = 0;
    for diff in diffs {
        for file in PatchShape::of(diff).files {
            let name = file.rsplit('/').next().unwrap_or(&file);
            let Some((_, ext)) = name.rsplit_once('.') else { continue };
            let ext = ext.to_ascii_lowercase();
            if ext == "h" {
                headers += 1;
            } else if let Some(i) = EXTENSIONS.iter().position(|(_, exts)| exts.contains(&ext.as_str())) {
                counts[i] += 1;
            }
        }
    }
    let cpp = EXTENSIONS.iter().position(|(l, _)| *l == "cpp").unwrap_or(0);
    let c = EXTENSIONS.iter().position(|(l, _)| *l == "c").unwrap_or(0);
    counts[if counts[cpp] > 0 { cpp } else { c }] += headers;
    let best = counts.iter().copied().max().filter(|&n| n > 0)?;
    EXTENSIONS.iter().zip(counts).find(|(_, n)| *n == best).map(|((lang, _), _)| *lang)
}

/// `go`, `rust`, `java-maven`, `js-jest`, `c-cmake`, ...: the part before the first `-`.
fn from_recipe(recipe: &str) -> Option<&'static str> {
    match recipe.split('-').next()? {
        "go" => Some("go"),
        "rust" => Some("rust"),
        "java" => Some("java"),
        "js" => Some("javascript"),
        "ts" => Some("typescript"),
        "c" => Some("c"),
        "cpp" => Some("cpp"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(lang: Option<&str>, fix: &[&str], test: &[&str], recipe: Option<&str>) -> Instance {
        let diff = |files: &[&str]| -> String {
            files
                .iter()
                .map(|f| format!("diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-a\n+b\n"))
                .collect()
        };
        let mut r = swe_forge_test_support::record("o", "r", 1);
        (r.fix_patch, r.test_patch, r.lang) = (diff(fix), diff(test), lang.map(str::to_owned));
        if let Some(name) = recipe {
            let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted);
            meta.provenance = Some(swe_forge_core::Provenance { recipe: name.into(), ..Default::default() });
            r.swe_forge = Some(meta);
        }
        r
    }

    #[test]
    fn lang_then_patch_extensions_then_recipe() {
        assert_eq!(language(&record(Some("go"), &["a.rs"], &[], None)), "go");
        assert_eq!(language(&record(None, &["src/lib.rs", "README.md"], &[], None)), "rust");
        assert_eq!(language(&record(None, &["src/a.js", "src/b.js", "types.ts"], &[], None)), "javascript");
        assert_eq!(language(&record(None, &["lib/zstd.h", "lib/zstd.c"], &["tests/fuzz.c"], None)), "c");
        assert_eq!(language(&record(None, &["httplib.h"], &["test/test.cc"], None)), "cpp", "a header with C++ tests");
        assert_eq!(language(&record(None, &["include/JSON.HPP"], &[], None)), "cpp");
        assert_eq!(language(&record(None, &["docs/a.md"], &[], Some("java-maven"))), "java");
        assert_eq!(language(&record(None, &["Makefile"], &[], Some("js-vitest"))), "javascript");
        assert_eq!(language(&record(None, &["Makefile"], &[], Some("custom"))), "unknown");
        assert_eq!(language(&record(None, &[], &[], None)), "unknown");
    }
}
