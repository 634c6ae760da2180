//! File-pattern matching for topics (`patterns`) on `globset`, ripgrep's matcher: a
//! pattern compiles to a finite automaton, so matching is linear in the path and
//! never backtracks (the hand-written matcher before it was exponential in the
//! number of `*`). Semantics: `**` as a whole folder matches any number of folders
//! (`gobierno/**`, `**/imss*`, `a/**/b`; inside a name it acts as `*`), `*` matches
//! within one folder, `?` one letter but `/`, and every other character is literal
//! (brackets and braces too). A pattern without `/` also matches the file's base
//! name ("*.md" matches "propuestas/imss.md"). Like the rest of Cerebro, case and
//! accents are folded on both sides ("cotizaci?n.xlsx" matches "Cotización.XLSX").

use globset::{Glob, GlobBuilder, GlobSetBuilder};

use crate::base::catalog::text::fold_letters;

/// Longest pattern compiled, in characters: keeps every automaton small.
pub const MAX_PATTERN_CHARS: usize = 200;
/// Longest path matched, in characters; longer paths match nothing.
pub const MAX_PATH_CHARS: usize = 1_024;

fn clean(s: &str) -> &str {
    s.trim().trim_start_matches("./")
}

/// The path as matched: trimmed, folded; `None` when empty or too long.
fn candidate(path: &str) -> Option<String> {
    let path = clean(path);
    (!path.is_empty() && path.chars().count() <= MAX_PATH_CHARS).then(|| fold_letters(path))
}

/// The compiled pattern; `None` when empty, longer than [`MAX_PATTERN_CHARS`] or
/// not a glob `globset` accepts.
pub fn compile(pattern: &str) -> Option<Glob> {
    let p = clean(pattern);
    if p.is_empty() || p.chars().count() > MAX_PATTERN_CHARS {
        return None;
    }
    let folded = fold_letters(p);
    let mut glob = String::with_capacity(folded.len() + 8);
    if !folded.contains('/') {
        // `**/` may match no folder: the full path or any base name.
        glob.push_str("**/");
    }
    for c in folded.chars() {
        match c {
            '[' | ']' | '{' | '}' => {
                glob.push('[');
                glob.push(c);
                glob.push(']');
            }
            c => glob.push(c),
        }
    }
    GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(false)
        .build()
        .ok()
}

/// True when `path` matches `pattern`.
pub fn matches(pattern: &str, path: &str) -> bool {
    match (compile(pattern), candidate(path)) {
        (Some(glob), Some(path)) => glob.compile_matcher().is_match(path),
        _ => false,
    }
}

/// For each group of patterns (a topic's), whether any of them matches any of
/// `paths`. All groups compile into one `GlobSet`, so each path is matched against
/// every pattern in one linear pass. Unusable stored patterns match nothing.
pub fn matching_groups(groups: &[Vec<String>], paths: &[String]) -> Vec<bool> {
    let mut hit = vec![false; groups.len()];
    let paths: Vec<String> = paths.iter().filter_map(|p| candidate(p)).collect();
    if paths.is_empty() {
        return hit;
    }
    let mut builder = GlobSetBuilder::new();
    let mut owner = Vec::new();
    for (i, group) in groups.iter().enumerate() {
        for glob in group.iter().filter_map(|p| compile(p)) {
            builder.add(glob);
            owner.push(i);
        }
    }
    match builder.build() {
        Ok(set) => {
            for path in &paths {
                for k in set.matches(path) {
                    hit[owner[k]] = true;
                }
            }
        }
        Err(e) => {
            // Only a size limit of the combined automaton can fail here; each
            // pattern alone is small, so fall back to one matcher per pattern.
            tracing::warn!(error = %e, "topic patterns did not compile together");
            for (i, group) in groups.iter().enumerate() {
                hit[i] = group.iter().filter_map(|p| compile(p)).any(|g| {
                    let m = g.compile_matcher();
                    paths.iter().any(|p| m.is_match(p))
                });
            }
        }
    }
    hit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_folders_names_and_extensions() {
        assert!(matches("gobierno/**", "gobierno/imss/propuesta.md"));
        assert!(matches("**/imss*", "gobierno/imss-2026.md"));
        assert!(matches("*.md", "propuestas/imss.md"));
        assert!(matches("propuestas/*.pdf", "propuestas/cfe.pdf"));
        assert!(!matches("propuestas/*.pdf", "propuestas/2026/cfe.pdf"));
        assert!(!matches("gobierno/**", "ventas/gobierno.md"));
        assert!(matches("cotizaci?n.xlsx", "cotizacion.xlsx"));
        assert!(!matches("", "a"));
        // Only `*`, `**` and `?` are special: brackets and braces are literal.
        assert!(matches("informe[2026].pdf", "ventas/informe[2026].pdf"));
        assert!(!matches("informe[2026].pdf", "informe2.pdf"));
        assert!(matches("{a,b}.md", "{a,b}.md"));
        assert!(matches("./ventas/*.md", "ventas/a.md"));
        assert!(matches("gobierno/**/anexo.pdf", "gobierno/anexo.pdf"));
        assert!(matches(
            "gobierno/**/anexo.pdf",
            "gobierno/imss/2026/anexo.pdf"
        ));
        assert!(!matches("gobierno/**", "gobierno"));
        assert!(!matches("cotizaci?n.xlsx", "cotizaci/n.xlsx"));
        assert!(matches("cotizaci?n.xlsx", "Cotización.XLSX"));
        assert!(matches("licitación-*.PDF", "gobierno/licitacion-imss.pdf"));
        assert!(!matches(
            "*.md",
            &format!("{}.md", "a".repeat(MAX_PATH_CHARS))
        ));
        assert!(!matches(
            &format!("{}*", "a".repeat(MAX_PATTERN_CHARS)),
            "a.md"
        ));
    }

    #[test]
    fn one_set_answers_for_every_topic() {
        let groups = vec![
            vec!["gobierno/**".to_owned(), "*.pdf".to_owned()],
            vec!["ventas/objeciones.md".to_owned()],
            vec![format!("{}*", "x".repeat(MAX_PATTERN_CHARS))],
            Vec::new(),
        ];
        let paths = ["ventas/objeciones.md".to_owned(), "cfe.PDF".to_owned()];
        assert_eq!(
            matching_groups(&groups, &paths),
            vec![true, true, false, false]
        );
        assert_eq!(matching_groups(&groups, &[]), vec![false; 4]);
    }

    /// The old backtracking matcher took minutes here (×5.6 per 4 characters).
    #[test]
    fn a_pathological_pattern_answers_at_once() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let p = "a*a*a*a*a*a*a*a*a*a*b";
            let a = "a".repeat(64);
            let _ = tx.send((matches(p, &a), matches(p, &format!("{a}b"))));
        });
        let answer = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the matcher must answer, not backtrack");
        assert_eq!(answer, (false, true));
    }
}
