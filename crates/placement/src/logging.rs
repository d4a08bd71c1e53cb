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

use std::fmt::{self, Write as _};
use std::fs::OpenOptions;
use std::path::Path;

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
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer);
    let installed = if config.log_json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.event_format(OsloFormat::new(offset)).try_init()
    };
    // Another subscriber (an embedding program's) stays in place.
    let _ = installed;
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
#[derive(Debug)]
pub(crate) struct OsloFormat {
    offset: UtcOffset,
    pid: u32,
}

impl OsloFormat {
    pub(crate) fn new(offset: UtcOffset) -> Self {
        OsloFormat {
            offset,
            pid: std::process::id(),
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
        let now = now.to_offset(self.offset);
        write!(
            out,
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} {} {} ",
            now.year(),
            u8::from(now.month()),
            now.day(),
            now.hour(),
            now.minute(),
            now.second(),
            now.millisecond(),
            self.pid,
            level_name(level),
        )?;
        for (i, part) in target.split("::").enumerate() {
            if i > 0 {
                out.write_char('.')?;
            }
            out.write_str(part)?;
        }
        match &fields.request_id {
            Some(request_id) => write!(
                out,
                " [{} {} {}] ",
                fields.global_request_id.as_deref().unwrap_or("None"),
                request_id,
                fields.user_identity.as_deref().unwrap_or("- - - - - -"),
            )?,
            None => out.write_str(" [-] ")?,
        }
        out.write_str(&fields.message)?;
        out.write_str(&fields.rest)?;
        out.write_char('\n')
    }
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
#[derive(Debug, Default)]
struct Fields {
    message: String,
    request_id: Option<String>,
    global_request_id: Option<String>,
    user_identity: Option<String>,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            "request_id" => self.request_id = Some(value.to_owned()),
            "global_request_id" => self.global_request_id = Some(value.to_owned()),
            "user_identity" => self.user_identity = Some(value.to_owned()),
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
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        self.write_line(
            &mut writer,
            OffsetDateTime::now_utc(),
            *meta.level(),
            meta.target(),
            &fields,
        )
    }
}

#[cfg(test)]
mod tests {
    use time::macros::{datetime, offset};

    use super::*;

    fn line(fields: &Fields, level: Level, target: &str) -> String {
        let format = OsloFormat {
            offset: offset!(+1),
            pid: 16449,
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
                request_id: Some("req-74c3b9ff-763b-4bb2-801a-b3adaa0869c9".to_owned()),
                user_identity: Some("admin admin - - - -".to_owned()),
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
