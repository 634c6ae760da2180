//! File-pattern matching for topics (`patterns`): `**` matches across folders, `*`
//! within one folder, `?` one character. A pattern without `/` also matches the
//! file's base name ("*.md" matches "propuestas/imss.md").

/// True when `path` matches `pattern`.
pub fn matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let path = path.trim().trim_start_matches("./");
    if pattern.is_empty() || path.is_empty() {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = path.chars().collect();
    if glob(&p, &s) {
        return true;
    }
    if !pattern.contains('/') {
        if let Some(base) = path.rsplit('/').next() {
            let b: Vec<char> = base.chars().collect();
            return glob(&p, &b);
        }
    }
    false
}

fn glob(p: &[char], s: &[char]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            // `**/` may also match nothing.
            let rest = if p.get(2) == Some(&'/') {
                &p[3..]
            } else {
                &p[2..]
            };
            (0..=s.len()).any(|i| glob(rest, &s[i..])) || glob(&p[2..], s)
        }
        Some('*') => {
            let rest = &p[1..];
            for i in 0..=s.len() {
                if glob(rest, &s[i..]) {
                    return true;
                }
                if s.get(i) == Some(&'/') {
                    break;
                }
            }
            false
        }
        Some('?') => matches!(s.first(), Some(c) if *c != '/') && glob(&p[1..], &s[1..]),
        Some(c) => s.first() == Some(c) && glob(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

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
    }
}
