//! A deterministic generator of large OCDS record packages in the shape of the federal
//! administration's compiled releases (no `awards[]`; contracts with `awardID`, their
//! suppliers, `value`/`valueWithTax`, `dateSigned`, `period` and items; suppliers as
//! `MX-RFC` parties, some with hashed RFCs; buyers as `MX-CPA`), with a share of
//! releases in the awards shape of state portals. For benchmarks and the crash test:
//! it writes record by record, never holding the package in memory.

use std::io::{self, Write};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use crate::base::catalog::rfc;
use crate::base::catalog::states::State;

const WORDS: &[&str] = &[
    "material de curación",
    "medicamentos",
    "mantenimiento",
    "subestaciones",
    "papelería",
    "equipo de cómputo",
    "vehículos",
    "limpieza",
    "vigilancia",
    "combustible",
    "uniformes",
    "obra pública",
    "rehabilitación",
    "consultoría",
    "software",
    "mobiliario",
    "alimentos",
    "laboratorio",
    "reactivos",
    "arrendamiento",
    "impresión",
    "telecomunicaciones",
];
const FORMS: &[&str] = &["SA de CV", "S de RL de CV", "SAPI de CV", "SC"];
const METHODS: &[(&str, &str)] = &[
    ("direct", "Adjudicación directa"),
    ("selective", "Invitación a cuando menos tres personas"),
    ("open", "Licitación pública"),
];

fn rfc_of(rng: &mut ChaCha8Rng, n: usize) -> String {
    let letters: String = (0..3)
        .map(|i| char::from(b'A' + ((n / 26usize.pow(i)) % 26) as u8))
        .collect();
    let body = format!(
        "{letters}{:02}{:02}{:02}{}{}",
        rng.gen_range(0..24),
        rng.gen_range(1..13),
        rng.gen_range(1..29),
        char::from(b'A' + rng.gen_range(0..26u8)),
        rng.gen_range(0..10),
    );
    let digit = rfc::check_digit(&body).unwrap_or('0');
    format!("{body}{digit}")
}

/// Writes a record package of `releases` compiled releases (one per record) to `out`;
/// `seed` fixes every value. Returns the number of bytes written.
pub fn write_record_package(out: impl Write, releases: u64, seed: u64) -> io::Result<u64> {
    let mut out = io::BufWriter::with_capacity(1 << 20, Counting { inner: out, n: 0 });
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let suppliers = (releases / 8).clamp(50, 60_000) as usize;
    let buyers = 400usize;
    let supplier_rfcs: Vec<String> = (0..suppliers).map(|n| rfc_of(&mut rng, n)).collect();
    write!(
        out,
        r#"{{"uri":"https://example.invalid/apf/records.json","version":"1.1","publishedDate":"2024-07-01T06:00:00Z","publisher":{{"name":"Administración Pública Federal (generado)","scheme":"MX-CPA","uid":"APF"}},"records":["#
    )?;
    for i in 0..releases {
        if i > 0 {
            out.write_all(b",")?;
        }
        let ocid = format!("ocds-zz9gen-{i:09}");
        let year = 2018 + rng.gen_range(0..7);
        let (month, day) = (rng.gen_range(1..13), rng.gen_range(1..29));
        let date = format!(
            "{year}-{month:02}-{day:02}T{:02}:00:00Z",
            rng.gen_range(0..24)
        );
        let b = rng.gen_range(0..buyers);
        let state = State::ALL[b % 32];
        let buyer_id = format!("MX-CPA-{:03}GYR{b:03}", b % 50);
        let buyer_name = format!("Unidad compradora {b} ({})", state.name());
        let what = WORDS[rng.gen_range(0..WORDS.len())];
        let (method, details) = METHODS[rng.gen_range(0..METHODS.len())];
        let n_contracts = if rng.gen_bool(0.2) { 2 } else { 1 };
        let mut parties = vec![json!({
            "id": buyer_id, "name": buyer_name,
            "identifier": {"scheme": "MX-CPA", "id": &buyer_id[7..], "legalName": buyer_name},
            "address": {"region": state.name(), "countryName": "México"},
            "roles": ["buyer", "procuringEntity"]
        })];
        let mut contracts = Vec::new();
        let mut awards = Vec::new();
        let awards_shape = rng.gen_bool(0.15);
        for c in 0..n_contracts {
            let hashed = rng.gen_bool(0.1);
            let s = rng.gen_range(0..suppliers);
            let (sid, ident) = if hashed {
                let h = format!("{:016x}{:016x}", rng.gen::<u64>(), s as u64);
                (format!("MX-RFC-{h}"), h)
            } else {
                let r = supplier_rfcs[s].clone();
                (format!("MX-RFC-{r}"), r)
            };
            let name = format!(
                "{} {} {}",
                WORDS[s % WORDS.len()].to_uppercase(),
                s,
                FORMS[s % FORMS.len()]
            );
            parties.push(json!({
                "id": sid, "name": name,
                "identifier": {"scheme": "MX-RFC", "id": ident, "legalName": name},
                "address": {"region": State::ALL[s % 32].name()},
                "roles": ["supplier", "tenderer"]
            }));
            let base = (rng.gen_range(5_000.0..5_000_000.0f64) * 100.0).round() / 100.0;
            let award_id = format!("{ocid}-{c}");
            let items: Vec<_> = (0..rng.gen_range(1..4))
                .map(|k| {
                    json!({
                        "id": k.to_string(), "description": format!("{what} partida {k}"),
                        "quantity": rng.gen_range(1..500),
                        "unit": {"name": "Pieza", "value": {"amount": (base / 10.0).round(), "currency": "MXN"}},
                        "classification": {"scheme": "CUCOP", "id": format!("{}", 21_000_000 + rng.gen_range(0..99_999))}
                    })
                })
                .collect();
            let signed = format!("{year}-{month:02}-{:02}T00:00:00Z", (day + 2).min(28));
            if awards_shape {
                awards.push(json!({
                    "id": award_id, "status": "active", "date": signed,
                    "suppliers": [{"id": sid, "name": name}],
                    "value": {"amount": base * 1.16, "currency": "MXN"}, "items": items
                }));
            } else {
                let mut contract = json!({
                    "id": format!("{year}-{i}-{c}"), "awardID": award_id,
                    "title": format!("Contrato de {what}"), "status": "active",
                    "dateSigned": signed,
                    "period": {"startDate": signed, "endDate": format!("{year}-12-31T00:00:00Z")},
                    "items": items
                });
                if rng.gen_bool(0.8) {
                    contract["suppliers"] = json!([{"id": sid, "name": name}]);
                }
                if rng.gen_bool(0.9) {
                    contract["value"] = json!({"amount": base, "currency": "MXN"});
                    contract["valueWithTax"] =
                        json!({"amount": (base * 116.0).round() / 100.0, "currency": "MXN"});
                }
                contracts.push(contract);
            }
        }
        let mut release = json!({
            "ocid": ocid, "id": format!("{ocid}-compiled"), "date": date, "tag": ["compiled"],
            "initiationType": "tender", "language": "es",
            "parties": parties,
            "buyer": {"id": buyer_id, "name": buyer_name},
            "planning": {"budget": {"budgetBreakdown": [
                {"id": "1", "description": "Partida presupuestal", "amount": {"amount": rng.gen_range(10_000..9_000_000), "currency": "MXN"}}
            ]}},
            "tender": {
                "id": format!("{}-{i}", &method[..2].to_uppercase()),
                "title": format!("Adquisición de {what}"),
                "procurementMethod": method, "procurementMethodDetails": details,
                "status": "complete",
                "tenderPeriod": {"startDate": date, "endDate": format!("{year}-{month:02}-{:02}T00:00:00Z", (day + 7).min(28))}
            }
        });
        if awards_shape {
            release["awards"] = json!(awards);
        } else {
            release["contracts"] = json!(contracts);
        }
        serde_json::to_writer(&mut out, &json!({"ocid": ocid, "compiledRelease": release}))?;
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(out.get_ref().n)
}

struct Counting<W> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
