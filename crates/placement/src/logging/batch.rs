//! The log's writers: a request appends its formatted line to a buffer
//! in memory, and a thread of the log's own writes the buffer out, a few
//! milliseconds' worth of lines in one write.
//!
//! A line costs its request a copy under a short lock: no system call,
//! no allocation, and no wake-up of the writer but for the first line of
//! a batch. The buffer is bounded: when a destination stops taking lines
//! (a full pipe to a stalled reader), a request that logs waits for room
//! rather than drop its line. [`Batches`] writes what is buffered when it
//! is dropped.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// How much a destination's buffer holds before a line waits for room:
/// about ten thousand request lines, over a third of a second of them at
/// the highest rates measured.
pub(crate) const BUFFERED_BYTES: usize = 2 * 1024 * 1024;

/// How long the writer lets lines gather after the first of a batch.
const GATHER: Duration = Duration::from_millis(5);

/// How long [`Batches`]'s drop waits for each destination to take what is
/// buffered, so that a stalled one cannot hold the exit.
const FINAL_WRITE: Duration = Duration::from_secs(1);

/// One destination's buffer, shared by the loggers and its writer.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// The writer waits here for the first line of a batch.
    first_line: Condvar,
    /// Loggers wait here for room, and the final write for the writer.
    room: Condvar,
}

#[derive(Debug, Default)]
struct State {
    pending: Vec<u8>,
    /// Loggers waiting for room.
    waiting: usize,
    /// Asked to write what is left and stop.
    closing: bool,
    /// The writer has stopped.
    done: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A logger that panicked mid-copy leaves at worst a partial line.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn append(&self, line: &[u8]) {
        let mut state = self.lock();
        while state.pending.len() >= BUFFERED_BYTES && !state.done {
            state.waiting += 1;
            state = self
                .room
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.waiting -= 1;
        }
        if state.done {
            // The process is ending: nothing writes any more.
            return;
        }
        let first = state.pending.is_empty();
        state.pending.extend_from_slice(line);
        drop(state);
        if first {
            self.first_line.notify_one();
        }
    }

    /// The writer's loop: waits for a first line, lets more gather, takes
    /// them all and writes them in one go.
    fn write_out(&self, mut destination: impl Write) {
        let mut batch = Vec::new();
        loop {
            let mut state = self.lock();
            while state.pending.is_empty() && !state.closing {
                state = self
                    .first_line
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            if state.pending.is_empty() {
                state.done = true;
                drop(state);
                self.room.notify_all();
                return;
            }
            if !state.closing {
                drop(state);
                std::thread::sleep(GATHER);
                state = self.lock();
            }
            std::mem::swap(&mut state.pending, &mut batch);
            let waiting = state.waiting > 0;
            drop(state);
            if waiting {
                self.room.notify_all();
            }
            // A destination that refuses a batch (a closed pipe) loses it;
            // the next one is tried again.
            let _ = destination
                .write_all(&batch)
                .and_then(|()| destination.flush());
            batch.clear();
            if batch.capacity() > 2 * BUFFERED_BYTES {
                batch = Vec::new();
            }
        }
    }
}

/// The destinations of the log, each written by its own thread: keep
/// this value until the process ends (its drop writes what is
/// buffered).
#[must_use = "dropping it writes what is buffered and stops the log's writers"]
#[derive(Debug, Default)]
pub struct Batches {
    destinations: Vec<Arc<Shared>>,
    threads: Vec<JoinHandle<()>>,
}

impl Batches {
    /// Adds `destination`, written by a thread named `name`.
    ///
    /// # Errors
    ///
    /// Fails when the thread cannot be started.
    pub(crate) fn add(
        &mut self,
        destination: impl Write + Send + 'static,
        name: &str,
    ) -> io::Result<()> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            first_line: Condvar::new(),
            room: Condvar::new(),
        });
        let writer = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || writer.write_out(destination))?;
        self.destinations.push(shared);
        self.threads.push(thread);
        Ok(())
    }

    /// What the subscriber writes its lines to: every destination.
    pub(crate) fn writer(&self) -> LogOutput {
        LogOutput {
            destinations: self.destinations.clone().into(),
        }
    }
}

impl Drop for Batches {
    fn drop(&mut self) {
        for shared in &self.destinations {
            let mut state = shared.lock();
            state.closing = true;
            drop(state);
            shared.first_line.notify_one();
        }
        let deadline = Instant::now() + FINAL_WRITE;
        for shared in &self.destinations {
            let mut state = shared.lock();
            while !state.done {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                state = shared
                    .room
                    .wait_timeout(state, left)
                    .map_or_else(|e| e.into_inner().0, |(state, _)| state);
            }
        }
        // The threads that finished are joined; one held by a stalled
        // destination is left to end with the process.
        for thread in self.threads.drain(..) {
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

/// The subscriber's writer: each line is appended to every destination's
/// buffer.
#[derive(Clone, Debug)]
pub(crate) struct LogOutput {
    destinations: Arc<[Arc<Shared>]>,
}

impl<'a> MakeWriter<'a> for LogOutput {
    type Writer = &'a LogOutput;

    fn make_writer(&'a self) -> Self::Writer {
        self
    }
}

impl Write for &LogOutput {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        for destination in self.destinations.iter() {
            destination.append(line);
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// A destination that keeps what it is given, and can be held.
    #[derive(Clone, Default)]
    struct Kept {
        bytes: Arc<Mutex<Vec<u8>>>,
        held: Arc<AtomicBool>,
    }

    impl Write for Kept {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            while self.held.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.bytes.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_of_every_thread_arrives_whole_by_the_drop() {
        let (a, b) = (Kept::default(), Kept::default());
        let mut batches = Batches::default();
        batches.add(a.clone(), "test-a").unwrap();
        batches.add(b.clone(), "test-b").unwrap();
        let output = batches.writer();
        std::thread::scope(|scope| {
            for t in 0..4 {
                let output = output.clone();
                scope.spawn(move || {
                    for i in 0..5_000 {
                        let line = format!("thread {t} line {i}\n");
                        (&output).write_all(line.as_bytes()).unwrap();
                    }
                });
            }
        });
        drop(batches);
        for kept in [a, b] {
            let text = String::from_utf8(kept.bytes.lock().unwrap().clone()).unwrap();
            assert_eq!(text.lines().count(), 20_000);
            for t in 0..4 {
                let of_thread: Vec<&str> = text
                    .lines()
                    .filter(|l| l.starts_with(&format!("thread {t} ")))
                    .collect();
                let expected: Vec<String> =
                    (0..5_000).map(|i| format!("thread {t} line {i}")).collect();
                assert_eq!(
                    of_thread, expected,
                    "each thread's lines whole and in order"
                );
            }
        }
    }

    #[test]
    fn a_held_destination_makes_loggers_wait_and_loses_nothing() {
        let kept = Kept::default();
        kept.held.store(true, Ordering::Relaxed);
        let mut batches = Batches::default();
        batches.add(kept.clone(), "test-held").unwrap();
        let output = batches.writer();
        let line = [b'x'; 1023]
            .iter()
            .chain(b"\n")
            .copied()
            .collect::<Vec<u8>>();
        // Four times what the buffer holds: the logger must wait.
        let lines = 4 * BUFFERED_BYTES / line.len();
        let logger = std::thread::spawn({
            let (output, line) = (output.clone(), line.clone());
            move || {
                for _ in 0..lines {
                    (&output).write_all(&line).unwrap();
                }
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(!logger.is_finished(), "the logger waits for room");
        kept.held.store(false, Ordering::Relaxed);
        logger.join().unwrap();
        drop(batches);
        assert_eq!(kept.bytes.lock().unwrap().len(), lines * line.len());
    }
}
