//! Where an imported Licitación's or Adjudicación's figures come from: the publisher,
//! the file that was imported (`mk_import_runs`) and the release (ocid, release id,
//! release date), so a person can open the original record. Rows no import wrote
//! (the generated demo market) have none. Looked up for a page of rows at once.

use std::collections::HashMap;

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
        type Row = (
            i64,
            Option<String>,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let mut q = sqlx::query_as::<_, Row>(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        for (id, publisher, file, ocid, release_id, release_date) in
            q.fetch_all(store.pool()).await?
        {
            out.insert(
                id,
                Provenance {
                    publisher,
                    file,
                    ocid,
                    release_id,
                    release_date,
                },
            );
        }
    }
    Ok(out)
}
