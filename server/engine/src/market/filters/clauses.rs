//! The SQL side of the filters: bound values, the WHERE clause under construction and
//! [`where_for`], which turns [`Resolved`] filters into it for each kind.

use super::*;
use crate::market::generator::BUYERS;

/// A bound SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Text(String),
    Int(i64),
    Real(f64),
}

/// A WHERE clause under construction.
#[derive(Debug, Default, Clone)]
pub struct Where {
    pub clauses: Vec<String>,
    pub binds: Vec<Val>,
}

impl Where {
    pub fn push(&mut self, clause: impl Into<String>, binds: impl IntoIterator<Item = Val>) {
        self.clauses.push(clause.into());
        self.binds.extend(binds);
    }
    pub fn sql(&self) -> String {
        if self.clauses.is_empty() {
            "1=1".into()
        } else {
            self.clauses.join(" and ")
        }
    }
}

/// Known buyer abbreviations (upper-case) matched exactly; anything else matches names.
pub fn buyer_clause(col_code: &str, col_name: &str, buyer: &str) -> (String, Vec<Val>) {
    let upper = buyer.trim().to_uppercase();
    if BUYERS.iter().any(|b| b.0 == upper) {
        (format!("{col_code} = ?"), vec![Val::Text(upper)])
    } else {
        (
            // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
            // The text is matched literally: its `%` and `_` are escaped.
            format!(
                "({col_code} = ? or lower({col_name}) like lower(?){LIKE_ESCAPE} \
                 or lower({col_code}) like lower(?){LIKE_ESCAPE})"
            ),
            vec![
                Val::Text(buyer.trim().to_string()),
                Val::Text(like_contains(buyer.trim())),
                Val::Text(like_contains(buyer.trim())),
            ],
        )
    }
}

fn scian_clause(col: &str, prefixes: &[String]) -> (String, Vec<Val>) {
    let parts: Vec<String> = prefixes
        .iter()
        .map(|p| {
            if p.len() == 6 {
                format!("{col} = ?")
            } else {
                format!("{col} like ?{LIKE_ESCAPE}")
            }
        })
        .collect();
    let binds = prefixes
        .iter()
        .map(|p| {
            if p.len() == 6 {
                Val::Text(p.clone())
            } else {
                Val::Text(like_prefix(p))
            }
        })
        .collect();
    (format!("({})", parts.join(" or ")), binds)
}

fn states_clause(alias: &str, n: usize) -> String {
    format!("{alias}.state_code in ({})", crate::base::store::marks(n))
}

/// Builds the WHERE clause for `kind` over its table alias.
pub fn where_for(kind: MarketKind, r: &Resolved, query: Option<&str>, backend: Backend) -> Where {
    let mut w = Where::default();
    let text =
        |target: Target| query.and_then(|q| fulltext::condition(backend, target, q, r.state));
    match kind {
        MarketKind::Suppliers => {
            if let Some((c, q)) = text(Target::Suppliers) {
                w.push(c, [Val::Text(q)]);
            }
            if let Some(s) = r.state {
                w.push("s.state_code = ?", [Val::Int(s.code().into())]);
            }
            if !r.states.is_empty() {
                w.push(
                    states_clause("s", r.states.len()),
                    r.states.iter().map(|s| Val::Int(s.code().into())),
                );
            }
            if let Some(m) = &r.municipality {
                w.push("s.municipality = ?", [Val::Text(m.clone())]);
            }
            if !r.scian.is_empty() {
                let (c, b) = scian_clause("s.scian", &r.scian);
                w.push(c, b);
            }
            if let Some(b) = r.size_band {
                w.push("s.size_band = ?", [Val::Text(b.key().into())]);
            }
            if let Some(rfc) = &r.rfc {
                w.push("s.rfc = ?", [Val::Text(rfc.clone())]);
            }
            match r.has_awards {
                Some(true) => w.push("s.awards_count > 0", []),
                Some(false) => w.push("s.awards_count = 0", []),
                None => {}
            }
            if r.buyer.is_some() || r.date_from.is_some() || r.date_to.is_some() {
                let mut sub = Where::default();
                sub.push("a.supplier_id = s.id", []);
                award_side(&mut sub, r);
                w.push(
                    format!("exists (select 1 from mk_awards a where {})", sub.sql()),
                    sub.binds,
                );
            }
        }
        MarketKind::Awards => {
            if let Some((c, q)) = text(Target::Awards) {
                w.push(c, [Val::Text(q)]);
            }
            if let Some(s) = r.state {
                w.push("a.state_code = ?", [Val::Int(s.code().into())]);
            }
            if !r.states.is_empty() {
                w.push(
                    states_clause("a", r.states.len()),
                    r.states.iter().map(|s| Val::Int(s.code().into())),
                );
            }
            if !r.scian.is_empty() {
                let (c, b) = scian_clause("a.scian", &r.scian);
                w.push(c, b);
            }
            if let Some(p) = r.procedure {
                w.push("a.procedure = ?", [Val::Text(p.key().into())]);
            }
            if let Some(v) = r.amount_min {
                w.push("a.amount >= ?", [Val::Real(v)]);
            }
            if let Some(v) = r.amount_max {
                w.push("a.amount <= ?", [Val::Real(v)]);
            }
            if let Some(rfc) = &r.rfc {
                w.push("a.supplier_id = ?", [Val::Text(rfc.clone())]);
            }
            award_side(&mut w, r);
        }
        MarketKind::Opportunities => {
            if let Some((c, q)) = text(Target::Opportunities) {
                w.push(c, [Val::Text(q)]);
            }
            if let Some(s) = r.state {
                w.push("o.state_code = ?", [Val::Int(s.code().into())]);
            }
            if !r.states.is_empty() {
                w.push(
                    states_clause("o", r.states.len()),
                    r.states.iter().map(|s| Val::Int(s.code().into())),
                );
            }
            if !r.scian.is_empty() {
                let (c, b) = scian_clause("o.scian", &r.scian);
                w.push(c, b);
            }
            if let Some(b) = &r.buyer {
                let (c, b) = buyer_clause("o.buyer", "o.buyer_name", b);
                w.push(c, b);
            }
            if let Some(p) = r.procedure {
                w.push("o.procedure = ?", [Val::Text(p.key().into())]);
            }
            if let Some(v) = r.amount_min {
                w.push("o.amount >= ?", [Val::Real(v)]);
            }
            if let Some(v) = r.amount_max {
                w.push("o.amount <= ?", [Val::Real(v)]);
            }
            if let Some(d) = &r.date_from {
                w.push("o.published >= ?", [Val::Text(d.clone())]);
            }
            if let Some(d) = &r.date_to {
                w.push("o.published <= ?", [Val::Text(d.clone())]);
            }
            if let Some(s) = &r.status {
                w.push("o.status = ?", [Val::Text(s.clone())]);
            }
        }
        MarketKind::Permits => {
            if let Some((c, q)) = text(Target::Permits) {
                w.push(c, [Val::Text(q)]);
            }
            if let Some(s) = r.state {
                w.push("p.state_code = ?", [Val::Int(s.code().into())]);
            }
            if !r.states.is_empty() {
                w.push(
                    states_clause("p", r.states.len()),
                    r.states.iter().map(|s| Val::Int(s.code().into())),
                );
            }
            if let Some(rfc) = &r.rfc {
                w.push("p.holder_rfc = ?", [Val::Text(rfc.clone())]);
            }
            if let Some((c, q)) = r
                .permit_type
                .as_deref()
                .and_then(|t| fulltext::condition(backend, Target::PermitType, t, None))
            {
                w.push(c, [Val::Text(q)]);
            }
            if let Some(s) = &r.status {
                w.push("p.status = ?", [Val::Text(s.clone())]);
            }
            if let Some(d) = &r.date_from {
                w.push("p.date >= ?", [Val::Text(d.clone())]);
            }
            if let Some(d) = &r.date_to {
                w.push("p.date <= ?", [Val::Text(d.clone())]);
            }
        }
        MarketKind::Risks => {
            if let Some((c, q)) = text(Target::Risks) {
                w.push(c, [Val::Text(q)]);
            }
            if let Some(rfc) = &r.rfc {
                w.push("r.rfc = ?", [Val::Text(rfc.clone())]);
            }
            if let Some(k) = r.mark_kind {
                w.push("r.mark_kind = ?", [Val::Text(k.key().into())]);
            }
            if let Some(d) = &r.date_from {
                w.push("r.date >= ?", [Val::Text(d.clone())]);
            }
            if let Some(d) = &r.date_to {
                w.push("r.date <= ?", [Val::Text(d.clone())]);
            }
        }
    }
    w
}

/// Buyer and date window on the awards alias `a`.
fn award_side(w: &mut Where, r: &Resolved) {
    if let Some(b) = &r.buyer {
        let (c, b) = buyer_clause("a.buyer", "a.buyer_name", b);
        w.push(c, b);
    }
    if let Some(d) = &r.date_from {
        w.push("a.date >= ?", [Val::Text(d.clone())]);
    }
    if let Some(d) = &r.date_to {
        w.push("a.date <= ?", [Val::Text(d.clone())]);
    }
}
