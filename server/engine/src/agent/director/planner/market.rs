//! Market answers of the local director that are not a selection: comparing segments
//! (`market_compare`) and screening companies for risk marks (`market_screen`).

use serde_json::{json, Map, Value};

use super::{call, calls_of, final_, ok_rows, years, LocalDirector};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::intent::{Falta, FaltaTipo, TurnIntent};
use crate::agent::director::criteria::describe;
use crate::agent::director::grammar::Request;

impl LocalDirector {
    /// «compara empaque en Jalisco contra Nuevo León»: one `market_compare` over the
    /// segments named (two or more buyers, else two or more states), narrated from the
    /// segment rows.
    pub(super) fn compare(&self, input: &ModelInput, req: &Request) -> ModelStep {
        let t = &input.transcript;
        // What every segment shares: the criteria named once (the giro, the one state,
        // the one buyer), except the dimension the segments vary on.
        let common = |except: &str| {
            let mut filters = Map::new();
            if let Some((giro, _)) = req.giro.as_ref().filter(|_| except != "giro") {
                filters.insert("giro".into(), json!(giro));
            }
            if let Some((state, _)) = req.state.as_ref().filter(|_| except != "state") {
                filters.insert("state".into(), json!(state));
            }
            if let [buyer] = &req.buyers[..] {
                if except != "buyer" {
                    filters.insert("buyer".into(), json!(buyer));
                }
            }
            filters
        };
        let segment = |key: &str, value: &str, label: &str| {
            let mut filters = common(key);
            filters.insert(key.into(), json!(value));
            json!({"filters": filters, "label": label})
        };
        let segments: Vec<Value> = if req.buyers.len() >= 2 {
            req.buyers
                .iter()
                .take(5)
                .map(|b| segment("buyer", b, b))
                .collect()
        } else if req.states.len() >= 2 {
            req.states
                .iter()
                .take(5)
                .map(|(key, name)| segment("state", key, name))
                .collect()
        } else if req.giros.len() >= 2 {
            // «diferencia entre limpieza y seguridad en CDMX»: one segment per giro, each
            // in the place (and for the buyer) named.
            req.giros
                .iter()
                .take(5)
                .map(|(key, label)| segment("giro", key, label))
                .collect()
        } else if let [from, to, ..] = years(&input.turn.message)[..] {
            // «compara 2023 contra 2024 en insumos médicos»: one segment per year.
            [from, to]
                .iter()
                .map(|y| {
                    let mut filters = common("date");
                    filters.insert("date_from".into(), json!(y.to_string()));
                    filters.insert("date_to".into(), json!(y.to_string()));
                    json!({"filters": filters, "label": y.to_string()})
                })
                .collect()
        } else {
            return final_(
                TurnIntent::Encuadre {
                    criterio: describe(req),
                    pregunta: None,
                },
                "Dime qué quieres poner lado a lado: dos estados (Jalisco contra Nuevo León) o dos compradores (el IMSS y el ISSSTE).",
            );
        };
        let Some(done) = calls_of(t, "market_compare").last().copied() else {
            if !input.tools.iter().any(|tool| tool.name == "market_compare") {
                return final_(
                    TurnIntent::Limite {
                        falta: Falta {
                            tipo: FaltaTipo::Operacion,
                            detalle: "Comparar segmentos".into(),
                        },
                    },
                    "En este momento no puedo comparar segmentos desde el chat.",
                );
            }
            return ModelStep::Tools(vec![call("market_compare", json!({"segments": segments}))]);
        };
        let rows = ok_rows(done);
        if rows.len() < 2 {
            return final_(
                TurnIntent::Responder {},
                "No pude comparar esos segmentos con la cobertura que tengo.",
            );
        }
        let c = &done.call;
        let sides: Vec<String> = rows
            .iter()
            .filter_map(|r| r.get("ref").and_then(Value::as_str))
            .map(|r| format!("[[{r}]]"))
            .collect();
        let suppliers: Vec<String> = (0..rows.len())
            .map(|i| format!("[[evidence:{c}.{i}.suppliers]]"))
            .collect();
        final_(
            TurnIntent::Responder {},
            format!(
                "Lado a lado, en Adjudicaciones: {}. Compiten {} Proveedores distintos, respectivamente.",
                sides.join("; "),
                suppliers.join(" y ")
            ),
        )
    }

    /// Risk screening (`market_screen`) of `refs` (`company:<id>`): the call, then the
    /// answer (which a search appends to its own narration).
    pub(super) fn screen(&self, input: &ModelInput, refs: &[&str]) -> ModelStep {
        let t = &input.transcript;
        let Some(done) = calls_of(t, "market_screen").last().copied() else {
            let rfcs: Vec<&str> = refs
                .iter()
                .filter_map(|r| r.strip_prefix("company:"))
                .take(50)
                .collect();
            if rfcs.is_empty() || !input.tools.iter().any(|tool| tool.name == "market_screen") {
                return final_(
                    TurnIntent::Responder {},
                    "No tengo empresas que revisar todavía: primero armemos una selección.",
                );
            }
            return ModelStep::Tools(vec![call("market_screen", json!({"rfcs": rfcs}))]);
        };
        let rows = ok_rows(done);
        let flagged: Vec<String> = rows
            .iter()
            .filter(|r| r.get("risk_level").and_then(Value::as_str) == Some("con_marcas"))
            .filter_map(|r| r.get("ref").and_then(Value::as_str))
            .filter(|r| r.starts_with("company:"))
            .take(3)
            .map(|r| format!("[[{r}]]"))
            .collect();
        let c = &done.call;
        let sentence = if rows.is_empty() {
            "No pude revisar las marcas de riesgo de esas empresas.".to_owned()
        } else if flagged.is_empty() {
            format!("Revisé las marcas de riesgo de [[evidence:{c}.shown]] empresas: ninguna tiene marcas de riesgo vigentes (listas del SAT o proveedores sancionados).")
        } else {
            format!(
                "Revisé las marcas de riesgo de [[evidence:{c}.shown]] empresas; con marcas vigentes: {}. Puedes quitarlas de la selección.",
                flagged.join(", ")
            )
        };
        final_(TurnIntent::Responder {}, sentence)
    }
}
