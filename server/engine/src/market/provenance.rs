//! Where an imported Licitación's or Adjudicación's figures come from: the publisher,
//! the file that was imported (`mk_import_runs`) and the release (ocid, release id,
//! release date), so a person can open the original record. Rows no import wrote
//! (the generated demo market) have none. Looked up for a page of rows at once.

use std::collections::HashMap;

use sqlx::Row;

use crate::base::error::EngineResult;
use crate::base::store::{numbered, Store};

pub use luna_protocol::evidence::Provenance;

/// Which table the ids name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    Award,
    Opportunity,
}

/// The provenance of the given rows, by id (rows without one are left out).
pub async fn of(store: &Store, kind: Of, ids: &[i64]) -> EngineResult<HashMap<i64, Provenance>> {
    let table = match kind {
        Of::Award => "mk_awards",
        Of::Opportunity => "mk_opportunities",
    };
    let mut out = HashMap::new();
    for chunk in ids.chunks(200) {
        let placeholders = crate::base::store::marks(chunk.len());
        let sql = numbered(&format!(
            "select t.id, r.publisher, r.source_path, t.ocid, t.release_id, t.release_date \
             from {table} t join mk_import_runs r on r.id = t.import_run where t.id in ({placeholders})"
        ));
        let mut q = sqlx::query(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        for row in q.fetch_all(store.pool()).await? {
            out.insert(
                row.try_get::<i64, _>(0)?,
                Provenance {
                    publisher: row.try_get(1)?,
                    file: row.try_get(2)?,
                    ocid: row.try_get(3)?,
                    release_id: row.try_get(4)?,
                    release_date: row.try_get(5)?,
                },
            );
        }
    }
    Ok(out)
}
