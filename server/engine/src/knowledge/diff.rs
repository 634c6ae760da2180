//! The unified diff of a suggested edit, what the reviewer sees before merging into
//! Knowledge: by lines with `similar` (Myers with a deadline: memory linear in the
//! texts, bounded time, where the hand-written LCS it replaced allocated n·m cells),
//! three lines of context, GNU hunk headers (`@@ -4 +4 @@` for a one-line range).

use std::time::Duration;

use similar::{Algorithm, TextDiff};

use crate::base::error::EngineResult;

use super::limits::{invalid, MAX_BODY};

/// Largest text diffed, either side, in bytes: [`MAX_BODY`] characters of up to four
/// bytes each, so every body the engine accepts fits; a longer one is refused.
pub const MAX_DIFF_BYTES: usize = 4 * MAX_BODY;
const CONTEXT: usize = 3;
/// Past this `similar` stops looking for the smallest diff and returns a correct,
/// larger one.
const DEADLINE: Duration = Duration::from_millis(250);

/// `--- a/<name>` / `+++ b/<name>` with `@@` hunks; empty when the texts are equal.
/// `INVALID_ARGUMENT` when either text is over [`MAX_DIFF_BYTES`].
pub fn unified(name: &str, old: &str, new: &str) -> EngineResult<String> {
    if old.len() > MAX_DIFF_BYTES || new.len() > MAX_DIFF_BYTES {
        return Err(invalid(
            format!(
                "El contenido es demasiado largo para mostrar la diferencia (máximo {MAX_BODY} caracteres)."
            ),
            "Propón un contenido más corto; el detalle largo va en un archivo.",
        ));
    }
    let (old, new) = (terminated_lines(old), terminated_lines(new));
    if old == new {
        return Ok(String::new());
    }
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DEADLINE)
        .diff_lines(old.as_str(), new.as_str());
    Ok(diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string())
}

/// Every line ends in `\n` (and `\r\n` becomes `\n`), so a last line without a
/// newline diffs like any other and no "No newline at end of file" marker appears.
fn terminated_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::error::ErrorCode;

    #[test]
    fn a_changed_line_becomes_one_hunk_with_context() {
        let old = "uno\ndos\ntres\ncuatro\ncinco\nseis\nsiete\nocho";
        let new = "uno\ndos\ntres\nCUATRO\ncinco\nseis\nsiete\nocho";
        let d = unified("topic:x", old, new).unwrap();
        assert!(
            d.starts_with("--- a/topic:x\n+++ b/topic:x\n@@ -1,7 +1,7 @@\n"),
            "{d}"
        );
        assert!(d.contains("-cuatro\n+CUATRO\n"));
        assert!(!d.contains("ocho"));
        assert_eq!(unified("t", "igual", "igual").unwrap(), "");
        assert_eq!(unified("t", "igual\r\n", "igual").unwrap(), "");
        let added = unified("t", "", "nueva").unwrap();
        assert!(added.contains("@@ -0,0 +1 @@\n+nueva\n"), "{added}");
        let last = unified("t", "a\nb", "a\nc").unwrap();
        assert!(last.ends_with(" a\n-b\n+c\n"), "{last}");
    }

    #[test]
    fn a_text_over_the_cap_is_refused_with_the_limit() {
        let huge = "x".repeat(MAX_DIFF_BYTES + 1);
        for (old, new) in [(huge.as_str(), "corto"), ("corto", huge.as_str())] {
            let e = unified("t", old, new).unwrap_err().body();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
            assert!(e.message.contains(&MAX_BODY.to_string()), "{}", e.message);
        }
    }
}
