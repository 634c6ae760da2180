//! The Empresas directory: companies a team can prospect, whether or not they sell to
//! government. Empresas ≠ Proveedores: a company is *linked* to a market supplier
//! (`supplier_id`) when the RFC matches, or, without an RFC, when the folded name
//! matches exactly. `company_save` keys a saved company by its RFC (or directory id)
//! and a `claim_token` bound to the workspace, so two saves never duplicate.

use luna_protocol::tool::ResultRow;
use serde::Serialize;

use crate::base::catalog::states::State;
use crate::base::catalog::text::fold;
use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::base::ids::sha256_hex;
use crate::base::store::Store;

/// A `co_companies` row as stored (read with `FromRow`, `COLS`).
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct Company {
    pub id: String,
    pub rfc: Option<String>,
    pub name: String,
    pub state: Option<String>,
    pub city: Option<String>,
    pub sector: Option<String>,
    pub employees: Option<String>,
    pub domain: Option<String>,
    /// The market supplier (Proveedor) this company is, when linked.
    pub supplier_id: Option<String>,
    pub source: String,
}

impl Company {
    pub fn ref_(&self) -> String {
        format!("company:{}", self.id)
    }

    /// The key a CRM record carries as `entity_id`: the RFC when known.
    pub fn entity_id(&self) -> String {
        self.rfc.clone().unwrap_or_else(|| self.id.clone())
    }

    pub fn label(&self) -> String {
        match (&self.city, &self.state) {
            (Some(c), Some(s)) => format!("{} ({c}, {s})", self.name),
            (None, Some(s)) => format!("{} ({s})", self.name),
            _ => self.name.clone(),
        }
    }

    /// The envelope row, with the workspace's claim token for `company_save`.
    pub fn to_row(&self, workspace_id: &str) -> ResultRow {
        ResultRow::new(self.ref_(), self.label())
            .with("name", &self.name)
            .with("rfc", &self.rfc)
            .with("state", &self.state)
            .with("city", &self.city)
            .with("sector", &self.sector)
            .with("employees", &self.employees)
            .with("domain", &self.domain)
            .with(
                "supplier_ref",
                self.supplier_id.as_ref().map(|s| format!("company:{s}")),
            )
            .with("is_supplier", self.supplier_id.is_some())
            .with("claim_token", claim_token(workspace_id, &self.id))
    }
}

/// The token `company_save` takes: bound to the workspace and the company.
pub fn claim_token(workspace_id: &str, company_id: &str) -> String {
    let h = sha256_hex(&format!("claim:{workspace_id}:{company_id}"));
    format!("clm_{}", &h[..24])
}

const COLS: &str = "id, rfc, name, state, city, sector, employees, domain, supplier_id, source";

#[derive(Debug, Clone, Default)]
pub struct DirectoryQuery {
    pub query: Option<String>,
    pub rfc: Option<String>,
    pub state: Option<String>,
    pub limit: u32,
    pub offset: u64,
}

/// Searches the directory; returns the page and whether more rows follow.
pub async fn search(store: &Store, q: &DirectoryQuery) -> EngineResult<(Vec<Company>, bool)> {
    let mut sql = format!("select {COLS} from co_companies where 1 = 1");
    let mut binds: Vec<String> = Vec::new();
    if let Some(text) = q.query.as_deref().map(fold).filter(|t| !t.is_empty()) {
        for term in text.split(' ') {
            sql.push_str(" and name_folded like ?");
            sql.push_str(crate::base::store::LIKE_ESCAPE);
            binds.push(crate::base::store::like_contains(term));
        }
    }
    if let Some(rfc) = q
        .rfc
        .as_deref()
        .map(|r| r.trim().to_uppercase())
        .filter(|r| !r.is_empty())
    {
        sql.push_str(" and rfc = ?");
        binds.push(rfc);
    }
    if let Some(state) = &q.state {
        sql.push_str(" and state = ?");
        binds.push(state.clone());
    }
    sql.push_str(" order by supplier_id is null, name_folded, id limit ? offset ?");
    let sql = crate::base::store::numbered(&sql);
    let mut query = sqlx::query_as::<_, Company>(&sql);
    for b in &binds {
        query = query.bind(b);
    }
    let limit = q.limit.max(1);
    let rows = query
        .bind(i64::from(limit) + 1)
        .bind(i64::try_from(q.offset).unwrap_or(i64::MAX))
        .fetch_all(store.pool())
        .await?;
    let has_more = rows.len() > limit as usize;
    let out = rows.into_iter().take(limit as usize).collect();
    Ok((out, has_more))
}

/// A company by `company:<id>` (directory id or RFC). A market supplier that is not
/// in the directory yet is taken from the supplier row (linked to itself).
pub async fn get(store: &Store, company_ref: &str) -> EngineResult<Option<Company>> {
    let key = company_ref
        .strip_prefix("company:")
        .unwrap_or(company_ref)
        .trim();
    if key.is_empty() {
        return Ok(None);
    }
    let row = sqlx::query_as::<_, Company>(&format!(
        "select {COLS} from co_companies where id = $1 or rfc = $2 limit 1"
    ))
    .bind(key)
    .bind(key.to_uppercase())
    .fetch_optional(store.pool())
    .await?;
    if let Some(c) = row {
        return Ok(Some(c));
    }
    let row = sqlx::query_as::<_, SupplierCompany>(
        "select id, rfc, name, state_code, municipality, scian, size_band, website from mk_suppliers
         where id = $1 or rfc = $2 limit 1",
    )
    .bind(key)
    .bind(key.to_uppercase())
    .fetch_optional(store.pool())
    .await?;
    Ok(row.map(SupplierCompany::into_company))
}

/// The `mk_suppliers` columns a directory company is made from.
#[derive(sqlx::FromRow)]
struct SupplierCompany {
    id: String,
    rfc: Option<String>,
    name: String,
    state_code: Option<i64>,
    municipality: Option<String>,
    scian: Option<String>,
    size_band: Option<String>,
    website: Option<String>,
}

impl SupplierCompany {
    fn into_company(self) -> Company {
        Company {
            rfc: self.rfc,
            name: self.name,
            state: self
                .state_code
                .and_then(|c| u8::try_from(c).ok())
                .and_then(State::from_code)
                .map(|s| s.name().to_owned()),
            city: self.municipality,
            sector: self
                .scian
                .as_deref()
                .and_then(crate::base::catalog::scian::name_of)
                .map(str::to_owned),
            employees: self
                .size_band
                .as_deref()
                .map(employees_for_size)
                .map(str::to_owned),
            domain: self.website.map(|w| {
                w.trim_start_matches("https://")
                    .trim_start_matches("http://")
                    .trim_start_matches("www.")
                    .trim_end_matches('/')
                    .to_owned()
            }),
            supplier_id: Some(self.id.clone()),
            source: "proveedores".into(),
            id: self.id,
        }
    }
}

fn employees_for_size(size: &str) -> &'static str {
    match size {
        "micro" => "1-10",
        "pequena" => "11-50",
        "mediana" => "51-200",
        _ => "201-1000",
    }
}

async fn insert(store: &Store, c: &Company) -> EngineResult<()> {
    sqlx::query(
        "insert into co_companies (id, rfc, name, name_folded, state, city, sector, employees, domain, supplier_id, source, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict do nothing",
    )
    .bind(&c.id)
    .bind(&c.rfc)
    .bind(&c.name)
    .bind(fold(&c.name))
    .bind(&c.state)
    .bind(&c.city)
    .bind(&c.sector)
    .bind(&c.employees)
    .bind(&c.domain)
    .bind(&c.supplier_id)
    .bind(&c.source)
    .bind(now_ms())
    .execute(store.pool())
    .await?;
    Ok(())
}

const FIRST: &[&str] = &[
    "Grupo",
    "Industrias",
    "Comercializadora",
    "Servicios",
    "Distribuidora",
    "Tecnologías",
    "Logística",
    "Alimentos",
    "Consultores",
    "Manufacturas",
];
const SECOND: &[&str] = &[
    "Altamira",
    "del Valle",
    "Sierra Madre",
    "Pacífico",
    "Anáhuac",
    "Tarasca",
    "Cuauhtémoc",
    "Las Lomas",
    "Río Bravo",
    "Mayab",
    "Bajío Norte",
    "Huasteca",
];
const SECTORS: &[&str] = &[
    "Comercio al por mayor",
    "Manufactura de alimentos",
    "Servicios profesionales",
    "Transporte y almacenamiento",
    "Construcción",
    "Tecnologías de la información",
];
const EMPLOYEES: &[&str] = &["1-10", "11-50", "51-200", "201-1000", "1000+"];

/// Seeds the demo directory once: a share of the market suppliers (linked by RFC) plus
/// generated companies that do not sell to government. Returns rows added.
pub async fn ensure_demo(store: &Store) -> EngineResult<usize> {
    let existing: i64 = sqlx::query_scalar("select count(*) from co_companies")
        .fetch_one(store.pool())
        .await?;
    if existing > 0 {
        return Ok(0);
    }
    let mut added = 0;
    let rows = sqlx::query_as::<_, SupplierCompany>(
        "select id, rfc, name, state_code, municipality, scian, size_band, website from mk_suppliers
         where rfc is not null order by id limit 400",
    )
    .fetch_all(store.pool())
    .await?;
    for (i, r) in rows.into_iter().enumerate() {
        if i % 2 == 0 {
            let mut c = r.into_company();
            c.source = "directorio".into();
            insert(store, &c).await?;
            added += 1;
        }
    }
    for i in 0..120usize {
        let name = format!(
            "{} {} {}",
            FIRST[i % FIRST.len()],
            SECOND[(i / FIRST.len()) % SECOND.len()],
            if i % 3 == 0 {
                "S.A. de C.V."
            } else {
                "S. de R.L. de C.V."
            }
        );
        let st = State::from_code(u8::try_from(i % 32 + 1).unwrap_or(1));
        let state = st.map(|s| s.name().to_owned());
        let slug: String = fold(&name).split(' ').take(3).collect::<Vec<_>>().join("");
        let c = Company {
            id: format!("emp-{:04}", i + 1),
            rfc: None,
            name,
            city: st.map(|s| crate::base::catalog::states::capital(s).to_owned()),
            state,
            sector: Some(SECTORS[i % SECTORS.len()].to_owned()),
            employees: Some(EMPLOYEES[i % EMPLOYEES.len()].to_owned()),
            domain: Some(format!("{slug}.com.mx")),
            supplier_id: None,
            source: "directorio".into(),
        };
        insert(store, &c).await?;
        added += 1;
    }
    link_suppliers(store).await?;
    Ok(added)
}

/// An id and a name (`link_suppliers`).
#[derive(sqlx::FromRow)]
struct Named {
    id: String,
    name: String,
}

/// Links directory companies to market suppliers: by RFC, else by exact folded name.
/// Returns how many links were added.
pub async fn link_suppliers(store: &Store) -> EngineResult<u64> {
    let by_rfc = sqlx::query(
        "update co_companies set supplier_id = (select s.id from mk_suppliers s where s.rfc = co_companies.rfc limit 1)
         where supplier_id is null and rfc is not null
           and exists (select 1 from mk_suppliers s where s.rfc = co_companies.rfc)",
    )
    .execute(store.pool())
    .await?
    .rows_affected();
    let unlinked = sqlx::query_as::<_, Named>(
        "select id, name_folded as name from co_companies where supplier_id is null and rfc is null",
    )
    .fetch_all(store.pool())
    .await?;
    let mut by_name = 0;
    for Named { id, name } in unlinked {
        let compact = name.replace(' ', "");
        // Short tokens (legal suffixes split by punctuation: "s a de c v") are left out.
        let long: Vec<&str> = name
            .split(' ')
            .filter(|w| w.chars().count() >= 3)
            .take(4)
            .collect();
        use crate::market::fulltext::{condition, Target};
        let Some((clause, q)) =
            condition(store.backend(), Target::Suppliers, &long.join(" "), None)
        else {
            continue;
        };
        let sql = crate::base::store::numbered(&format!(
            "select s.id, s.name from mk_suppliers s where {clause} limit 20"
        ));
        let hits = sqlx::query_as::<_, Named>(&sql)
            .bind(q)
            .fetch_all(store.pool())
            .await?;
        for h in hits {
            if fold(&h.name).replace(' ', "") == compact {
                sqlx::query("update co_companies set supplier_id = $1 where id = $2")
                    .bind(h.id)
                    .bind(&id)
                    .execute(store.pool())
                    .await?;
                by_name += 1;
                break;
            }
        }
    }
    Ok(by_rfc + by_name)
}
