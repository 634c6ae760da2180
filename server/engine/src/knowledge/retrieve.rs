//! `context_retrieve`: ranks what the team knows for a task. Signals: full text
//! (SQLite FTS5, accents and case folded, bm25 with the title weighted), area, file
//! patterns, freshness; notes en revisión and stale topics rank lower. Without any
//! signal it lists the freshest topics (optionally of one area).

use std::collections::HashMap;

use sqlx::Row;

use crate::accounts::Caller;
use crate::base::catalog::text::fold_letters;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Backend;

use super::{glob, normalize_area, topic_from, Knowledge, Topic, TopicStatus, DAY_MS, TOPIC_COLS};

pub const DEFAULT_LIMIT: usize = 5;
pub const MAX_LIMIT: usize = 20;
/// Characters of body shown per hit.
pub const EXCERPT_CHARS: usize = 280;

#[derive(Debug, Clone, Default)]
pub struct RetrieveQuery {
    pub task: Option<String>,
    pub query: Option<String>,
    pub area: Option<String>,
    pub files: Vec<String>,
    /// `Some(true)`: only stale topics; `Some(false)`: only current ones.
    pub stale: Option<bool>,
    pub limit: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Hit {
    pub topic: Topic,
    pub score: f64,
    /// Which signals matched: "texto", "área", "archivos".
    pub matched: Vec<&'static str>,
    pub excerpt: String,
}

const STOPWORDS: &[&str] = &[
    "para", "por", "con", "los", "las", "del", "que", "una", "uno", "unos", "unas", "como", "cual",
    "sobre", "este", "esta", "estos", "estas", "ese", "esa", "hay", "mas", "muy", "sus", "the",
    "and", "quiero", "necesito", "dame",
];

/// The meaningful words of `text`: folded, three letters or more, no stopwords.
fn words(text: &str) -> Vec<String> {
    let folded = fold_letters(text);
    let mut terms: Vec<String> = Vec::new();
    for w in folded.split(|c: char| !c.is_alphanumeric()) {
        if w.chars().count() >= 3 && !STOPWORDS.contains(&w) && !terms.iter().any(|t| t == w) {
            terms.push(w.to_owned());
        }
    }
    terms.truncate(12);
    terms
}

/// FTS5 query of the meaningful words of `text` (prefix match, OR-joined), if any.
pub fn fts_query(text: &str) -> Option<String> {
    let terms = words(text);
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("\"{t}\"*"))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// The same query as a PostgreSQL `tsquery` (letters and digits only).
pub fn tsquery(text: &str) -> Option<String> {
    let terms = words(text);
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("{t}:*"))
            .collect::<Vec<_>>()
            .join(" | ")
    })
}

/// The first `max` characters of `body`, cut at a word, with "…" when cut.
pub fn excerpt(body: &str, max: usize) -> String {
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => cut[..i].to_owned(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', '.', ';', ':']))
}

impl Knowledge {
    pub async fn retrieve(&self, caller: &Caller, q: &RetrieveQuery) -> EngineResult<Vec<Hit>> {
        self.retrieve_at(caller, q, crate::base::clock::now_ms())
            .await
    }

    pub async fn retrieve_at(
        &self,
        caller: &Caller,
        q: &RetrieveQuery,
        now: i64,
    ) -> EngineResult<Vec<Hit>> {
        let text = [q.task.as_deref(), q.query.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let mut text_scores: HashMap<String, f64> = HashMap::new();
        let search = match self.store().backend() {
            // bm25 is negative, more negative is better; weights title 4, body 1, area 2.
            Backend::Sqlite => fts_query(&text).map(|q| {
                (
                    "select t.id, -bm25(kn_topics_fts, 4.0, 1.0, 2.0) as s
                       from kn_topics_fts join kn_topics t on t.rowid = kn_topics_fts.rowid
                      where kn_topics_fts match $1 and t.workspace_id = $2
                      order by s desc limit 200",
                    q,
                )
            }),
            // The same weights as setweight classes A (title), B (area), D (body).
            Backend::Postgres => tsquery(&text).map(|q| {
                (
                    "select t.id, cast(ts_rank('{0.25, 0.25, 0.5, 1.0}', t.tsv, to_tsquery('simple', $1)) as double precision) as s
                       from kn_topics t
                      where t.tsv @@ to_tsquery('simple', $1) and t.workspace_id = $2
                      order by s desc limit 200",
                    q,
                )
            }),
        };
        let any_text = search.is_some();
        if let Some((sql, fq)) = search {
            let rows = sqlx::query(sql)
                .bind(&fq)
                .bind(&caller.workspace_id)
                .fetch_all(self.store().pool())
                .await?;
            for r in rows {
                text_scores.insert(r.get("id"), r.get::<f64, _>("s"));
            }
        }
        let best = text_scores.values().cloned().fold(0.0_f64, f64::max);
        let area = q
            .area
            .as_deref()
            .map(normalize_area)
            .filter(|a| !a.is_empty());
        let files: Vec<String> = q
            .files
            .iter()
            .map(|f| f.trim().to_owned())
            .filter(|f| !f.is_empty())
            .collect();
        let any_signal = any_text || area.is_some() || !files.is_empty();
        let rows = sqlx::query(&format!(
            "select {TOPIC_COLS} from kn_topics where workspace_id = $1"
        ))
        .bind(&caller.workspace_id)
        .fetch_all(self.store().pool())
        .await?;
        let topics: Vec<Topic> = rows.iter().map(topic_from).collect();
        let by_files = if files.is_empty() {
            vec![false; topics.len()]
        } else {
            // Matching is linear (globset), but compiling every topic's patterns of a
            // large workspace is still CPU work: it runs on the blocking pool, never
            // on an async worker.
            let groups: Vec<Vec<String>> = topics.iter().map(|t| t.patterns.clone()).collect();
            tokio::task::spawn_blocking(move || glob::matching_groups(&groups, &files))
                .await
                .map_err(EngineError::internal)?
        };
        let mut hits = Vec::new();
        for (topic, by_files) in topics.into_iter().zip(by_files) {
            let stale = topic.is_stale(now);
            if q.stale.is_some_and(|want| want != stale) {
                continue;
            }
            let mut matched = Vec::new();
            let mut score = 0.0;
            if let Some(s) = text_scores.get(&topic.id) {
                matched.push("texto");
                score += 4.0 * if best > 0.0 { s / best } else { 1.0 };
            }
            if area.as_deref() == Some(topic.area.as_str()) {
                matched.push("área");
                score += 3.0;
            }
            if by_files {
                matched.push("archivos");
                score += 3.0;
            }
            if any_signal && matched.is_empty() {
                continue;
            }
            let age_days = (now - topic.updated_at) / DAY_MS;
            score += match age_days {
                d if d <= 30 => 1.0,
                d if d <= 90 => 0.5,
                _ => 0.0,
            };
            if stale {
                score -= 1.5;
            }
            if topic.status == TopicStatus::EnRevision {
                score -= 1.0;
            }
            let excerpt = excerpt(&topic.body, EXCERPT_CHARS);
            hits.push(Hit {
                topic,
                score,
                matched,
                excerpt,
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.topic.updated_at.cmp(&a.topic.updated_at))
                .then(a.topic.slug.cmp(&b.topic.slug))
        });
        hits.truncate(q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT));
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_fold_accents_and_drop_short_and_stop_words() {
        assert_eq!(
            fts_query("Cómo vendemos a gobierno para el IMSS").as_deref(),
            Some("\"vendemos\"* OR \"gobierno\"* OR \"imss\"*")
        );
        assert_eq!(fts_query("a de la"), None);
        assert_eq!(fts_query("\"; drop"), Some("\"drop\"*".into()));
    }

    #[test]
    fn excerpts_cut_at_a_word() {
        let e = excerpt("uno dos tres cuatro cinco seis", 14);
        assert_eq!(e, "uno dos tres…");
        assert_eq!(excerpt("corto", 100), "corto");
    }
}
