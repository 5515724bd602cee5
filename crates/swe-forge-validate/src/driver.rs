//! The loop every command that runs instances stands on (validate, run, revalidate, evaluate):
//! work items run `jobs` at a time, and each result goes to a [`Sink`] as soon as it is known,
//! in finishing order. The sink is where results are kept (the state store, an append-only
//! file); its errors are not progress messages: the first one stops the run and is returned, so a
//! result that could not be kept is never reported as done. Progress drawing stays with the
//! [`crate::Reporter`], which cannot fail.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use swe_forge_core::Instance;

use crate::validator::{decided_before_the_engine, infrastructure_failure};
use crate::{Evaluation, Prediction, ValidateError, Validator};

/// One finished work item.
#[derive(Debug)]
pub struct Done<T> {
    /// Its position in the input.
    pub index: usize,
    /// What it gave.
    pub result: T,
    /// Wall time from its start to its end.
    pub elapsed: Duration,
}

/// Where finished results are kept.
pub trait Sink<T> {
    /// Why a result could not be kept.
    type Error;
    /// Keeps one result. An error stops the run.
    fn accept(&mut self, done: Done<T>) -> Result<(), Self::Error>;
}

/// A closure as a sink.
impl<T, E, F: FnMut(Done<T>) -> Result<(), E>> Sink<T> for F {
    type Error = E;
    fn accept(&mut self, done: Done<T>) -> Result<(), E> {
        self(done)
    }
}

/// Why [`Validator::validate_each`] stopped before the end.
#[derive(Debug)]
pub enum Stopped<E> {
    /// The sink could not keep a result.
    Sink(E),
    /// The circuit breaker: the machine is broken ([`ValidateError::MachineBroken`]).
    Machine(ValidateError),
}

/// Runs `work` over `items`, `jobs` at a time (at least one), handing each result to `sink` as
/// it finishes. On the first sink error no further item starts, the items in flight are dropped
/// (their containers are removed when the engine handle drops them, or by `images cleanup`), and
/// the error is returned.
pub async fn drive<I, T, W, F, S>(jobs: usize, items: Vec<I>, work: W, sink: &mut S) -> Result<(), S::Error>
where
    W: Fn(I) -> F,
    F: Future<Output = T>,
    S: Sink<T> + ?Sized,
{
    let work = &work;
    let mut stream = futures_util::stream::iter(items.into_iter().enumerate())
        .map(|(index, item)| async move {
            let started = Instant::now();
            let result = work(item).await;
            Done { index, result, elapsed: started.elapsed() }
        })
        .buffer_unordered(jobs.max(1));
    while let Some(done) = stream.next().await {
        sink.accept(done)?;
    }
    Ok(())
}

impl Validator {
    /// Validates `instances` (`settings.jobs` at a time), each result to `sink` as it finishes
    /// (after the reporter heard of it).
    ///
    /// A circuit breaker: when `settings.infra_breaker` instances in a row end in an
    /// infrastructure failure (instances rejected before reaching the engine, for their
    /// repository, patches or recipe, neither count nor break the row), the machine is broken
    /// (engine, network, registry), not the repositories, and going on would fail every instance
    /// the same way. Then the instances under way are dropped, this run's containers removed, and
    /// [`Stopped::Machine`] returned. The failures that tripped it are held back (never given to
    /// the sink), so they and every instance not finished stay undecided for the next run.
    pub async fn validate_each<S>(&self, instances: Vec<Instance>, sink: &mut S) -> Result<(), Stopped<S::Error>>
    where
        S: Sink<Instance> + ?Sized,
    {
        let breaker = self.settings.infra_breaker as usize;
        let mut held: Vec<Done<Instance>> = Vec::new();
        let mut keep = |done: Done<Instance>| -> Result<(), Stopped<S::Error>> {
            if breaker > 0 && infrastructure_failure(&done.result).is_some() {
                held.push(done);
                if held.len() >= breaker {
                    let cause = held.last().and_then(|d| infrastructure_failure(&d.result)).unwrap_or_default();
                    let cause = cause.lines().next().unwrap_or_default().to_owned();
                    let instances = held.iter().map(|d| d.result.instance_id.clone()).collect();
                    return Err(Stopped::Machine(ValidateError::MachineBroken { instances, cause }));
                }
                return Ok(());
            }
            // Only an instance that got as far as the engine shows the machine works.
            if !decided_before_the_engine(&done.result) {
                for h in held.drain(..) {
                    self.reporter.finished(&h.result);
                    sink.accept(h).map_err(Stopped::Sink)?;
                }
            }
            self.reporter.finished(&done.result);
            sink.accept(done).map_err(Stopped::Sink)
        };
        let ended = drive(self.settings.jobs, instances, |inst| self.validate(inst), &mut keep).await;
        if let Err(Stopped::Machine(_)) = &ended {
            self.reporter.note("stopping: the machine is broken, removing this run's containers");
            if swe_forge_docker::run_created_containers() {
                let cleanup = self.engine.remove_run_containers();
                match tokio::time::timeout(Duration::from_secs(30), cleanup).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => tracing::warn!("removing this run's containers after stopping: {e}"),
                    Err(_) => tracing::warn!("removing this run's containers after stopping: gave up after 30 s"),
                }
            }
            return ended;
        }
        ended?;
        for h in held {
            self.reporter.finished(&h.result);
            sink.accept(h).map_err(Stopped::Sink)?;
        }
        Ok(())
    }

    /// Evaluates each prediction on its instance (`settings.jobs` at a time), logs under
    /// `out_dir`, each result to `sink` as it finishes.
    pub async fn evaluate_each<S>(
        &self,
        work: Vec<(&Instance, &Prediction)>,
        out_dir: &Path,
        sink: &mut S,
    ) -> Result<(), S::Error>
    where
        S: Sink<Evaluation> + ?Sized,
    {
        // The evaluation that starts when this one ends is about `jobs` places further on: its
        // image is started ahead during this one's last run.
        let jobs = self.settings.jobs.max(1);
        let next: Vec<Option<String>> = (0..work.len())
            .map(|i| work.get(i + jobs).and_then(|(next, _)| next.swe_forge.as_ref()?.image.clone()))
            .collect();
        let items = work.into_iter().zip(next).collect();
        drive(jobs, items, |((inst, pred), next)| self.evaluate_before(inst, pred, out_dir, next), sink).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }

    #[test]
    fn results_reach_the_sink_as_they_finish_with_their_index() {
        let mut seen = Vec::new();
        let r: Result<(), ()> = block_on(drive(
            3,
            vec![30u64, 10, 20],
            |ms| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ms
            },
            &mut |d: Done<u64>| {
                seen.push((d.index, d.result));
                Ok(())
            },
        ));
        r.unwrap();
        assert_eq!(seen, [(1, 10), (2, 20), (0, 30)]);
    }

    #[test]
    fn the_first_sink_error_stops_the_run() {
        let started = std::sync::Mutex::new(Vec::new());
        let mut kept = Vec::new();
        let r = block_on(drive(
            1,
            (0..10).collect(),
            |i: u32| {
                started.lock().unwrap().push(i);
                async move { i }
            },
            &mut |d: Done<u32>| {
                if d.result == 2 {
                    return Err(format!("disk full at {}", d.result));
                }
                kept.push(d.result);
                Ok(())
            },
        ));
        assert_eq!(r.unwrap_err(), "disk full at 2");
        assert_eq!(kept, [0, 1]);
        // With one job at a time, nothing after the failing item began.
        assert_eq!(*started.lock().unwrap(), [0, 1, 2]);
    }
}
