//! The bench's reports: the regression set's full Markdown (every brief, every turn)
//! and, for issue 22's public and held-out files, a score per file (turns right on
//! intent and arguments), a per-kind table and the turns that changed the board when
//! the person did not ask. The held-out file is summarised without its sentences or
//! brief ids, so nobody tunes the director to it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::bench::{Brief, Report, Status};

/// The request kinds of issue 22, in the order the report lists them.
pub const KINDS: &[&str] = &[
    "search",
    "count",
    "compare",
    "rank",
    "screen",
    "save",
    "contacts",
    "sequence",
    "note",
    "knowledge_edit",
    "stage_move",
    "usage",
    "research",
    "out_of_scope",
    "greeting_help",
    "unclear_no_change",
    "refine_followup",
    "open_tenders",
    "places",
    "constraints",
    "word_forms",
];

/// Right and total, for turns or briefs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub right: usize,
    pub total: usize,
}

impl Tally {
    fn add(&mut self, right: bool) {
        self.total += 1;
        self.right += usize::from(right);
    }
    pub fn percent(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            100.0 * self.right as f64 / self.total as f64
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} ({:.0} %)", self.right, self.total, self.percent())
    }
}

/// One file's measured score.
#[derive(Debug, Clone, Serialize)]
pub struct FileScore {
    pub file: String,
    pub held_out: bool,
    /// Turns with every expectation right (intent and arguments).
    pub turns: Tally,
    pub briefs: Tally,
    pub multi_turn_briefs: usize,
    /// Turns that changed the selection, saved list or drafts unasked.
    pub unasked_changes: usize,
    /// Per kind: turns right / total.
    pub by_kind: BTreeMap<String, Tally>,
    pub evals_passed: usize,
    pub evals_not_measured: usize,
}

pub fn score(file: &str, held_out: bool, briefs: &[Brief], report: &Report) -> FileScore {
    let mut turns = Tally::default();
    let mut brief_tally = Tally::default();
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut unasked = 0;
    for b in &report.briefs {
        brief_tally.add(b.turns.iter().all(|t| t.failures.is_empty()));
        for t in &b.turns {
            let right = t.failures.is_empty();
            turns.add(right);
            unasked += usize::from(!t.unasked_changes.is_empty());
            let kind = t.kind.clone().unwrap_or_else(|| "—".into());
            by_kind.entry(kind).or_default().add(right);
        }
    }
    FileScore {
        file: file.to_owned(),
        held_out,
        turns,
        briefs: brief_tally,
        multi_turn_briefs: briefs.iter().filter(|b| b.turns.len() > 1).count(),
        unasked_changes: unasked,
        by_kind,
        evals_passed: report.summary.evals_passed,
        evals_not_measured: report.summary.evals_not_measured,
    }
}

/// The scores side by side, with the per-kind table (aggregates only).
pub fn scores_markdown(scores: &[FileScore]) -> String {
    let mut md = String::from("| file | turns right (intent and arguments) | briefs right | multi-turn briefs | unasked board changes | evals pass |\n|---|---|---|---|---|---|\n");
    for s in scores {
        md.push_str(&format!(
            "| {}{} | {} | {} | {} | {} | {}/8{} |\n",
            s.file,
            if s.held_out { " (held out)" } else { "" },
            s.turns,
            s.briefs,
            s.multi_turn_briefs,
            s.unasked_changes,
            s.evals_passed,
            if s.evals_not_measured > 0 {
                format!(" ({} not measured)", s.evals_not_measured)
            } else {
                String::new()
            }
        ));
    }
    md.push_str("\nPer kind, turns right / turns:\n\n| kind |");
    for s in scores {
        md.push_str(&format!(" {} |", s.file));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(scores.len()));
    md.push('\n');
    let mut kinds: Vec<String> = KINDS.iter().map(|k| (*k).to_owned()).collect();
    for s in scores {
        for k in s.by_kind.keys() {
            if !kinds.contains(k) {
                kinds.push(k.clone());
            }
        }
    }
    for k in kinds {
        md.push_str(&format!("| {k} |"));
        for s in scores {
            match s.by_kind.get(&k) {
                Some(t) => md.push_str(&format!(" {}/{} |", t.right, t.total)),
                None => md.push_str(" — |"),
            }
        }
        md.push('\n');
    }
    md
}

/// Short terminal lines for one file's score.
pub fn score_line(s: &FileScore) -> String {
    format!(
        "{}{}: {} turns right, {} briefs right, {} unasked board changes\n",
        s.file,
        if s.held_out { " (held out)" } else { "" },
        s.turns,
        s.briefs,
        s.unasked_changes
    )
}

fn status_word(s: &Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "**FAIL**",
        Status::Pending => "pending",
        Status::NotMeasured => "not measured",
    }
}

/// The report as Markdown (no timestamps: two runs give the same text).
pub fn markdown(report: &Report) -> String {
    let s = &report.summary;
    let mut md = String::from("# Luna blocking evals and brief bench\n\n");
    md.push_str(
        "Generated by `cargo run -p luna-engine --bin evals` (local director, generated demo data).\n\n",
    );
    md.push_str(&format!(
        "**{}** — briefs: {} pass, {} fail, {} pending (of {}); turns: {}; evals: {} of {} pass, {} not measured.\n\n",
        if s.green { "GREEN" } else { "RED" },
        s.passed,
        s.failed,
        s.pending,
        s.briefs,
        s.turns,
        s.evals_passed,
        s.evals_passed + s.evals_failed + s.evals_not_measured,
        s.evals_not_measured
    ));
    md.push_str("## Evals\n\n| # | eval | result | turns | reason |\n|---|---|---|---|---|\n");
    for e in &report.evals {
        let reason = if e.failures.is_empty() {
            e.detail.clone()
        } else {
            e.failures.join("; ")
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            e.number,
            e.title,
            status_word(&e.status),
            e.turns_checked,
            reason.replace('|', "\\|")
        ));
    }
    md.push_str("\n## Briefs\n\n| brief | topic | result | turn | intent | cards | tools | narration | reason |\n|---|---|---|---|---|---|---|---|---|\n");
    for b in &report.briefs {
        for (i, t) in b.turns.iter().enumerate() {
            let mut reason = t.failures.join("; ");
            if i == 0 {
                if let Some(p) = &b.pending {
                    reason = format!("pending: {p}. {reason}");
                }
            }
            md.push_str(&format!(
                "| {} | {} | {} | {} «{}» | {} | {} | {} | {} | {} |\n",
                if i == 0 { b.id.as_str() } else { "" },
                if i == 0 { b.topic.as_str() } else { "" },
                if i == 0 { status_word(&b.status) } else { "" },
                t.turn_id,
                t.message.replace('|', "\\|"),
                t.intent,
                if t.cards.is_empty() {
                    "—".to_owned()
                } else {
                    t.cards.join(", ")
                },
                t.tools.join(", "),
                t.narration.replace('|', "\\|").replace('\n', " "),
                reason.replace('|', "\\|").trim()
            ));
        }
    }
    md
}

/// A short summary for the terminal.
pub fn summary_line(report: &Report) -> String {
    let s = &report.summary;
    let mut out = format!(
        "evals: {} — {} briefs ({} pass, {} fail, {} pending), {} turns, {}/8 evals pass, {} not measured\n",
        if s.green { "GREEN" } else { "RED" },
        s.briefs,
        s.passed,
        s.failed,
        s.pending,
        s.turns,
        s.evals_passed,
        s.evals_not_measured
    );
    for e in &report.evals {
        out.push_str(&format!(
            "  {} {:<62} {}\n",
            e.number,
            e.title,
            match e.status {
                Status::Pass => "pass",
                Status::NotMeasured => "not measured",
                _ => "FAIL",
            }
        ));
    }
    let mut by_status: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for b in &report.briefs {
        let key = match b.status {
            Status::Pass | Status::NotMeasured => continue,
            Status::Fail => "failed",
            Status::Pending => "pending",
        };
        by_status.entry(key).or_default().push(&b.id);
    }
    for (k, ids) in by_status {
        out.push_str(&format!("  {k}: {}\n", ids.join(", ")));
    }
    out
}

/// Writes `report.md` and `report.json` into `dir`.
pub fn write(report: &Report, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("report.md"), markdown(report))?;
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("report.json"), json + "\n")
}
