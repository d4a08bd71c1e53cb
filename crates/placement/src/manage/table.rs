//! The text tables the commands print, laid out as upstream's (Python's
//! prettytable) so that tools and operators reading them see the same
//! characters, and Python's `textwrap.wrap` for the long details of
//! `placement-status`.

/// A table of columns centred in their width (prettytable's default).
pub(crate) fn centred(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|cell| cell.chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule: String = widths
        .iter()
        .map(|w| "-".repeat(w + 2))
        .collect::<Vec<_>>()
        .join("+");
    let rule = format!("+{rule}+");
    let line = |cells: Vec<&str>| {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!(" {} ", centre(cell, *width)))
            .collect();
        format!("|{}|", cells.join("|"))
    };
    let mut out = vec![rule.clone(), line(header.to_vec()), rule.clone()];
    for row in rows {
        out.push(line(row.iter().map(String::as_str).collect()));
    }
    out.push(rule);
    out.join("\n")
}

/// `text` centred in `width` as Python's `str.center`: an odd margin puts
/// its extra space on the left when `width` is odd.
fn centre(text: &str, width: usize) -> String {
    let margin = width.saturating_sub(text.chars().count());
    let left = margin / 2 + (margin & width & 1);
    format!("{}{text}{}", " ".repeat(left), " ".repeat(margin - left))
}

/// A one-column table with a rule between rows, its cells (of several
/// lines) aligned left.
pub(crate) fn boxed(header: &str, cells: &[String]) -> String {
    let width = cells
        .iter()
        .flat_map(|cell| cell.lines())
        .chain([header])
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0);
    let rule = format!("+{}+", "-".repeat(width + 2));
    let line = |text: &str| {
        let pad = width - text.chars().count();
        format!("| {text}{} |", " ".repeat(pad))
    };
    let mut out = vec![rule.clone(), line(header), rule.clone()];
    for cell in cells {
        out.extend(cell.lines().map(line));
        out.push(rule.clone());
    }
    out.join("\n")
}

/// Whether `c` is a letter as Python's `[^\d\W]` sees one.
fn letter(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

/// The chunks Python's `textwrap` splits text into: runs of spaces, and
/// words, a word also ending after a hyphen that has two letters before
/// it (or a letter, hyphen, letter) and a letter (or letter, hyphen,
/// letter) after it.
fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        if chars[i] == ' ' {
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
        } else {
            while i < chars.len() && chars[i] != ' ' {
                i += 1;
                if chars[i - 1] == '-' && i - start >= 2 && hyphen_breaks(&chars, i - 1) {
                    break;
                }
            }
        }
        out.push(chars[start..i].iter().collect());
    }
    out
}

/// Whether a word may end after the hyphen at `at`.
fn hyphen_breaks(chars: &[char], at: usize) -> bool {
    let get = |k: isize| {
        usize::try_from(at as isize + k)
            .ok()
            .and_then(|k| chars.get(k))
            .copied()
    };
    let is = |k: isize, f: fn(char) -> bool| get(k).is_some_and(f);
    let before = (is(-2, letter) && is(-1, letter))
        || (is(-3, letter) && get(-2) == Some('-') && is(-1, letter));
    let after = is(1, letter) && (is(2, letter) || (get(2) == Some('-') && is(3, letter)));
    before && after
}

/// Python's `textwrap.wrap(text, width, subsequent_indent=indent)`: lines
/// of at most `width` characters, words broken at hyphens and, when
/// longer than a line, anywhere.
pub(crate) fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut chunks: Vec<String> = chunks(text);
    chunks.reverse();
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        let prefix = if lines.is_empty() { "" } else { indent };
        let room = width.saturating_sub(prefix.chars().count()).max(1);
        if !lines.is_empty() && chunks.last().is_some_and(|c| c.trim().is_empty()) {
            chunks.pop();
        }
        let mut line: Vec<String> = Vec::new();
        let mut used = 0;
        while let Some(chunk) = chunks.last() {
            let len = chunk.chars().count();
            if used + len <= room {
                used += len;
                line.push(chunks.pop().unwrap_or_default());
            } else {
                break;
            }
        }
        if let Some(chunk) = chunks.last()
            && chunk.chars().count() > room
        {
            // A word longer than a line: as much as fits (to its last
            // hyphen there, when it has one past its first character).
            let space = room - used;
            let chars: Vec<char> = chunk.chars().collect();
            let mut end = space;
            if let Some(hyphen) = chars[..space].iter().rposition(|c| *c == '-')
                && hyphen > 0
                && chars[..hyphen].iter().any(|c| *c != '-')
            {
                end = hyphen + 1;
            }
            line.push(chars[..end].iter().collect());
            let rest: String = chars[end..].iter().collect();
            chunks.pop();
            chunks.push(rest);
        }
        while line.last().is_some_and(|c| c.trim().is_empty()) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(format!("{prefix}{}", line.concat()));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centred_as_prettytable() {
        let table = centred(
            &["Migration", "Total Found", "Completed"],
            &[vec![
                "set_root_provider_ids".into(),
                "12".into(),
                "2".into(),
            ]],
        );
        assert_eq!(
            table,
            "+-----------------------+-------------+-----------+\n\
             |       Migration       | Total Found | Completed |\n\
             +-----------------------+-------------+-----------+\n\
             | set_root_provider_ids |      12     |     2     |\n\
             +-----------------------+-------------+-----------+"
        );
    }

    #[test]
    fn wraps_as_textwrap() {
        let text = "Your policy file is JSON-formatted which is deprecated. You need to switch to \
                    YAML-formatted file. Use the ``oslopolicy-convert-json-to-yaml`` tool to convert the \
                    existing JSON-formatted files to YAML in a backwards-compatible manner: \
                    https://docs.openstack.org/oslo.policy/latest/cli/oslopolicy-convert-json-to-yaml.html.";
        assert_eq!(
            wrap(text, 60, "  "),
            [
                "Your policy file is JSON-formatted which is deprecated. You",
                "  need to switch to YAML-formatted file. Use the",
                "  ``oslopolicy-convert-json-to-yaml`` tool to convert the",
                "  existing JSON-formatted files to YAML in a backwards-",
                "  compatible manner: https://docs.openstack.org/oslo.policy/",
                "  latest/cli/oslopolicy-convert-json-to-yaml.html.",
            ]
        );
        assert_eq!(wrap("", 60, "  "), Vec::<String>::new());
        assert_eq!(wrap("a b", 60, "  "), ["a b"]);
    }
}
