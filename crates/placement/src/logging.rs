//! The service's log: oslo.log's text lines (as upstream Placement writes
//! them) or one JSON object per line, at info or debug level, appended to
//! a file (`log_file`) and/or written to standard error (`use_stderr`),
//! else to standard output, as oslo.log chooses.
//!
//! The text form is oslo.log's default: `logging_context_format_string`
//! for a line with a request context (the request log), and
//! `logging_default_format_string` for one without:
//!
//! ```text
//! 2026-11-24 07:41:10.162 16449 INFO placement.requestlog [None req-74c3b9ff-763b-4bb2-801a-b3adaa0869c9 admin admin - - - -] 127.0.0.1 "GET /resource_providers" status: 200 len: 26 microversion: 1.0
//! 2026-11-24 07:41:12.020 16449 WARNING placement.objects.allocation [-] allocation write gave up after every try met a concurrent writer tries=10
//! ```
//!
//! The time is local, with the offset the process had when it started;
//! the logger name is the event's target with `.` for `::`; structured
//! fields other than the context's follow the message as `key=value`.
//! `RUST_LOG`, when set, replaces the level settings (`EnvFilter` syntax).
//!
//! A request only formats its line and copies it into a buffer; a
//! thread of the log's own (one per destination) writes the buffer out,
//! a few milliseconds' worth of lines in one write, so that a
//! slow disk or a full pipe to the service manager does not hold the
//! request. The buffer is bounded: when it is full, the request waits for
//! room rather than drop its line. What is buffered is written before
//! the process ends ([`Batches`]).

mod batch;

pub use batch::Batches;
use batch::LogOutput;

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context as _;
use time::{OffsetDateTime, UtcOffset};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::config::Config;

/// The levels when `RUST_LOG` is not set: info (the request log) and
/// above, or debug with `[DEFAULT] debug`, keeping the database driver and
/// the HTTP libraries at their quieter levels as oslo.log's
/// `default_log_levels` does for upstream's libraries.
fn default_filter(debug: bool) -> &'static str {
    if debug {
        "debug,sqlx=warn,hyper=info,hyper_util=info,h2=info,rustls=info,reqwest=info,tower=info,moka=info"
    } else {
        "info,sqlx=warn"
    }
}

/// Installs the log of `config` as the process's subscriber. Call it
/// before any other thread starts: the local time offset can only be read
/// then (elsewhere the lines are in UTC).
///
/// # Errors
///
/// Fails when the log file cannot be opened for appending, or `RUST_LOG`
/// is not a valid filter.
pub fn init(config: &Config) -> anyhow::Result<Batches> {
    let offset = UtcOffset::current_local_offset().unwrap_or(UtcOffset::UTC);
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => EnvFilter::try_new(&directives)
            .with_context(|| format!("RUST_LOG={directives} is not a valid log filter"))?,
        _ => EnvFilter::new(default_filter(config.debug)),
    };
    let mut writers = Batches::default();
    let started = "cannot start the log's writer thread";
    if let Some(path) = &config.log_file {
        writers.add(open(path)?, "log-file").context(started)?;
    }
    match (&config.log_file, config.log_stderr) {
        (_, true) => writers
            .add(std::io::stderr(), "log-stderr")
            .context(started)?,
        (None, false) => writers
            .add(std::io::stdout(), "log-stdout")
            .context(started)?,
        (Some(_), false) => {}
    }
    let writer = writers.writer();
    let default_levels = std::env::var_os("RUST_LOG").is_none_or(|v| v.is_empty());
    let format = OsloFormat::new(offset);
    let direct = (!config.log_json && default_levels).then(|| RequestLines {
        format: format.clone(),
        output: writer.clone(),
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer);
    let installed = if config.log_json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.event_format(format).try_init()
    };
    // Another subscriber (an embedding program's) stays in place, and
    // then takes the request log's lines too.
    if let (Ok(()), Some(direct)) = (installed, direct) {
        let _ = REQUEST_LINES.set(direct);
    }
    Ok(writers)
}

fn open(path: &Path) -> anyhow::Result<std::fs::File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open the log file {} for appending", path.display()))
}

/// oslo.log's default text lines.
#[derive(Clone, Debug)]
pub(crate) struct OsloFormat {
    offset: UtcOffset,
    /// The process id between spaces, as every line has it.
    pid: String,
}

/// The request context of a line: the global request id, the request id
/// and the user identity.
#[derive(Clone, Copy, Debug)]
struct Context<'a> {
    global_request_id: &'a str,
    request_id: &'a str,
    user_identity: &'a str,
}

impl OsloFormat {
    pub(crate) fn new(offset: UtcOffset) -> Self {
        OsloFormat {
            offset,
            pid: format!(" {} ", std::process::id()),
        }
    }

    fn write_line(
        &self,
        out: &mut impl fmt::Write,
        now: OffsetDateTime,
        level: Level,
        target: &str,
        fields: &Fields,
    ) -> fmt::Result {
        let context = fields.request_id.get().map(|request_id| Context {
            global_request_id: fields.global_request_id.get().unwrap_or("None"),
            request_id,
            user_identity: fields.user_identity.get().unwrap_or("- - - - - -"),
        });
        self.write_parts(out, now, level, target, context, &fields.message)?;
        out.write_str(&fields.rest)?;
        out.write_char('\n')
    }

    /// A line up to the end of its message.
    fn write_parts(
        &self,
        out: &mut impl fmt::Write,
        now: OffsetDateTime,
        level: Level,
        target: &str,
        context: Option<Context<'_>>,
        message: &str,
    ) -> fmt::Result {
        write_time(out, now.to_offset(self.offset))?;
        out.write_str(&self.pid)?;
        out.write_str(level_name(level))?;
        out.write_char(' ')?;
        if target.as_bytes().contains(&b':') {
            for (i, part) in target.split("::").enumerate() {
                if i > 0 {
                    out.write_char('.')?;
                }
                out.write_str(part)?;
            }
        } else {
            out.write_str(target)?;
        }
        match context {
            Some(context) => {
                out.write_str(" [")?;
                out.write_str(context.global_request_id)?;
                out.write_char(' ')?;
                out.write_str(context.request_id)?;
                out.write_char(' ')?;
                out.write_str(context.user_identity)?;
                out.write_str("] ")?;
            }
            None => out.write_str(" [-] ")?,
        }
        out.write_str(message)
    }
}

/// The request log's lines, written straight to the log's destinations
/// in the text form: the same bytes the subscriber would write, without
/// the event's dispatch, field records and copies, which cost a light
/// request more than the rest of its line (BENCHMARKS.md, "The request
/// log"). Used when the log is the text one at its default levels (with
/// `RUST_LOG` set, every line goes through the subscriber and its filter).
#[derive(Debug)]
pub(crate) struct RequestLines {
    format: OsloFormat,
    output: LogOutput,
}

static REQUEST_LINES: OnceLock<RequestLines> = OnceLock::new();

/// The direct writer of the request log's lines, when [`init`] set one.
pub(crate) fn request_lines() -> Option<&'static RequestLines> {
    REQUEST_LINES.get()
}

impl RequestLines {
    /// Writes one info line of the request log.
    pub(crate) fn write(
        &self,
        global_request_id: &str,
        request_id: &str,
        user_identity: &str,
        message: &str,
    ) {
        thread_local! {
            static LINE: RefCell<String> = RefCell::default();
        }
        let context = Context {
            global_request_id,
            request_id,
            user_identity,
        };
        let now = OffsetDateTime::now_utc();
        LINE.with(|kept| {
            with_reused(kept, |line| {
                line.clear();
                let target = crate::requestlog::TARGET;
                if self
                    .format
                    .write_parts(line, now, Level::INFO, target, Some(context), message)
                    .is_ok()
                {
                    line.push('\n');
                    let _ = (&self.output).write_all(line.as_bytes());
                }
            });
        });
    }
}

/// Runs `f` on the value a thread keeps in `kept`, or on a new one when
/// that is in use (a line logged while one is formatted, from a field's
/// `Debug`, say).
fn with_reused<T: Default, R>(kept: &RefCell<T>, f: impl FnOnce(&mut T) -> R) -> R {
    match kept.try_borrow_mut() {
        Ok(mut value) => f(&mut value),
        Err(_) => f(&mut T::default()),
    }
}

/// `YYYY-MM-DD HH:MM:SS.mmm`, digit by digit: the formatting machinery
/// with its padding costs more than the rest of the line's head.
fn write_time(out: &mut impl fmt::Write, now: OffsetDateTime) -> fmt::Result {
    let Ok(year) = u32::try_from(now.year()) else {
        return write!(out, "{now}");
    };
    if year > 9999 {
        return write!(out, "{now}");
    }
    let mut text = *b"0000-00-00 00:00:00.000";
    let mut put = |at: std::ops::Range<usize>, mut n: u32| {
        for digit in text[at].iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0..4, year);
    put(5..7, u32::from(u8::from(now.month())));
    put(8..10, u32::from(now.day()));
    put(11..13, u32::from(now.hour()));
    put(14..16, u32::from(now.minute()));
    put(17..19, u32::from(now.second()));
    put(20..23, u32::from(now.millisecond()));
    out.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
}

/// Python's level names.
fn level_name(level: Level) -> &'static str {
    match level {
        Level::ERROR => "ERROR",
        Level::WARN => "WARNING",
        Level::INFO => "INFO",
        Level::DEBUG => "DEBUG",
        Level::TRACE => "TRACE",
    }
}

/// An event's message, its context fields, and the others as ` key=value`.
/// One per thread is kept and cleared between events, so that an event
/// allocates nothing once its thread has seen lines as long.
#[derive(Debug, Default)]
struct Fields {
    message: String,
    request_id: Slot,
    global_request_id: Slot,
    user_identity: Slot,
    rest: String,
}

/// A context field: its text, when the event has it.
#[derive(Debug, Default)]
struct Slot {
    text: String,
    set: bool,
}

impl Slot {
    fn set(&mut self, value: &str) {
        self.text.clear();
        self.text.push_str(value);
        self.set = true;
    }

    fn get(&self) -> Option<&str> {
        self.set.then_some(self.text.as_str())
    }
}

impl Fields {
    fn clear(&mut self) {
        self.message.clear();
        self.rest.clear();
        for slot in [
            &mut self.request_id,
            &mut self.global_request_id,
            &mut self.user_identity,
        ] {
            slot.set = false;
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            "request_id" => self.request_id.set(value),
            "global_request_id" => self.global_request_id.set(value),
            "user_identity" => self.user_identity.set(value),
            name => {
                let _ = write!(self.rest, " {name}={value}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            "request_id" | "global_request_id" | "user_identity" => {
                self.record_str(field, &format!("{value:?}"));
            }
            name => {
                let _ = write!(self.rest, " {name}={value:?}");
            }
        }
    }
}

impl<S, N> FormatEvent<S, N> for OsloFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        thread_local! {
            static FIELDS: RefCell<Fields> = RefCell::default();
        }
        let meta = event.metadata();
        let now = OffsetDateTime::now_utc();
        FIELDS.with(|kept| {
            with_reused(kept, |fields| {
                fields.clear();
                event.record(fields);
                self.write_line(&mut writer, now, *meta.level(), meta.target(), fields)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use time::macros::{datetime, offset};

    use super::*;

    fn slot(text: &str) -> Slot {
        let mut slot = Slot::default();
        slot.set(text);
        slot
    }

    fn line(fields: &Fields, level: Level, target: &str) -> String {
        let format = OsloFormat {
            offset: offset!(+1),
            pid: " 16449 ".to_owned(),
        };
        let mut out = String::new();
        format
            .write_line(
                &mut out,
                datetime!(2026-11-24 06:41:10.162_9 UTC),
                level,
                target,
                fields,
            )
            .unwrap();
        out
    }

    #[test]
    fn a_request_line_is_oslo_logs_context_format() {
        let text = line(
            &Fields {
                message:
                    "127.0.0.1 \"GET /resource_providers\" status: 200 len: 26 microversion: 1.0"
                        .to_owned(),
                request_id: slot("req-74c3b9ff-763b-4bb2-801a-b3adaa0869c9"),
                user_identity: slot("admin admin - - - -"),
                ..Fields::default()
            },
            Level::INFO,
            "placement.requestlog",
        );
        assert_eq!(
            text,
            "2026-11-24 07:41:10.162 16449 INFO placement.requestlog [None req-74c3b9ff-763b-4bb2-801a-b3adaa0869c9 admin admin - - - -] 127.0.0.1 \"GET /resource_providers\" status: 200 len: 26 microversion: 1.0\n"
        );
    }

    #[test]
    fn the_time_is_written_digit_by_digit() {
        let mut out = String::new();
        write_time(&mut out, datetime!(2026-01-02 03:04:05.007 UTC)).unwrap();
        assert_eq!(out, "2026-01-02 03:04:05.007");
        out.clear();
        write_time(&mut out, datetime!(0999-12-31 23:59:59.999_9 UTC)).unwrap();
        assert_eq!(out, "0999-12-31 23:59:59.999");
    }

    #[test]
    fn a_line_without_context_has_a_dash_and_its_fields() {
        let text = line(
            &Fields {
                message: "allocation write gave up".to_owned(),
                rest: " tries=10".to_owned(),
                ..Fields::default()
            },
            Level::WARN,
            "placement::objects::allocation",
        );
        assert_eq!(
            text,
            "2026-11-24 07:41:10.162 16449 WARNING placement.objects.allocation [-] allocation write gave up tries=10\n"
        );
    }
}
