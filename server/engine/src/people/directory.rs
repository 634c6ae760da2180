//! The deterministic generated directory behind the embedded provider: for a company
//! (a market supplier) 2–3 people with realistic Mexican names, commercial roles,
//! seniority and emails on the company's domain. The same company always yields the
//! same people, so handles are stable across restarts.

use base64::Engine as _;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use super::mask;
use super::provider::{PersonCard, Seniority};
use crate::base::catalog::text::fold_letters;

/// A market supplier as the directory needs it.
#[derive(Debug, Clone)]
pub struct Company {
    pub id: String,
    pub name: String,
    pub website: Option<String>,
}

/// A generated person, with contact data (never leaves the provider unmasked except
/// through a paid reveal).
#[derive(Debug, Clone)]
pub struct Person {
    pub handle: String,
    pub company_id: String,
    pub company_name: String,
    pub role: String,
    pub seniority: Seniority,
    pub full_name: String,
    pub email: String,
}

impl Person {
    pub fn card(&self) -> PersonCard {
        PersonCard {
            handle: self.handle.clone(),
            company_id: self.company_id.clone(),
            company_name: self.company_name.clone(),
            role: self.role.clone(),
            seniority: self.seniority,
            name_masked: mask::name(&self.full_name),
            email_masked: mask::email(&self.email),
        }
    }
}

const FIRST: &[&str] = &[
    "María",
    "José",
    "Guadalupe",
    "Juan",
    "Fernanda",
    "Luis",
    "Alejandra",
    "Carlos",
    "Verónica",
    "Jorge",
    "Daniela",
    "Miguel",
    "Gabriela",
    "Ricardo",
    "Patricia",
    "Eduardo",
    "Mariana",
    "Alejandro",
    "Sofía",
    "Roberto",
    "Claudia",
    "Francisco",
    "Ximena",
    "Arturo",
    "Paola",
    "Héctor",
    "Lucía",
    "Raúl",
    "Adriana",
    "Sergio",
    "Andrea",
    "Óscar",
];

const LAST: &[&str] = &[
    "Hernández",
    "García",
    "Martínez",
    "López",
    "González",
    "Rodríguez",
    "Pérez",
    "Sánchez",
    "Ramírez",
    "Cruz",
    "Flores",
    "Gómez",
    "Morales",
    "Vázquez",
    "Jiménez",
    "Reyes",
    "Díaz",
    "Torres",
    "Gutiérrez",
    "Ruiz",
    "Mendoza",
    "Aguilar",
    "Ortiz",
    "Castillo",
    "Romero",
    "Núñez",
    "Robles",
    "Ibarra",
    "Salazar",
    "Domínguez",
    "Villarreal",
    "Treviño",
];

const ROLES: &[(&str, Seniority)] = &[
    ("Director de Compras", Seniority::Direccion),
    ("Gerente de Ventas", Seniority::Gerencia),
    ("Jefe de Licitaciones", Seniority::Jefatura),
    ("Director General", Seniority::Direccion),
    ("Gerente de Abastecimiento", Seniority::Gerencia),
    ("Gerente Comercial", Seniority::Gerencia),
    ("Coordinador de Ventas a Gobierno", Seniority::Coordinacion),
    ("Jefa de Compras", Seniority::Jefatura),
];

/// `person:<base64url(company id)>.<slot>`: opaque to callers, resolvable here.
pub fn handle(company_id: &str, slot: usize) -> String {
    format!(
        "person:{}.{slot}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(company_id.as_bytes())
    )
}

/// The company id and slot of a handle, `None` if it is not one of ours.
pub fn parse_handle(handle: &str) -> Option<(String, usize)> {
    let rest = handle.strip_prefix("person:")?;
    let (b64, slot) = rest.rsplit_once('.')?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(b64)
        .ok()?;
    let id = String::from_utf8(bytes).ok()?;
    Some((id, slot.parse().ok()?))
}

/// The email domain of a company: its website's host, else a slug of its name.
pub fn domain(company: &Company) -> String {
    if let Some(site) = company.website.as_deref() {
        let host = site
            .trim()
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_start_matches("www.")
            .split(['/', '?', '#'])
            .next()
            .unwrap_or("")
            .to_lowercase();
        if host.contains('.') {
            return host;
        }
    }
    let slug: String = fold_letters(&company.name)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 2 && !matches!(*w, "sa" | "de" | "cv" | "del" | "las" | "los"))
        .take(2)
        .collect::<Vec<_>>()
        .join("");
    if slug.is_empty() {
        "empresa.com.mx".into()
    } else {
        format!("{slug}.com.mx")
    }
}

/// The people at a company (2 or 3), always the same for the same company.
pub fn people_at(company: &Company) -> Vec<Person> {
    let digest = Sha256::digest(company.id.as_bytes());
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&digest);
    let mut rng = ChaCha8Rng::from_seed(seed);
    let n = if rng.gen_bool(0.7) { 3 } else { 2 };
    let mut roles: Vec<usize> = (0..ROLES.len()).collect();
    roles.shuffle(&mut rng);
    let dom = domain(company);
    (0..n)
        .map(|slot| {
            let (role, seniority) = ROLES[roles[slot]];
            let first = FIRST[rng.gen_range(0..FIRST.len())];
            let last = LAST[rng.gen_range(0..LAST.len())];
            let (f, l) = (fold_letters(first), fold_letters(last));
            let local = match rng.gen_range(0..3) {
                0 => format!("{f}.{l}"),
                1 => format!("{}{l}", &f[..1]),
                _ => format!("{f}{}", &l[..1]),
            };
            Person {
                handle: handle(&company.id, slot),
                company_id: company.id.clone(),
                company_name: company.name.clone(),
                role: role.to_owned(),
                seniority,
                full_name: format!("{first} {last}"),
                email: format!("{local}@{dom}"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn company(id: &str, website: Option<&str>) -> Company {
        Company {
            id: id.into(),
            name: "Empaques del Bajío SA de CV".into(),
            website: website.map(Into::into),
        }
    }

    #[test]
    fn the_same_company_yields_the_same_two_or_three_people_on_its_domain() {
        let c = company("EBA010101AB1", Some("https://www.empaquesbajio.mx/inicio"));
        let a = people_at(&c);
        let b = people_at(&c);
        assert!((2..=3).contains(&a.len()));
        assert_eq!(
            a.iter().map(|p| &p.email).collect::<Vec<_>>(),
            b.iter().map(|p| &p.email).collect::<Vec<_>>()
        );
        for p in &a {
            assert!(p.email.ends_with("@empaquesbajio.mx"), "{}", p.email);
            assert!(p.email.is_ascii());
            assert_eq!(parse_handle(&p.handle).unwrap().0, "EBA010101AB1");
        }
        let roles: std::collections::HashSet<_> = a.iter().map(|p| &p.role).collect();
        assert_eq!(roles.len(), a.len(), "roles are distinct within a company");
    }

    #[test]
    fn a_company_without_website_gets_a_domain_from_its_name() {
        assert_eq!(domain(&company("X", None)), "empaquesbajio.com.mx");
        assert!(parse_handle("person:%%%.1").is_none());
        assert!(parse_handle("company:1").is_none());
        let h = handle("ocds:abc:1", 2);
        assert_eq!(parse_handle(&h), Some(("ocds:abc:1".into(), 2)));
    }
}
