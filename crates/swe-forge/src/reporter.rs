//! Progress bars (indicatif) for validation; the libraries only see the `Reporter` trait.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_validate::{Reporter, Step};

/// Set by `-q`: no progress bars and no per-instance lines.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Hides every progress display of this process (`-q`).
pub fn set_quiet() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub struct Bars {
    multi: MultiProgress,
    total: ProgressBar,
    spinners: Mutex<HashMap<String, ProgressBar>>,
}

impl Bars {
    pub fn new(count: usize) -> Bars {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        if std::env::var_os("SWE_FORGE_NO_PROGRESS").is_some() || QUIET.load(std::sync::atomic::Ordering::Relaxed) {
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        let total = multi.add(ProgressBar::new(count as u64));
        total.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} instances, {eta_left} {msg}")
                .expect("static template")
                .with_key("eta_left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&eta_text(s.pos(), s.len().unwrap_or(0), s.elapsed()));
                })
                .progress_chars("=> "),
        );
        total.enable_steady_tick(Duration::from_millis(500));
        Bars { multi, total, spinners: Mutex::new(HashMap::new()) }
    }

    pub fn finish(&self) {
        self.total.finish();
    }

    /// An instance is done: its spinner goes, a line says how it ended, the total moves on.
    pub fn done(&self, instance: &str, message: &str) {
        if let Some(bar) = self.spinners.lock().unwrap_or_else(|e| e.into_inner()).remove(instance) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
        // Messages quote logs, patches and names from the records: no control characters.
        let _ = self.multi.println(crate::terminal::clean(&format!("  {instance} {message}")));
        self.total.inc(1);
    }
}

impl Reporter for Bars {
    fn note(&self, message: &str) {
        let _ = self.multi.println(crate::terminal::clean(&format!("  {message}")));
    }

    fn step(&self, instance: &str, step: Step) {
        let mut spinners = self.spinners.lock().unwrap_or_else(|e| e.into_inner());
        let bar = spinners.entry(instance.to_owned()).or_insert_with(|| {
            let b = self.multi.add(ProgressBar::new_spinner());
            b.set_style(
                ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})").expect("static template"),
            );
            b.set_prefix(instance.to_owned());
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        bar.set_message(step.to_string());
    }

    fn finished(&self, inst: &Instance) {
        let verdict = match inst.status() {
            ValidationStatus::Accepted => {
                format!("accepted ({} FAIL_TO_PASS, {} PASS_TO_PASS)", inst.fixed_tests.len(), inst.p2p_tests.len())
            }
            _ => {
                let reasons: Vec<&str> =
                    inst.swe_forge.iter().flat_map(|m| m.rejections.iter().map(|r| r.reason.as_str())).collect();
                format!("rejected: {}", reasons.join(", "))
            }
        };
        self.done(&inst.instance_id, &verdict);
    }
}

/// The time left, from the mean time per finished instance so far (instances run `jobs` at a
/// time, so the mean is the wall time per instance as the run goes): `ETA ?` before the first
/// one finishes, `ETA 4m 10s` after, `done` at the end.
fn eta_text(done: u64, total: u64, elapsed: Duration) -> String {
    if done >= total {
        return "done".into();
    }
    if done == 0 {
        return "ETA ?".into();
    }
    let left = elapsed.as_secs_f64() / done as f64 * (total - done) as f64;
    let secs = left.round() as u64;
    match (secs / 3600, secs / 60 % 60, secs % 60) {
        (0, 0, s) => format!("ETA {s}s"),
        (0, m, s) => format!("ETA {m}m {s:02}s"),
        (h, m, _) => format!("ETA {h}h {m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_is_the_mean_time_per_instance_times_those_left() {
        assert_eq!(eta_text(0, 10, Duration::from_secs(30)), "ETA ?");
        assert_eq!(eta_text(2, 10, Duration::from_secs(30)), "ETA 2m 00s");
        assert_eq!(eta_text(3, 4, Duration::from_secs(6)), "ETA 2s");
        assert_eq!(eta_text(1, 100, Duration::from_secs(120)), "ETA 3h 18m");
        assert_eq!(eta_text(4, 4, Duration::from_secs(6)), "done");
    }
}
