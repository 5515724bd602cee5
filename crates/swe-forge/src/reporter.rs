//! Progress for validation, revalidation and evaluation; the libraries only see the `Reporter`
//! trait. On a terminal: progress bars (indicatif), a spinner per running instance and a line per
//! finished one. Where stderr is no terminal (`nohup`, CI, `| tee`) or bars are turned off
//! (`SWE_FORGE_NO_PROGRESS`): plain lines, one per finished instance (`[k/M] id verdict (Ns)`)
//! and a status line (`N/M done, ETA ...`, what runs) at most every 30 s, so a long run's log
//! grows as it goes. `-q` shows neither.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_validate::{Reporter, Step};

/// Set by `-q`: no progress bars and no per-instance lines.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Hides every progress display of this process (`-q`).
pub fn set_quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Whether `-q` was given.
/// Whether `SWE_FORGE_NO_PROGRESS` (its value `value`) asks for plain lines: any value but an
/// empty one or `0`, which leave the bars on.
fn no_progress_asked(value: Option<std::ffi::OsString>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// The longest a plain run goes without a status line.
pub const STATUS_EVERY: Duration = Duration::from_secs(30);

/// How progress is shown.
enum Display {
    /// Progress bars on a terminal; `end` is where the line feed after the finished bar goes (the
    /// terminal's stderr).
    Bars {
        multi: MultiProgress,
        total: ProgressBar,
        spinners: Mutex<HashMap<String, ProgressBar>>,
        end: Mutex<Box<dyn std::io::Write + Send>>,
    },
    /// Plain lines on stderr.
    Plain(Arc<Plain>),
    /// Nothing (`-q`).
    Hidden,
}

pub struct Bars {
    display: Display,
    /// The thread that prints the plain status line when nothing finishes for [`STATUS_EVERY`].
    ticker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Bars {
    pub fn new(count: usize) -> Bars {
        let display = if quiet() {
            Display::Hidden
        } else if no_progress_asked(std::env::var_os("SWE_FORGE_NO_PROGRESS")) || !std::io::stderr().is_terminal() {
            Display::Plain(Arc::new(Plain::new(count, Instant::now())))
        } else {
            Bars::drawn(count, ProgressDrawTarget::stderr(), Box::new(std::io::stderr()))
        };
        let ticker = match &display {
            Display::Plain(plain) => {
                let plain = plain.clone();
                Some(std::thread::spawn(move || plain.tick_until_finished()))
            }
            _ => None,
        };
        Bars { display, ticker: Mutex::new(ticker) }
    }

    /// The bars of `count` instances drawn on `target`, the line feed after them written to `end`.
    fn drawn(count: usize, target: ProgressDrawTarget, end: Box<dyn std::io::Write + Send>) -> Display {
        {
            let multi = MultiProgress::with_draw_target(target);
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
            Display::Bars { multi, total, spinners: Mutex::new(HashMap::new()), end: Mutex::new(end) }
        }
    }

    pub fn finish(&self) {
        match &self.display {
            Display::Bars { multi, total, end, .. } => {
                // The bar's last line ends in the cursor, not a line feed (indicatif redraws it
                // in place): without one, what comes next (the summary table's header on stdout)
                // would be glued to it. Nothing draws the bars after this.
                total.finish();
                multi.set_draw_target(ProgressDrawTarget::hidden());
                let mut end = end.lock().unwrap_or_else(|e| e.into_inner());
                let _ = end.write_all(b"\n").and_then(|()| end.flush());
            }
            Display::Plain(plain) => {
                plain.finish(Instant::now());
                if let Some(t) = self.ticker.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    let _ = t.join();
                }
            }
            Display::Hidden => {}
        }
    }

    /// An instance is done: its spinner goes, a line says how it ended, the total moves on.
    pub fn done(&self, instance: &str, message: &str) {
        match &self.display {
            Display::Bars { multi, total, spinners, .. } => {
                if let Some(bar) = spinners.lock().unwrap_or_else(|e| e.into_inner()).remove(instance) {
                    bar.finish_and_clear();
                    multi.remove(&bar);
                }
                // Messages quote logs, patches and names from the records: no control characters.
                let _ = multi.println(crate::terminal::clean(&format!("  {instance} {message}")));
                total.inc(1);
            }
            Display::Plain(plain) => plain.done(instance, message, Instant::now()),
            Display::Hidden => {}
        }
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        if let Display::Plain(plain) = &self.display {
            plain.stop();
        }
    }
}

impl Reporter for Bars {
    fn note(&self, message: &str) {
        let message = note_text(message);
        match &self.display {
            Display::Bars { multi, .. } => {
                let _ = multi.println(crate::terminal::clean(&format!("  {message}")));
            }
            Display::Plain(_) => eprintln!("  {}", crate::terminal::clean(&message)),
            Display::Hidden => {}
        }
    }

    fn step(&self, instance: &str, step: Step) {
        match &self.display {
            Display::Bars { multi, spinners, .. } => {
                let mut spinners = spinners.lock().unwrap_or_else(|e| e.into_inner());
                let bar = spinners.entry(instance.to_owned()).or_insert_with(|| {
                    let b = multi.add(ProgressBar::new_spinner());
                    b.set_style(
                        ProgressStyle::with_template("  {spinner} {prefix}: {msg} ({elapsed})")
                            .expect("static template"),
                    );
                    b.set_prefix(instance.to_owned());
                    b.enable_steady_tick(Duration::from_millis(200));
                    b
                });
                bar.set_message(step.to_string());
            }
            Display::Plain(plain) => plain.step(instance, &step.to_string(), Instant::now()),
            Display::Hidden => {}
        }
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

/// Longest line of a note printed (a retry's reason quotes an engine's answer, a build's output).
pub const NOTE_LINE_CAP: usize = 300;

/// A note as printed: each line longer than [`NOTE_LINE_CAP`] characters cut there, saying how
/// much was left out. The record keeps the whole text (a retry's reason in its warnings, a
/// failed setup's output in its build attempts and logs).
fn note_text(message: &str) -> String {
    crate::terminal::cap_lines(message, NOTE_LINE_CAP, "; full text in the record")
}

/// The plain display's state: what finished, what runs and since when, when the last status
/// line went out. Lines go to stderr; [`PlainState`] makes them, so they are tested as text.
struct Plain {
    state: Mutex<PlainState>,
    /// Wakes the ticker when the run ends.
    wake: Condvar,
}

impl Plain {
    fn new(total: usize, now: Instant) -> Plain {
        Plain { state: Mutex::new(PlainState::new(total, now)), wake: Condvar::new() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PlainState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn step(&self, instance: &str, step: &str, now: Instant) {
        self.lock().step(instance, step, now);
    }

    fn done(&self, instance: &str, message: &str, now: Instant) {
        let lines = self.lock().done(instance, message, now);
        for line in lines {
            eprintln!("{}", crate::terminal::clean(&line));
        }
    }

    fn finish(&self, now: Instant) {
        let line = self.lock().finish(now);
        if let Some(line) = line {
            eprintln!("{line}");
        }
        self.wake.notify_all();
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.wake.notify_all();
    }

    /// Prints the status line whenever [`STATUS_EVERY`] passes without one, until the run ends.
    fn tick_until_finished(&self) {
        let mut state = self.lock();
        while !state.stopped {
            let wait = STATUS_EVERY.saturating_sub(state.last_status.elapsed());
            state = self.wake.wait_timeout(state, wait).unwrap_or_else(|e| e.into_inner()).0;
            if state.stopped {
                break;
            }
            if let Some(line) = state.status_due(Instant::now()) {
                eprintln!("{}", crate::terminal::clean(&line));
            }
        }
    }
}

/// What the plain lines are made from.
struct PlainState {
    total: usize,
    finished: usize,
    started: Instant,
    /// Running instances: when each started and the step it is at.
    running: HashMap<String, (Instant, String)>,
    last_status: Instant,
    stopped: bool,
}

impl PlainState {
    fn new(total: usize, now: Instant) -> PlainState {
        PlainState { total, finished: 0, started: now, running: HashMap::new(), last_status: now, stopped: false }
    }

    fn step(&mut self, instance: &str, step: &str, now: Instant) {
        let entry = self.running.entry(instance.to_owned()).or_insert_with(|| (now, String::new()));
        entry.1 = step.to_owned();
    }

    /// The line of a finished instance, then the status line when one is due.
    fn done(&mut self, instance: &str, message: &str, now: Instant) -> Vec<String> {
        let began = self.running.remove(instance).map(|(t, _)| t);
        self.finished += 1;
        let secs = began.map(|t| now.saturating_duration_since(t).as_secs()).unwrap_or(0);
        let mut lines = vec![format!("[{}/{}] {instance} {message} ({secs}s)", self.finished, self.total)];
        lines.extend(self.status_due(now));
        lines
    }

    /// The status line if [`STATUS_EVERY`] passed since the last one.
    fn status_due(&mut self, now: Instant) -> Option<String> {
        if now.saturating_duration_since(self.last_status) < STATUS_EVERY || self.finished >= self.total {
            return None;
        }
        self.last_status = now;
        Some(self.status(now))
    }

    /// `3/20 done, elapsed 5m 10s, ETA 12m 00s; running: a (running the base tests, 40s), b (...)`
    fn status(&self, now: Instant) -> String {
        let elapsed = now.saturating_duration_since(self.started);
        let mut line = format!(
            "{}/{} done, elapsed {}, {}",
            self.finished,
            self.total,
            duration_text(elapsed.as_secs()),
            eta_text(self.finished as u64, self.total as u64, elapsed)
        );
        let mut running: Vec<_> = self.running.iter().collect();
        running.sort_by_key(|(id, (t, _))| (*t, *id));
        if !running.is_empty() {
            let shown: Vec<String> = running
                .iter()
                .map(|(id, (t, step))| {
                    format!("{id} ({step}, {})", duration_text(now.saturating_duration_since(*t).as_secs()))
                })
                .collect();
            line.push_str(&format!("; running: {}", shown.join(", ")));
        }
        line
    }

    /// The closing line, once.
    fn finish(&mut self, now: Instant) -> Option<String> {
        if self.stopped {
            return None;
        }
        self.stopped = true;
        let elapsed = duration_text(now.saturating_duration_since(self.started).as_secs());
        Some(format!("{}/{} done in {elapsed}", self.finished, self.total))
    }
}

/// `45s`, `4m 10s`, `1h 02m`.
fn duration_text(secs: u64) -> String {
    match (secs / 3600, secs / 60 % 60, secs % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
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
    format!("ETA {}", duration_text(left.round() as u64))
}

#[cfg(test)]
mod tests {
    /// `SWE_FORGE_NO_PROGRESS=0` or empty leaves the progress bars on; `1` (any other value) turns
    /// them off (issue #60: `0` turned them off too).
    #[test]
    fn no_progress_is_asked_by_a_value_other_than_empty_or_0() {
        let asked = |v: Option<&str>| no_progress_asked(v.map(std::ffi::OsString::from));
        assert!(!asked(None) && !asked(Some("")) && !asked(Some("0")));
        assert!(asked(Some("1")) && asked(Some("yes")));
    }

    use super::*;

    /// A 6 KB note (an engine's answer quoted by a retry) is printed as one line of at most
    /// [`NOTE_LINE_CAP`] characters and a note of what was left out (issue #60: printed whole).
    #[test]
    fn long_notes_are_cut() {
        let why = format!("the engine failed: {}", "x".repeat(6000));
        let line = note_text(&format!("o__r-1: {why}; retry 1 in 5 s"));
        assert!(line.starts_with("o__r-1: the engine failed: xxx"), "{line}");
        assert!(line.ends_with("… (5743 more bytes; full text in the record)"), "{line}");
        assert_eq!(
            line.chars().count(),
            NOTE_LINE_CAP + "… (5743 more bytes; full text in the record)".chars().count()
        );
        assert_eq!(note_text("building toolchain image t"), "building toolchain image t");
    }

    /// What the terminal shows, as written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl Screen {
        fn put(&self, s: &str) {
            self.0.lock().unwrap().push_str(s);
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.put(s);
            self.put("\n");
            Ok(())
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.put(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.put("\r");
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl std::io::Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.put(&String::from_utf8_lossy(buf));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// On a terminal the finished bar ends its line, so the summary table's header that follows
    /// starts a line of its own (issue #60: glued to the bar).
    #[test]
    fn the_finished_bar_ends_its_line() {
        let screen = Screen::default();
        let display = Bars::drawn(1, ProgressDrawTarget::term_like(Box::new(screen.clone())), Box::new(screen.clone()));
        let bars = Bars { display, ticker: Mutex::new(None) };
        bars.done("o__r-1", "accepted (1 FAIL_TO_PASS, 0 PASS_TO_PASS)");
        bars.finish();
        let shown = screen.0.lock().unwrap().clone();
        let last = shown.trim_end_matches('\n').rsplit(['\n', '\r']).next().unwrap_or_default();
        assert!(last.contains("1/1 instances, done"), "the finished bar is the last line: {shown:?}");
        assert!(shown.ends_with('\n'), "{shown:?}");
        drop(bars);
        assert!(screen.0.lock().unwrap().ends_with('\n'), "nothing is drawn after it");
    }

    #[test]
    fn the_eta_is_the_mean_time_per_instance_times_those_left() {
        assert_eq!(eta_text(0, 10, Duration::from_secs(30)), "ETA ?");
        assert_eq!(eta_text(2, 10, Duration::from_secs(30)), "ETA 2m 00s");
        assert_eq!(eta_text(3, 4, Duration::from_secs(6)), "ETA 2s");
        assert_eq!(eta_text(1, 100, Duration::from_secs(120)), "ETA 3h 18m");
        assert_eq!(eta_text(4, 4, Duration::from_secs(6)), "done");
    }

    #[test]
    fn plain_lines_name_each_finished_instance_and_say_the_status_at_most_every_30_seconds() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut p = PlainState::new(3, t0);
        p.step("a", "building the image", at(0));
        p.step("b", "building the image", at(1));
        p.step("a", "running the base tests", at(5));
        assert_eq!(p.status_due(at(29)), None, "not before 30 s");
        assert_eq!(
            p.status_due(at(30)).as_deref(),
            Some("0/3 done, elapsed 30s, ETA ?; running: a (running the base tests, 30s), b (building the image, 29s)")
        );
        assert_eq!(p.status_due(at(45)), None, "30 s after the last one, not after the start");
        assert_eq!(
            p.done("a", "accepted (1 FAIL_TO_PASS, 2 PASS_TO_PASS)", at(50)),
            ["[1/3] a accepted (1 FAIL_TO_PASS, 2 PASS_TO_PASS) (50s)"]
        );
        assert_eq!(
            p.done("b", "rejected: no_fixed_tests", at(61)),
            ["[2/3] b rejected: no_fixed_tests (60s)".to_owned(), "2/3 done, elapsed 1m 01s, ETA 31s".to_owned(),]
        );
        // An instance that finished without a step (resumed or failed at once) takes no time.
        assert_eq!(p.done("c", "rejected: infrastructure", at(62)), ["[3/3] c rejected: infrastructure (0s)"]);
        assert_eq!(p.status_due(at(200)), None, "nothing runs after the last one");
        assert_eq!(p.finish(at(62)).as_deref(), Some("3/3 done in 1m 02s"));
        assert_eq!(p.finish(at(63)), None, "once");
    }
}
