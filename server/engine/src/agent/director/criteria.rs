//! The search criteria the director sends and narrates: the market filters of a
//! request (giro, one state or `states[]` for several, buyer), its free-text query,
//! and the words that describe them in an answer.

use serde_json::{json, Map, Value};

use super::grammar::Request;

/// `market_search`/`market_count` arguments for the suppliers a request names:
/// `kind`, `filters`, `states` when it names several, and `query` for a kind of
/// company that is no giro of the catalogue.
pub fn market_args(req: &Request) -> Value {
    let mut args = json!({"kind": "suppliers", "filters": supplier_filters(req)});
    if req.states.len() >= 2 {
        let names: Vec<&str> = req.states.iter().map(|(k, _)| k.as_str()).collect();
        args["states"] = json!(names);
    }
    if let Some(q) = &req.query {
        args["query"] = json!(q);
    }
    args
}

/// `market_count` cannot filter by free text: no count for a query search.
pub fn count_args(req: &Request) -> Option<Value> {
    if req.query.is_some() {
        return None;
    }
    let mut args = market_args(req);
    if let Some(obj) = args.as_object_mut() {
        obj.remove("query");
    }
    Some(args)
}

pub fn supplier_filters(req: &Request) -> Value {
    let mut f = Map::new();
    if let Some((key, _)) = &req.giro {
        f.insert("giro".into(), json!(key));
    }
    if req.states.len() < 2 {
        if let Some((name, _)) = &req.state {
            f.insert("state".into(), json!(name));
        }
    }
    if let Some(buyer) = req.buyers.first() {
        f.insert("buyer".into(), json!(buyer));
    } else if req.sold_to_government {
        f.insert("has_awards".into(), json!(true));
    }
    Value::Object(f)
}

/// "proveedores de Empaque en Jalisco que ya le vendieron a gobierno" (no digits).
pub fn describe(req: &Request) -> String {
    let mut s = "proveedores".to_owned();
    if let Some((_, label)) = &req.giro {
        s.push_str(&format!(" de {}", label.to_lowercase()));
    }
    if let Some(q) = &req.query {
        s.push_str(&format!(
            " que coinciden con «{q}» (no es un giro del catálogo: lo busqué como texto)"
        ));
    }
    if req.states.len() >= 2 {
        let names: Vec<&str> = req.states.iter().map(|(_, n)| n.as_str()).collect();
        s.push_str(&format!(" en {}", names.join(", ")));
    } else if let Some((_, name)) = &req.state {
        s.push_str(&format!(" en {name}"));
    }
    if let Some(buyer) = req.buyers.first() {
        s.push_str(&format!(" que ya le vendieron a {buyer}"));
    } else if req.sold_to_government {
        s.push_str(" que ya le vendieron a gobierno");
    }
    s
}

/// Why a company is in, from its own row: how often it sold to government and when
/// it last did (the card shows those awards as its evidence).
pub fn why_for(row: &Value) -> String {
    let count = row.get("awards_count").and_then(Value::as_u64).unwrap_or(0);
    let last = row.get("last_award").and_then(Value::as_str);
    match (count, last) {
        (0, _) => "Coincide con el giro y el estado que pediste.".to_owned(),
        (1, Some(date)) => format!("Le vendió a gobierno una vez, el {date}."),
        (n, Some(date)) => {
            format!("Le ha vendido a gobierno {n} veces; la más reciente el {date}.")
        }
        (n, None) => format!("Le ha vendido a gobierno {n} veces."),
    }
}
