//! Full-text conditions on both engines. SQLite: FTS5 tables (`… in (select rowid from
//! <t>_fts where <t>_fts match ?)`), with the state folded into the index as the `st`
//! token for Proveedores and Adjudicaciones (migration 0014). PostgreSQL: the table's
//! stored `tsv` column (`simple` over `luna_fold`) matched by a prefix `tsquery`; the
//! state stays an ordinary column filter there. Terms come from the one folding,
//! `catalog::text`, so both engines match the same words.

use crate::base::catalog::states::State;
use crate::base::catalog::text;
use crate::base::store::Backend;

/// What a text condition searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Proveedores by name (`s`).
    Suppliers,
    /// Adjudicaciones by title and supplier name (`a`).
    Awards,
    /// Licitaciones by title and buyer (`o`).
    Opportunities,
    /// Registros by holder name and type (`p`).
    Permits,
    /// Registros by type only (`p`).
    PermitType,
    /// Marcas de riesgo by name (`r`).
    Risks,
}

/// Adjudicaciones searched by text on SQLite: (from clause, order). The index's rowid
/// is the award's date order (`mk_awards.ord`, migration 0020), so FTS5 drives the
/// query newest first and a page stops after its rows instead of sorting every match.
/// `cross join` keeps the index as the outer loop.
pub const AWARDS_FROM: (&str, &str) = (
    "mk_awards_fts cross join mk_awards a on a.ord = mk_awards_fts.rowid",
    "mk_awards_fts.rowid desc",
);

/// Shortest term matched as a prefix ("emp" finds "empaques"); shorter ones match
/// whole words only ("s"* would expand to every word that starts with s).
const MIN_PREFIX: usize = 3;

fn is_prefix(term: &str) -> bool {
    term.chars().count() >= MIN_PREFIX
}

/// FTS5 match expression from free text: every folded term, quoted, prefix-matched
/// from three letters on.
pub fn fts_query(query: &str) -> Option<String> {
    let terms = text::terms(query, 8);
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| {
                let star = if is_prefix(t) { "*" } else { "" };
                format!("\"{}\"{star}", t.replace('"', ""))
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// A PostgreSQL `tsquery` from free text: every folded word, all required,
/// prefix-matched from three letters on (as [`fts_query`]). Only letters and digits reach it, so no input can change its syntax.
pub fn tsquery(query: &str) -> Option<String> {
    let words: Vec<String> = text::terms(query, 8)
        .iter()
        .flat_map(|t| {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| format!("{w}{}", if is_prefix(w) { ":*" } else { "" }))
                .collect::<Vec<_>>()
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" & "))
}

/// An FTS5 expression for Proveedores / Adjudicaciones: the text terms in the text
/// `columns` only, and the state, when filtered, as the index's `st` token
/// (migration 0014), so FTS5 intersects both before SQLite reads any row.
pub fn with_state(columns: &str, terms: &str, state: Option<State>) -> String {
    match state {
        Some(s) => format!("{columns} : ({terms}) AND st : e{}", s.code()),
        None => format!("{columns} : ({terms})"),
    }
}

/// The condition (with one `?`) and its bind for `query` on `target`, or `None` when
/// the text has no searchable word.
pub fn condition(
    backend: Backend,
    target: Target,
    query: &str,
    state: Option<State>,
) -> Option<(&'static str, String)> {
    match backend {
        Backend::Sqlite => {
            let q = fts_query(query)?;
            Some(match target {
                Target::Suppliers => (
                    "s.rowid in (select rowid from mk_suppliers_fts where mk_suppliers_fts match ?)",
                    with_state("{name}", &q, state),
                ),
                // Needs `AWARDS_FROM`: the index is read in date order, not filtered into.
                Target::Awards => (
                    "mk_awards_fts match ?",
                    with_state("{title supplier_name}", &q, state),
                ),
                Target::Opportunities => (
                    "o.id in (select rowid from mk_opportunities_fts where mk_opportunities_fts match ?)",
                    q,
                ),
                Target::Permits => (
                    "p.id in (select rowid from mk_permits_fts where mk_permits_fts match ?)",
                    q,
                ),
                Target::PermitType => (
                    "p.id in (select rowid from mk_permits_fts where mk_permits_fts match ?)",
                    format!("permit_type : ({q})"),
                ),
                Target::Risks => (
                    "r.id in (select rowid from mk_risks_fts where mk_risks_fts match ?)",
                    q,
                ),
            })
        }
        Backend::Postgres => {
            let q = tsquery(query)?;
            Some((
                match target {
                    Target::Suppliers => "s.tsv @@ to_tsquery('simple', ?)",
                    Target::Awards => "a.tsv @@ to_tsquery('simple', ?)",
                    Target::Opportunities => "o.tsv @@ to_tsquery('simple', ?)",
                    Target::Permits => "p.tsv @@ to_tsquery('simple', ?)",
                    Target::PermitType => "p.type_tsv @@ to_tsquery('simple', ?)",
                    Target::Risks => "r.tsv @@ to_tsquery('simple', ?)",
                },
                q,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsquery_keeps_only_words() {
        assert_eq!(
            tsquery("Cartón y EMPAQUES").as_deref(),
            Some("carton:* & empaques:*")
        );
        assert_eq!(tsquery("B&D S.A.").as_deref(), Some("b & d & s"));
        assert_eq!(
            tsquery("'); drop table x; --").as_deref(),
            Some("drop:* & table:* & x")
        );
        assert_eq!(tsquery("  ¿?  "), None);
    }

    /// Both engines get the same terms: no function words, prefixes from three letters.
    #[test]
    fn both_engines_search_the_same_terms() {
        assert_eq!(
            fts_query("Material de curación").as_deref(),
            Some("\"material\"* \"curacion\"*")
        );
        assert_eq!(
            tsquery("Material de curación").as_deref(),
            Some("material:* & curacion:*")
        );
        assert_eq!(fts_query("Grupo GE").as_deref(), Some("\"grupo\"* \"ge\""));
        assert_eq!(tsquery("Grupo GE").as_deref(), Some("grupo:* & ge"));
        assert_eq!(fts_query("de").as_deref(), Some("\"de\""));
    }
}
