//! Progress bars (indicatif) for validation; the libraries only see the `Reporter` trait.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
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
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} instances {msg}")
                .expect("static template")
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
