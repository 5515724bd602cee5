//! Where validation left the run logs of a dataset, when `--work-dir` does not say.
//!
//! `validate --out X.jsonl` writes its work folder to `X.work/` (`Path::with_extension("work")`),
//! and `run` to the pipeline's `[validate] work_dir`, else `<output.validated>.work/`; the demo's
//! pipeline names `data/out/demo-work/` next to `demo-validated.jsonl` (every record) and
//! `demo.jsonl` (the accepted ones). So, next to the dataset `D/X.jsonl`, the first of these
//! that holds a `logs/` folder: `X.work`, `X-work`, `X-validated.work`, then, for a dataset
//! named `X-validated.jsonl` (or `X.validated.jsonl`), `X-work` and `X.work`; else the only
//! folder of `D` holding both `logs/` and `state.sqlite` (a work folder of another name).
//!
//! The state store that keeps the dataset's reviews and decisions is found from there
//! ([`store_for`]): review writes to it, and curate, report, publish and export read it.

use std::path::{Path, PathBuf};

/// The work folder validation most likely wrote the dataset's logs to.
pub fn find_work_dir(dataset: &Path) -> Option<PathBuf> {
    let dir = dataset.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    let stem = dataset.file_stem()?.to_string_lossy().into_owned();
    let mut names = vec![format!("{stem}.work"), format!("{stem}-work"), format!("{stem}-validated.work")];
    for suffix in ["-validated", ".validated", "_validated"] {
        if let Some(base) = stem.strip_suffix(suffix) {
            names.extend([format!("{base}-work"), format!("{base}.work")]);
        }
    }
    let has_logs = |p: &Path| p.join("logs").is_dir();
    if let Some(found) = names.iter().map(|n| dir.join(n)).find(|p| has_logs(p)) {
        return Some(found);
    }
    let mut others: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| has_logs(p) && p.join("state.sqlite").is_file())
        .collect();
    (others.len() == 1).then(|| others.remove(0))
}

/// The state store of `dataset`'s reviews and decisions when no `--store` names one:
/// `<dataset>.work/state.sqlite` when that file exists (where earlier versions kept reviews), else
/// `<work_dir>/state.sqlite` (the work folder given, or [`find_work_dir`]'s), else
/// `<dataset>.work/state.sqlite`. Review makes it when missing; the readers of decisions read it
/// only when it exists.
pub fn store_for(dataset: &Path, work_dir: Option<&Path>) -> PathBuf {
    let old_store = dataset.with_extension("work").join("state.sqlite");
    match work_dir {
        _ if old_store.is_file() => old_store,
        Some(w) => w.join("state.sqlite"),
        None => old_store,
    }
}

/// [`store_for`] the work folder found next to `dataset` ([`find_work_dir`]): the store
/// `swe-forge review --dataset <dataset>` writes to when given no `--store` and no `--work-dir`.
pub fn find_store(dataset: &Path) -> PathBuf {
    store_for(dataset, find_work_dir(dataset).as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_folder_is_found_where_validate_and_the_demo_put_it() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let mk = |name: &str| std::fs::create_dir_all(d.join(name).join("logs")).unwrap();
        assert_eq!(find_work_dir(&d.join("demo.jsonl")), None);
        // The demo: demo.jsonl and demo-validated.jsonl beside demo-work/.
        mk("demo-work");
        assert_eq!(find_work_dir(&d.join("demo.jsonl")), Some(d.join("demo-work")));
        assert_eq!(find_work_dir(&d.join("demo-validated.jsonl")), Some(d.join("demo-work")));
        // validate --out validated.jsonl: validated.work/ wins over any other.
        mk("validated.work");
        assert_eq!(find_work_dir(&d.join("validated.jsonl")), Some(d.join("validated.work")));
        // A pipeline's default for output.validated = "x-validated.jsonl", read through x.jsonl.
        mk("x-validated.work");
        assert_eq!(find_work_dir(&d.join("x.jsonl")), Some(d.join("x-validated.work")));
        // Another name: taken when it is the only work folder (logs/ and state.sqlite) there.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("runs/logs")).unwrap();
        assert_eq!(find_work_dir(&other.path().join("data.jsonl")), None, "no state.sqlite");
        std::fs::write(other.path().join("runs/state.sqlite"), b"").unwrap();
        assert_eq!(find_work_dir(&other.path().join("data.jsonl")), Some(other.path().join("runs")));
        std::fs::create_dir_all(other.path().join("more/logs")).unwrap();
        std::fs::write(other.path().join("more/state.sqlite"), b"").unwrap();
        assert_eq!(find_work_dir(&other.path().join("data.jsonl")), None, "two candidates: none chosen");
    }

    #[test]
    fn the_store_is_the_old_one_else_the_work_folder_s() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let dataset = d.join("demo.jsonl");
        assert_eq!(find_store(&dataset), d.join("demo.work/state.sqlite"), "nothing there: where review makes it");
        std::fs::create_dir_all(d.join("demo-work/logs")).unwrap();
        assert_eq!(find_store(&dataset), d.join("demo-work/state.sqlite"));
        assert_eq!(store_for(&dataset, Some(&d.join("elsewhere"))), d.join("elsewhere/state.sqlite"));
        std::fs::create_dir_all(d.join("demo.work")).unwrap();
        std::fs::write(d.join("demo.work/state.sqlite"), b"").unwrap();
        assert_eq!(find_store(&dataset), d.join("demo.work/state.sqlite"), "an existing old store wins");
        assert_eq!(store_for(&dataset, Some(&d.join("elsewhere"))), d.join("demo.work/state.sqlite"));
    }
}
