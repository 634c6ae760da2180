//! The eight Mercado tool definitions (descriptions, examples, budgets, cues) and
//! [`register`]; enum schemas are flattened to a plain `enum` on the way in.

use super::*;
fn filters_by_kind() -> String {
    MarketKind::ALL
        .iter()
        .map(|k| format!("{}: {}", k.key(), allowed_keys(*k).join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Rewrites `oneOf` lists of documented constants (how schemars renders an enum whose
/// variants carry doc comments) into a plain `enum`, so clients and the model see the
/// closed set in one place and a wrong value is answered with `allowed_values`.
fn flatten_const_one_of(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            let consts: Option<Vec<Value>> =
                obj.get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|branches| {
                        branches
                            .iter()
                            .map(|b| b.get("const").cloned())
                            .collect::<Option<Vec<_>>>()
                    });
            if let Some(values) = consts {
                obj.remove("oneOf");
                obj.insert("type".into(), json!("string"));
                obj.insert("enum".into(), Value::Array(values));
            }
            for child in obj.values_mut() {
                flatten_const_one_of(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(flatten_const_one_of),
        _ => {}
    }
}

fn add(reg: &mut Registry, mut def: ToolDef) {
    flatten_const_one_of(&mut def.input_schema);
    use crate::base::catalog::states;
    def.prepare = Some(if def.name == "market_count" {
        // Each state of the list is counted, charged or refused on its own.
        states::canonicalize_args_per_item
    } else {
        states::canonicalize_args
    });
    reg.add(def);
}

pub fn register(reg: &mut Registry) {
    add(
        reg,
        ToolDef::new::<CapabilitiesArgs>("market_capabilities", Family::Market)
            .label("Revisando la cobertura")
            .description(
                "Úsala cuando necesites saber qué cobertura hay cargada antes de prometer una búsqueda: \
                 qué fuentes, cuántos Proveedores, Licitaciones, Adjudicaciones, Registros y marcas de \
                 riesgo, de qué fechas a qué fechas, qué estados tienen datos y cuándo fue la última \
                 importación. NO la uses para contar registros que cumplen un criterio (usa market_count) \
                 ni para encontrarlos (usa market_search).",
            )
            .example("¿Qué fuentes y qué estados están cargados?", json!({}))
            .budget(6_000)
            .citations(&["ref", "rows", "date_from", "date_to", "last_import"])
            .cues(&["cobertura", "fuentes", "actualizad"])
            .handler(capabilities),
    );
    add(
        reg,
        ToolDef::new::<SearchArgs>("market_search", Family::Market)
            .label("Buscando registros")
            .description(format!(
                "Úsala cuando necesites encontrar Proveedores (kind suppliers), Licitaciones \
                 (opportunities), Adjudicaciones (awards), Registros (permits) o marcas de riesgo \
                 (risks) con texto libre —acentos, ñ y mayúsculas no importan— y filtros. `filters` \
                 admite solo las claves de ese kind y una clave ajena se rechaza con la lista \
                 permitida ({}). Un solo estado por filtro; para varios (hasta 5) usa `states`. Cada fila trae ref, ref_label y su \
                 evidencia. Hasta 50 filas por página: si has_more es true, repite la misma consulta \
                 con el cursor. NO la uses para decir cuántos hay (usa market_count) ni para totales \
                 por comprador, estado o año (usa market_aggregate).",
                filters_by_kind()
            ))
            .example(
                "Fabricantes de empaque en Jalisco que ya le vendieron a gobierno",
                json!({"kind": "suppliers", "query": "empaque", "filters": {"state": "Jalisco", "has_awards": true}, "limit": 20}),
            )
            .example(
                "Adjudicaciones del IMSS en insumos médicos desde 2023",
                json!({"kind": "awards", "filters": {"buyer": "IMSS", "giro": "insumos médicos", "date_from": "2023"}, "limit": 10}),
            )
            .cost(CostClass::Search)
            .search()
            .budget(48_000)
            .citations(&[
                "ref",
                "evidence",
                "awards_count",
                "awards_total_mxn",
                "amount",
                "date",
                "buyer",
                "mark_kind",
            ])
            .stage(Stage::SinCriterio, 10)
            .stage(Stage::Buscando, 10)
            .stage(Stage::ConSeleccion, 20)
            .stage(Stage::ConListaGuardada, 100)
            .stage(Stage::ConBorrador, 110)
            .stage(Stage::DecisionPendiente, 20)
            .handler(search),
    );
    add(
        reg,
        ToolDef::new::<GetArgs>("market_get", Family::Market)
            .label("Leyendo el detalle")
            .description(
                "Úsala cuando necesites el detalle de una fila que ya tienes: un Proveedor (ref \
                 company:…) con su evidencia, marcas de riesgo, Registros y, si pides include_awards, \
                 sus Adjudicaciones más recientes; o una Licitación, Adjudicación, Registro o marca de \
                 riesgo (ref record:…). Cuenta 1 lectura y cobra 1 crédito de inteligencia según lo \
                 que se leyó. NO la uses para buscar por nombre (usa market_search) ni para la \
                 trayectoria por año de un RFC (usa market_history).",
            )
            .example(
                "El detalle de un Proveedor con sus Adjudicaciones",
                json!({"record_ref": "company:EMB050315AB1", "include_awards": true}),
            )
            .cost(CostClass::Read)
            .charges_at_least(1)
            .budget(8_000)
            .citations(&["ref", "evidence", "awards", "marks", "permits", "amount", "date"])
            .stage(Stage::SinCriterio, 40)
            .stage(Stage::Buscando, 40)
            .stage(Stage::ConSeleccion, 50)
            .stage(Stage::ConListaGuardada, 150)
            .stage(Stage::DecisionPendiente, 30)
            .handler(get),
    );
    add(
        reg,
        ToolDef::new::<CountArgs>("market_count", Family::Market)
            .label("Contando registros")
            .description(
                "Úsala cuando necesites decir cuántos hay: el número exacto de Proveedores (u otro \
                 kind) que cumplen los filtros, en total o por estado. Con `states` (hasta 5) cada \
                 estado se cuenta, se admite y se cobra por separado (1 lectura y 1 crédito de \
                 inteligencia por estado); si alguno no se pudo contar, total es null y esa fila trae \
                 su error. Es la única forma válida de afirmar «hay N». NO la uses para listar \
                 registros (usa market_search) ni para sumar montos (usa market_aggregate).",
            )
            .example(
                "¿Cuántos Proveedores de empaque con Adjudicaciones hay en Jalisco, Nuevo León y Guanajuato?",
                json!({"filters": {"giro": "empaque", "has_awards": true}, "states": ["Jalisco", "Nuevo León", "Guanajuato"]}),
            )
            .budget(3_000)
            .citations(&["ref", "count", "total"])
            .stage(Stage::SinCriterio, 20)
            .stage(Stage::Buscando, 20)
            .stage(Stage::ConSeleccion, 110)
            .stage(Stage::ConListaGuardada, 120)
            .stage(Stage::DecisionPendiente, 40)
            .handler(count),
    );
    add(
        reg,
        ToolDef::new::<AggregateArgs>("market_aggregate", Family::Market)
            .label("Sumando Adjudicaciones")
            .description(
                "Úsala cuando necesites totales de Adjudicaciones agrupados por proveedor, comprador, \
                 estado o año (group_by): cuántas, por cuánto en MXN y cuántos Proveedores distintos, \
                 con los grupos mayores primero. NO la uses para listar Adjudicaciones una por una \
                 (usa market_search con kind awards) ni para poner segmentos lado a lado (usa \
                 market_compare).",
            )
            .example(
                "¿Qué compradores adjudicaron más en Jalisco desde 2023?",
                json!({"filters": {"state": "Jalisco", "date_from": "2023"}, "group_by": "buyer", "limit": 10}),
            )
            .cost(CostClass::Read)
            .budget(6_000)
            .citations(&["ref", "key", "awards", "amount_mxn", "suppliers"])
            .stage(Stage::SinCriterio, 60)
            .stage(Stage::Buscando, 60)
            .stage(Stage::ConSeleccion, 120)
            .stage(Stage::DecisionPendiente, 120)
            .cues(&["mas", "most", "ranking", "monto"])
            .handler(aggregate),
    );
    add(
        reg,
        ToolDef::new::<HistoryArgs>("market_history", Family::Market)
            .label("Revisando el historial del RFC")
            .description(
                "Úsala cuando necesites la trayectoria de un RFC: sus Adjudicaciones por año, las más \
                 recientes, sus marcas de riesgo y sus Registros. Un dígito verificador que no cuadra \
                 se avisa en warnings, no se rechaza. NO la uses para revisar muchos RFC de una vez \
                 (usa market_screen) ni para buscar Proveedores por nombre (usa market_search).",
            )
            .example(
                "¿Qué le ha vendido este RFC a gobierno año por año?",
                json!({"rfc": "EMB050315AB1"}),
            )
            .cost(CostClass::Read)
            .budget(6_000)
            .citations(&["ref", "by_year", "amount", "date", "mark_kind"])
            .stage(Stage::SinCriterio, 110)
            .stage(Stage::Buscando, 110)
            .stage(Stage::ConSeleccion, 180)
            .stage(Stage::DecisionPendiente, 100)
            .handler(history),
    );
    add(
        reg,
        ToolDef::new::<CompareArgs>("market_compare", Family::Market)
            .label("Comparando segmentos")
            .description(
                "Úsala cuando necesites poner de 2 a 5 segmentos de Adjudicaciones lado a lado (por \
                 ejemplo dos estados, dos giros o dos compradores): cuántas, monto total y promedio, \
                 cuántos Proveedores distintos compiten y quiénes compran más. NO la uses para un solo \
                 grupo de totales (usa market_aggregate).",
            )
            .example(
                "Empaque en Jalisco contra empaque en Nuevo León",
                json!({"segments": [
                    {"label": "Jalisco", "filters": {"state": "Jalisco", "giro": "empaque"}},
                    {"label": "Nuevo León", "filters": {"state": "Nuevo León", "giro": "empaque"}}
                ]}),
            )
            .cost(CostClass::Read)
            .budget(5_000)
            .citations(&["ref", "awards", "amount_mxn", "avg_amount_mxn", "suppliers"])
            .stage(Stage::SinCriterio, 100)
            .stage(Stage::Buscando, 100)
            .stage(Stage::ConSeleccion, 100)
            .stage(Stage::DecisionPendiente, 130)
            .cues(&["compar"])
            .handler(compare),
    );
    add(
        reg,
        ToolDef::new::<ScreenArgs>("market_screen", Family::Market)
            .label("Revisando marcas de riesgo")
            .description(
                "Úsala cuando necesites revisar las marcas de riesgo (SAT 69-B, proveedor sancionado) \
                 de una lista de 1 a 50 RFC: cada RFC trae su nivel (con_marcas, \
                 con_marcas_no_vigentes, sin_marcas o no_verificable), sus avisos y la evidencia; los \
                 que tienen marcas van primero. NO la uses para la trayectoria completa de un RFC (usa \
                 market_history).",
            )
            .example(
                "¿Alguno de estos RFC tiene marcas de riesgo?",
                json!({"rfcs": ["EMB050315AB1", "CAJ990101XY2"]}),
            )
            .cost(CostClass::Read)
            .budget(12_000)
            .citations(&["ref", "risk_level", "marks", "warnings"])
            .stage(Stage::SinCriterio, 70)
            .stage(Stage::Buscando, 70)
            .stage(Stage::ConSeleccion, 60)
            .stage(Stage::ConListaGuardada, 170)
            .stage(Stage::DecisionPendiente, 80)
            .cues(&[
                "riesg", "negra", "69", "factureras", "sancion", "efos", "screen", "boletin", "fantasma",
                "hacienda", "quemad", "simulad",
            ])
            .handler(screen),
    );
}
