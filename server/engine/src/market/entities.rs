//! Entity resolution of market suppliers, and all its SQL. The same supplier appears
//! in procurement data with an RFC (its `mk_suppliers.id`), a hashed RFC
//! (`rfc-hash:<hex>`), a state registry id (`<scheme>:<id>`) or only a name
//! (`ID:<party id>`). A supplier without an RFC — an *alias* — is linked in
//! `mk_supplier_links` to the one RFC'd supplier it is:
//!
//! 1. **RFC** (`rfc`, confidence [`RFC_CONFIDENCE`] 1.0): the alias publishes that RFC
//!    among its other identifiers (`mk_suppliers.rfc_claimed`) and a supplier with
//!    that RFC exists;
//! 2. **name** (`nombre`): the alias's legal name, folded by [`name_key`], equals the
//!    folded name of exactly one RFC'd supplier — confidence [`NAME_EXACT`] 0.9 when
//!    the names are equal with their suffixes, [`NAME_FOLDED`] 0.8 when only once the
//!    company suffixes are folded. A name shared by two or more RFCs is *ambiguous*:
//!    no link (a name link the alias had is removed), counted.
//!
//! Never merged: two suppliers with RFCs (different RFCs are different taxpayers, even
//! under one name) — only suppliers without an RFC are ever aliases — and an RFC link
//! is never replaced by a name link. Resolution is idempotent: it upserts only what
//! changed, and its counts are the links it created or changed.
//!
//! [`resolve`] works on given suppliers (an OCDS run's, at its end) with batched
//! queries over indexed columns (`name_key`, `rfc_claimed`, `id`), never a scan per
//! supplier; [`resolve_all`] pages through every supplier (`luna-server
//! resolve-suppliers`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::base::catalog::text::fold;
use crate::base::error::EngineResult;
use crate::base::store::{numbered, Conn, Store};
use crate::market::types::SupplierIdentity;

/// An alias that publishes the RFC of an existing supplier.
pub const RFC_CONFIDENCE: f64 = 1.0;
/// Same legal name once folded (accents, case, punctuation), suffix included.
pub const NAME_EXACT: f64 = 0.9;
/// Same legal name only once the company suffixes are folded too.
pub const NAME_FOLDED: f64 = 0.8;

/// Ids per `in (…)` list.
const CHUNK: usize = 400;
/// Suppliers per page of [`resolve_all`].
const PAGE: i64 = 2_000;
/// Identities a company file lists.
const IDENTITIES_SHOWN: i64 = 50;

/// Company suffixes folded away at the end of a name, written without spaces or
/// punctuation (the way [`name_key`] compares them: "S. de R.L. de C.V." is
/// `sderldecv`). Removed repeatedly from the end, longest first, so "S.A.P.I. de
/// C.V., SOFOM, E.N.R." folds entirely; a name is never folded to nothing.
pub const COMPANY_SUFFIXES: &[&str] = &[
    "sociedadanonimadecapitalvariable",
    "sociedadanonima",
    "sociedadcivil",
    "asociacioncivil",
    "sociedadderesponsabilidadlimitada",
    "sadecv",     // S.A. de C.V.
    "sabdecv",    // S.A.B. de C.V.
    "sapidecv",   // S.A.P.I. de C.V.
    "sapibdecv",  // S.A.P.I.B. de C.V.
    "sasdecv",    // S.A.S. de C.V.
    "sderldecv",  // S. de R.L. de C.V.
    "srldecv",    // S.R.L. de C.V.
    "scderldecv", // S.C. de R.L. de C.V.
    "sderl",      // S. de R.L.
    "scderl",     // S.C. de R.L.
    "sprderl",    // S.P.R. de R.L.
    "sprderi",    // S.P.R. de R.I.
    "sdeencv",    // S. de en C. V.
    "sencdecv",   // S. en C. de C.V.
    "decv",       // de C.V. (after a suffix written apart)
    "derl",       // de R.L.
    "sa",         // S.A.
    "sab",        // S.A.B.
    "sapi",       // S.A.P.I.
    "sapib",      // S.A.P.I.B.
    "sas",        // S.A.S.
    "srl",        // S.R.L.
    "sc",         // S.C.
    "scl",        // S.C.L.
    "spr",        // S.P.R.
    "ac",         // A.C.
    "iap",        // I.A.P.
    "sofom",      // SOFOM
    "enr",        // E.N.R.
    "er",         // E.R.
    "sofomenr",   // SOFOM E.N.R.
];

/// The longest suffix, in tokens ("s a p i b d e c v" is not a thing, but a spelled
/// out form can be many words).
const SUFFIX_TOKENS_MAX: usize = 9;

/// A legal name folded for matching: lowercase, accents and punctuation removed
/// ([`fold`]), then the [`COMPANY_SUFFIXES`] removed from the end. Empty for a name
/// with no letters or digits.
pub fn name_key(name: &str) -> String {
    let folded = fold(name).replace('&', " ");
    let mut tokens: Vec<&str> = folded.split_whitespace().collect();
    'strip: while tokens.len() > 1 {
        for k in (1..=SUFFIX_TOKENS_MAX.min(tokens.len() - 1)).rev() {
            let tail: String = tokens[tokens.len() - k..].concat();
            if COMPANY_SUFFIXES.contains(&tail.as_str()) {
                tokens.truncate(tokens.len() - k);
                continue 'strip;
            }
        }
        break;
    }
    tokens.join(" ")
}

/// How a supplier id identifies it, in Spanish (the company file's «otras
/// identidades»).
pub fn identity_kind(id: &str) -> &'static str {
    if id.starts_with("rfc-hash:") {
        "RFC cifrado"
    } else if id.starts_with("ID:") {
        "solo nombre"
    } else if id.contains(':') {
        "registro estatal"
    } else {
        "RFC"
    }
}

/// What a resolution linked (links created or changed; an unchanged link is not
/// counted again).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Resolution {
    /// Aliases linked because they publish the RFC.
    pub linked_by_rfc: u64,
    /// Aliases linked by their folded legal name.
    pub linked_by_name: u64,
    /// Names (folded) of resolved aliases shared by two or more RFCs: not linked.
    pub ambiguous_names: u64,
}

impl Resolution {
    pub fn add(&mut self, other: &Resolution) {
        self.linked_by_rfc += other.linked_by_rfc;
        self.linked_by_name += other.linked_by_name;
        self.ambiguous_names += other.ambiguous_names;
    }
}

#[derive(sqlx::FromRow)]
struct SupplierNames {
    id: String,
    rfc: Option<String>,
    name: String,
    name_key: Option<String>,
    rfc_claimed: Option<String>,
}

/// Resolves the given suppliers (aliases and RFC'd ones alike: a new RFC'd supplier
/// can be what an earlier alias was waiting for), in transactions of [`CHUNK`] ids.
pub async fn resolve(conn: &mut Conn, ids: &[String]) -> EngineResult<Resolution> {
    let mut total = Resolution::default();
    for chunk in ids.chunks(CHUNK) {
        let mut tx = sqlx::Connection::begin(&mut *conn).await?;
        let r = resolve_chunk(&mut tx, chunk).await?;
        tx.commit().await?;
        total.add(&r);
    }
    Ok(total)
}

/// Resolves every supplier, a page of [`PAGE`] ids at a time (keyset by id).
pub async fn resolve_all(store: &Store) -> EngineResult<Resolution> {
    let mut conn = store.pool().acquire().await?;
    let mut total = Resolution::default();
    let mut after = String::new();
    loop {
        let ids: Vec<(String,)> =
            sqlx::query_as("select id from mk_suppliers where id > $1 order by id limit $2")
                .bind(&after)
                .bind(PAGE)
                .fetch_all(&mut *conn)
                .await?;
        let Some((last,)) = ids.last() else { break };
        after = last.clone();
        let ids: Vec<String> = ids.into_iter().map(|(id,)| id).collect();
        let r = resolve(&mut conn, &ids).await?;
        total.add(&r);
    }
    Ok(total)
}

async fn load(
    conn: &mut Conn,
    column: &str,
    values: &[String],
) -> EngineResult<Vec<SupplierNames>> {
    let mut out = Vec::new();
    for chunk in values.chunks(CHUNK) {
        let sql = numbered(&format!(
            "select id, rfc, name, name_key, rfc_claimed from mk_suppliers where {column} in ({})",
            crate::base::store::marks(chunk.len())
        ));
        let mut q = sqlx::query_as::<_, SupplierNames>(&sql);
        for v in chunk {
            q = q.bind(v.as_str());
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

/// Upserts one link; true when it was created or changed.
async fn link(
    conn: &mut Conn,
    alias: &str,
    canonical: &str,
    method: &str,
    confidence: f64,
) -> EngineResult<bool> {
    let changed = sqlx::query(
        "insert into mk_supplier_links (alias_id, canonical_id, method, confidence, linked_at) \
         values ($1, $2, $3, $4, $5) \
         on conflict (alias_id) do update set canonical_id = excluded.canonical_id, method = excluded.method, \
         confidence = excluded.confidence, linked_at = excluded.linked_at \
         where mk_supplier_links.canonical_id <> excluded.canonical_id or mk_supplier_links.method <> excluded.method \
         or mk_supplier_links.confidence <> excluded.confidence",
    )
    .bind(alias)
    .bind(canonical)
    .bind(method)
    .bind(confidence)
    .bind(crate::base::clock::now_ms())
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(changed > 0)
}

async fn resolve_chunk(conn: &mut Conn, ids: &[String]) -> EngineResult<Resolution> {
    let mut out = Resolution::default();
    // ---- the suppliers' name keys, stored where they changed
    let rows = load(conn, "id", ids).await?;
    let mut keys = BTreeSet::new();
    let mut rfcs = BTreeSet::new();
    for r in &rows {
        let key = name_key(&r.name);
        if r.name_key.as_deref() != Some(key.as_str()) {
            sqlx::query("update mk_suppliers set name_key = $1 where id = $2")
                .bind(&key)
                .bind(&r.id)
                .execute(&mut *conn)
                .await?;
        }
        if !key.is_empty() {
            keys.insert(key);
        }
        match (&r.rfc, &r.rfc_claimed) {
            (Some(_), _) => rfcs.insert(r.id.clone()),
            (None, Some(claimed)) => rfcs.insert(claimed.clone()),
            (None, None) => false,
        };
    }

    // ---- 1. RFC: aliases that publish the RFC of an existing supplier
    let rfcs: Vec<String> = rfcs.into_iter().collect();
    let existing: BTreeSet<String> = load(conn, "id", &rfcs)
        .await?
        .into_iter()
        .filter(|s| s.rfc.is_some())
        .map(|s| s.id)
        .collect();
    let existing: Vec<String> = existing.into_iter().collect();
    for alias in load(conn, "rfc_claimed", &existing).await? {
        if let (None, Some(claimed)) = (&alias.rfc, &alias.rfc_claimed) {
            if claimed != &alias.id && link(conn, &alias.id, claimed, "rfc", RFC_CONFIDENCE).await?
            {
                out.linked_by_rfc += 1;
            }
        }
    }

    // ---- 2. name: groups of one folded name
    let keys: Vec<String> = keys.into_iter().collect();
    let mut groups: BTreeMap<String, Vec<SupplierNames>> = BTreeMap::new();
    for s in load(conn, "name_key", &keys).await? {
        if let Some(k) = s.name_key.clone() {
            groups.entry(k).or_default().push(s);
        }
    }
    // The links the groups' aliases already have, in one batched query.
    let all_aliases: Vec<String> = groups
        .values()
        .flatten()
        .filter(|s| s.rfc.is_none())
        .map(|s| s.id.clone())
        .collect();
    let methods = methods_of(conn, &all_aliases).await?;
    for (_, members) in groups {
        let (with_rfc, aliases): (Vec<&SupplierNames>, Vec<&SupplierNames>) =
            members.iter().partition(|s| s.rfc.is_some());
        if aliases.is_empty() {
            continue;
        }
        let alias_ids: Vec<String> = aliases.iter().map(|a| a.id.clone()).collect();
        if let [canonical] = with_rfc.as_slice() {
            let exact = fold(&canonical.name);
            for a in &aliases {
                if methods.get(&a.id).map(String::as_str) == Some("rfc") {
                    continue;
                }
                let confidence = if fold(&a.name) == exact {
                    NAME_EXACT
                } else {
                    NAME_FOLDED
                };
                if link(conn, &a.id, &canonical.id, "nombre", confidence).await? {
                    out.linked_by_name += 1;
                }
            }
        } else {
            if with_rfc.len() > 1 {
                out.ambiguous_names += 1;
            }
            // No single RFC carries this name (any more): a name link goes.
            let stale: Vec<&String> = alias_ids
                .iter()
                .filter(|id| methods.get(*id).map(String::as_str) == Some("nombre"))
                .collect();
            for id in stale {
                sqlx::query(
                    "delete from mk_supplier_links where alias_id = $1 and method = 'nombre'",
                )
                .bind(id)
                .execute(&mut *conn)
                .await?;
            }
        }
    }
    Ok(out)
}

/// The link method of each of the aliases that has one.
async fn methods_of(conn: &mut Conn, aliases: &[String]) -> EngineResult<HashMap<String, String>> {
    let mut out = HashMap::new();
    for chunk in aliases.chunks(CHUNK) {
        let sql = numbered(&format!(
            "select alias_id, method from mk_supplier_links where alias_id in ({})",
            crate::base::store::marks(chunk.len())
        ));
        let mut q = sqlx::query_as::<_, (String, String)>(&sql);
        for id in chunk {
            q = q.bind(id.as_str());
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

#[derive(sqlx::FromRow)]
struct LinkedRow {
    id: String,
    name: String,
    method: String,
    confidence: f64,
}

impl From<LinkedRow> for SupplierIdentity {
    fn from(r: LinkedRow) -> SupplierIdentity {
        SupplierIdentity {
            r#ref: format!("company:{}", r.id),
            kind: identity_kind(&r.id).to_string(),
            id: r.id,
            name: r.name,
            method: r.method,
            confidence: r.confidence,
        }
    }
}

/// A supplier's other identities (the aliases linked to it, most confident first)
/// and, for an alias, the supplier it belongs to.
pub async fn identities_of(
    store: &Store,
    id: &str,
) -> EngineResult<(Vec<SupplierIdentity>, Option<SupplierIdentity>)> {
    let aliases: Vec<LinkedRow> = sqlx::query_as(
        "select l.alias_id as id, s.name, l.method, l.confidence from mk_supplier_links l \
         join mk_suppliers s on s.id = l.alias_id where l.canonical_id = $1 \
         order by l.confidence desc, l.alias_id limit $2",
    )
    .bind(id)
    .bind(IDENTITIES_SHOWN)
    .fetch_all(store.pool())
    .await?;
    let owner: Option<LinkedRow> = sqlx::query_as(
        "select l.canonical_id as id, s.name, l.method, l.confidence from mk_supplier_links l \
         join mk_suppliers s on s.id = l.canonical_id where l.alias_id = $1",
    )
    .bind(id)
    .fetch_optional(store.pool())
    .await?;
    Ok((
        aliases.into_iter().map(SupplierIdentity::from).collect(),
        owner.map(SupplierIdentity::from),
    ))
}

#[cfg(test)]
#[path = "entities_tests.rs"]
mod tests;
