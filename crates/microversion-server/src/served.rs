//! The range an operator serves: the code's range, or a narrower one
//! inside it (a raised minimum, a capped maximum), changeable while the
//! service runs.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use microversion::{Version, VersionRange};

/// A served range refused: outside the code's range, or with a bound
/// that cannot be kept for a change while serving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidServedRange {
    served: VersionRange,
    code: VersionRange,
}

impl InvalidServedRange {
    /// The range asked for.
    #[must_use]
    pub fn served(&self) -> VersionRange {
        self.served
    }

    /// The range the code implements.
    #[must_use]
    pub fn code(&self) -> VersionRange {
        self.code
    }
}

impl fmt::Display for InvalidServedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (served, code) = (self.served, self.code);
        if code.contains(served.min()) && code.contains(served.max()) {
            write!(
                f,
                "served range {served} has a version number above {}: a narrowed range is bounded by versions whose numbers are below {}",
                u16::MAX - 1,
                u16::MAX
            )
        } else {
            write!(
                f,
                "served range {served} is not inside the range the code implements, {code}"
            )
        }
    }
}

impl std::error::Error for InvalidServedRange {}

/// Whether `served` can be served of `code`, as
/// [`MicroversionsBuilder::served_range`](crate::MicroversionsBuilder::served_range)
/// and [`Microversions::set_served_range`](crate::Microversions::set_served_range)
/// decide it: for a service that checks an operator's setting before it
/// builds its versioning.
///
/// # Errors
///
/// [`InvalidServedRange`], naming both ranges.
pub fn check_served_range(
    code: VersionRange,
    served: VersionRange,
) -> Result<(), InvalidServedRange> {
    pack(code, served).map(|_| ())
}

/// The code's range (a range of any width), or a narrower range packed in
/// one word so that a request reads it with one load and a change while
/// serving is seen whole by every request after it.
pub(crate) struct ServedRange {
    code: VersionRange,
    packed: AtomicU64,
}

/// The packed word meaning "the code's range".
const WHOLE: u64 = u64::MAX;

impl ServedRange {
    pub(crate) fn new(
        code: VersionRange,
        served: VersionRange,
    ) -> Result<Self, InvalidServedRange> {
        Ok(ServedRange {
            code,
            packed: AtomicU64::new(pack(code, served)?),
        })
    }

    /// The range the code implements.
    pub(crate) fn code(&self) -> VersionRange {
        self.code
    }

    /// The range served now.
    pub(crate) fn get(&self) -> VersionRange {
        match self.packed.load(Ordering::Relaxed) {
            WHOLE => self.code,
            packed => unpack(packed).unwrap_or(self.code),
        }
    }

    /// Serves `served` from now on.
    pub(crate) fn set(&self, served: VersionRange) -> Result<(), InvalidServedRange> {
        self.packed
            .store(pack(self.code, served)?, Ordering::Relaxed);
        Ok(())
    }
}

/// Each bound's major and minor as 16 bits (the code's own range is
/// [`WHOLE`], whatever its width).
fn pack(code: VersionRange, served: VersionRange) -> Result<u64, InvalidServedRange> {
    let refused = InvalidServedRange { served, code };
    if served == code {
        return Ok(WHOLE);
    }
    if !code.contains(served.min()) || !code.contains(served.max()) {
        return Err(refused);
    }
    let part = |n: u32| u64::from(u16::try_from(n).unwrap_or(u16::MAX));
    let fits = |v: Version| v.major() < u32::from(u16::MAX) && v.minor() < u32::from(u16::MAX);
    if !fits(served.min()) || !fits(served.max()) {
        return Err(refused);
    }
    let (min, max) = (served.min(), served.max());
    Ok(part(min.major()) << 48
        | part(min.minor()) << 32
        | part(max.major()) << 16
        | part(max.minor()))
}

fn unpack(packed: u64) -> Option<VersionRange> {
    let part = |shift: u32| u32::from((packed >> shift) as u16);
    VersionRange::new(
        Version::new(part(48), part(32)),
        Version::new(part(16), part(0)),
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrows_inside_the_code_range_and_back() {
        let code = VersionRange::from_static("1.0", "1.39");
        let served = ServedRange::new(code, code).unwrap();
        assert_eq!(served.get(), code);
        let narrow = VersionRange::from_static("1.10", "1.36");
        served.set(narrow).unwrap();
        assert_eq!(served.get(), narrow);
        let one = VersionRange::from_static("1.39", "1.39");
        served.set(one).unwrap();
        assert_eq!(served.get(), one);
        served.set(code).unwrap();
        assert_eq!(served.get(), code);
    }

    #[test]
    fn refuses_a_range_outside_the_code_naming_both() {
        let code = VersionRange::from_static("1.0", "1.39");
        let served = ServedRange::new(code, code).unwrap();
        let err = served
            .set(VersionRange::from_static("1.5", "1.40"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "served range 1.5 - 1.40 is not inside the range the code implements, 1.0 - 1.39"
        );
        assert_eq!(served.get(), code, "a refused range changes nothing");
        assert!(ServedRange::new(code, VersionRange::from_static("1.2", "2.0")).is_err());
    }

    #[test]
    fn a_whole_major_is_served_whole_and_narrowed_within_sixteen_bits() {
        let code = VersionRange::whole_major(1);
        let served = ServedRange::new(code, code).unwrap();
        assert_eq!(served.get(), code);
        served.set(VersionRange::from_static("1.2", "1.9")).unwrap();
        assert_eq!(served.get(), VersionRange::from_static("1.2", "1.9"));
        let wide = VersionRange::new(Version::new(1, 2), Version::new(1, 70_000)).unwrap();
        let err = served.set(wide).unwrap_err();
        assert!(err.to_string().contains("above 65534"), "{err}");
    }
}
