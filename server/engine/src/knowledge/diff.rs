//! A small unified diff of two texts by lines (longest common subsequence), for
//! suggested edits: what the reviewer sees before merging into Knowledge.

/// Most lines diffed exactly; longer texts are shown as a whole replacement.
const MAX_LINES: usize = 2_000;
const CONTEXT: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Del,
    Add,
}

/// `--- a/<name>` / `+++ b/<name>` with `@@` hunks; empty when the texts are equal.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = if a.len() > MAX_LINES || b.len() > MAX_LINES {
        a.iter()
            .map(|_| Op::Del)
            .chain(b.iter().map(|_| Op::Add))
            .collect()
    } else {
        script(&a, &b)
    };
    // Positions of each op in a and b.
    let mut rows = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for op in ops {
        rows.push((op, i, j));
        match op {
            Op::Keep => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Add => j += 1,
        }
    }
    let mut out = format!("--- a/{name}\n+++ b/{name}\n");
    let changed: Vec<usize> = (0..rows.len()).filter(|&k| rows[k].0 != Op::Keep).collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = (changed[k] + CONTEXT + 1).min(rows.len());
        while k + 1 < changed.len() && changed[k + 1] <= end + CONTEXT {
            k += 1;
            end = (changed[k] + CONTEXT + 1).min(rows.len());
        }
        let hunk = &rows[start..end];
        let a_len = hunk.iter().filter(|r| r.0 != Op::Add).count();
        let b_len = hunk.iter().filter(|r| r.0 != Op::Del).count();
        let a_start = if a_len == 0 { hunk[0].1 } else { hunk[0].1 + 1 };
        let b_start = if b_len == 0 { hunk[0].2 } else { hunk[0].2 + 1 };
        out.push_str(&format!("@@ -{a_start},{a_len} +{b_start},{b_len} @@\n"));
        for (op, ai, bj) in hunk {
            match op {
                Op::Keep => out.push_str(&format!(" {}\n", a[*ai])),
                Op::Del => out.push_str(&format!("-{}\n", a[*ai])),
                Op::Add => out.push_str(&format!("+{}\n", b[*bj])),
            }
        }
        k += 1;
    }
    out
}

fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j] = LCS length of a[i..] and b[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Keep);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            ops.push(Op::Del);
            i += 1;
        } else {
            ops.push(Op::Add);
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::unified;

    #[test]
    fn a_changed_line_becomes_one_hunk_with_context() {
        let old = "uno\ndos\ntres\ncuatro\ncinco\nseis\nsiete\nocho";
        let new = "uno\ndos\ntres\nCUATRO\ncinco\nseis\nsiete\nocho";
        let d = unified("topic:x", old, new);
        assert!(
            d.starts_with("--- a/topic:x\n+++ b/topic:x\n@@ -1,7 +1,7 @@\n"),
            "{d}"
        );
        assert!(d.contains("-cuatro\n+CUATRO\n"));
        assert!(!d.contains("ocho"));
        assert_eq!(unified("t", "igual", "igual"), "");
        let added = unified("t", "", "nueva");
        assert!(added.contains("@@ -0,0 +1,1 @@\n+nueva\n"), "{added}");
    }
}
