//! Unit tests of `kinds`: record kinds, rankings and constraints, read from phrasings
//! unlike the briefs'.

use super::*;

const TODAY: (i32, u32) = (2026, 12);

#[test]
fn tenders_and_awards_are_their_own_kinds_unless_companies_are_named() {
    let a = read("¿Qué licitaciones abiertas hay de limpieza?", TODAY);
    assert_eq!((a.kind, a.active), (RecordKind::Opportunities, true));
    assert_eq!(
        read("contratos de limpieza entre 1 y 3 millones", TODAY).kind,
        RecordKind::Awards
    );
    assert_eq!(
        read("proveedores que ganaron licitaciones en Jalisco", TODAY).kind,
        RecordKind::Suppliers
    );
    for m in [
        "tienes algo de seguridad privada en Morelos? que ya hayan tenido contratos",
        "filtra los que ya tengan contratos con pemex desde 2022",
    ] {
        assert_eq!(read(m, TODAY).kind, RecordKind::Suppliers, "{m}");
    }
    let p = read(
        "licitaciones públicas de TI, no adjudicaciones directas",
        TODAY,
    );
    assert_eq!(
        (p.kind, p.procedure),
        (RecordKind::Opportunities, Some("open"))
    );
}

#[test]
fn a_count_counts_the_noun_it_names() {
    for (m, kind) in [
        (
            "cuantos contratos le ha dado la SEDENA a empresas de uniformes desde 2023",
            RecordKind::Awards,
        ),
        (
            "número total de licitaciones abiertas de insumos médicos",
            RecordKind::Opportunities,
        ),
        (
            "cuántas empresas le vendieron contratos al IMSS",
            RecordKind::Suppliers,
        ),
    ] {
        assert_eq!(read(m, TODAY).kind, kind, "{m}");
    }
    // Open tenders in other words.
    for m in [
        "qué está licitando el IMSS de limpieza en este momento",
        "open tenders for TI in Jalisco?",
        "qué concursos vigentes hay de uniformes",
        "convocatorias que sigan abiertos para limpieza",
    ] {
        let a = read(m, TODAY);
        assert_eq!((a.kind, a.active), (RecordKind::Opportunities, true), "{m}");
    }
}

#[test]
fn rankings_group_by_what_is_asked() {
    assert_eq!(
        read("¿quién le vende más al IMSS?", TODAY).rank,
        Some("supplier")
    );
    assert_eq!(
        read("qué dependencias compran más limpieza", TODAY).rank,
        Some("buyer")
    );
    assert_eq!(
        read("en qué estados se adjudica más seguridad", TODAY).rank,
        Some("state")
    );
    assert_eq!(
        read("cómo ha ido año con año lo de uniformes", TODAY).rank,
        Some("year")
    );
    assert_eq!(read("proveedores de limpieza en Jalisco", TODAY).rank, None);
    // Year over year in other words; contractors ranked in English.
    for m in [
        "lo de seguridad del issste año tras año",
        "uniformes year over year",
    ] {
        assert_eq!(read(m, TODAY).rank, Some("year"), "{m}");
    }
    assert_eq!(
        read("largest construction contractors in Nuevo Leon", TODAY).rank,
        Some("supplier")
    );
    // «melones» are millions; «bids» are tenders.
    assert_eq!(
        read("obras arriba de 3 melones", TODAY).amount_min,
        Some(3_000_000.0)
    );
    let a = read("open bids for uniforms in Puebla", TODAY);
    assert_eq!((a.kind, a.active), (RecordKind::Opportunities, true));
    // Rankings in other words: what they win, or a ranking named as such.
    assert_eq!(
        read("los que tienen más contratos con el IMSS", TODAY).rank,
        Some("supplier")
    );
    assert_eq!(
        read("principales proveedores de la CFE en limpieza", TODAY).rank,
        Some("supplier")
    );
    assert_eq!(
        read("adjudicaciones del IMSS de más de 10 millones", TODAY).rank,
        None
    );
    // Spending is buying; a superlative next to who is ranked names a ranking.
    for (m, by) in [
        ("en qué estado se gasta más en eventos", "state"),
        ("qué dependencia gasta más en TI desde 2023", "buyer"),
        ("who are the biggest buyers of uniformes in edomex", "buyer"),
        ("top proveedores de la CFE en construccion", "supplier"),
    ] {
        assert_eq!(read(m, TODAY).rank, Some(by), "{m}");
    }
    assert_eq!(
        read("los 10 mejores proveedores de limpieza", TODAY).rank,
        None
    );
    assert_eq!(read("top 10 de limpieza en Jalisco", TODAY).rank, None);
    // An order by what is won, or «who wins» asked as such, is a ranking.
    for (m, by) in [
        (
            "los 8 de uniformes ordenados por monto, en Puebla",
            "supplier",
        ),
        (
            "proveedores de TI x numero de contratos con la SEP",
            "supplier",
        ),
        (
            "quiénes ganan los contratos de vigilancia del ISSSTE",
            "supplier",
        ),
        ("which vendors sell the most to SEDENA", "supplier"),
        ("top sellers of cleaning services to IMSS", "supplier"),
    ] {
        assert_eq!(read(m, TODAY).rank, Some(by), "{m}");
    }
    assert_eq!(read("quién vende uniformes en Puebla", TODAY).rank, None);
    for (m, by) in [
        (
            "¿cuál es el proveedor más grande de la CFE en limpieza?",
            "supplier",
        ),
        ("las dependencias más activas en construcción", "buyer"),
    ] {
        assert_eq!(read(m, TODAY).rank, Some(by), "{m}");
    }
}

#[test]
fn amounts_windows_sizes_and_tops() {
    let a = read("adjudicaciones del IMSS de más de 10 millones", TODAY);
    assert_eq!((a.amount_min, a.amount_max), (Some(10_000_000.0), None));
    let a = read("licitaciones de 10 mdp para arriba", TODAY);
    assert_eq!(a.amount_min, Some(10_000_000.0));
    let a = read("contratos entre 1 y 3 millones", TODAY);
    assert_eq!(
        (a.amount_min, a.amount_max),
        (Some(1_000_000.0), Some(3_000_000.0))
    );
    let a = read("adjudicaciones de medio millón o menos", TODAY);
    assert_eq!((a.amount_min, a.amount_max), (None, Some(500_000.0)));
    assert_eq!(read("40 fabricantes de empaque", TODAY).amount_min, None);
    // Signs and glued money words.
    assert_eq!(
        read("licitaciones vigentes en nuevo leon > 5M", TODAY).amount_min,
        Some(5_000_000.0)
    );
    let a = read("contratos <800k", TODAY);
    assert_eq!((a.amount_min, a.amount_max), (None, Some(800_000.0)));
    assert_eq!(read("obras de 10mdp", TODAY).amount_min, Some(10_000_000.0));
    assert_eq!(
        read("contratos arriba de diez millones", TODAY).amount_min,
        Some(10_000_000.0)
    );
    let w = read("contratos del 2021 a la fecha", TODAY);
    assert_eq!((w.date_from.as_deref(), w.date_to), (Some("2021"), None));
    // Decimals, thousands commas, the peso sign, «pa abajo».
    assert_eq!(
        read("contratos de la cfe x arriba de 3.5 millones", TODAY).amount_min,
        Some(3_500_000.0)
    );
    assert_eq!(
        read("licitaciones de $750,000 pa arriba", TODAY).amount_min,
        Some(750_000.0)
    );
    // The peso sign before a money word does not make pesos of millions.
    assert_eq!(
        read("contratos de mas de $5M", TODAY).amount_min,
        Some(5_000_000.0)
    );
    assert_eq!(
        read("contratos arriba de $5 millones", TODAY).amount_min,
        Some(5_000_000.0)
    );
    let a = read("adjudicaciones de 250 mil pa abajo", TODAY);
    assert_eq!((a.amount_min, a.amount_max), (None, Some(250_000.0)));

    let w = read("lo que compró PEMEX el año pasado", TODAY);
    assert_eq!(
        (w.date_from.as_deref(), w.date_to.as_deref()),
        (Some("2025"), Some("2025"))
    );
    let w = read("adjudicaciones desde 2023", TODAY);
    assert_eq!((w.date_from.as_deref(), w.date_to), (Some("2023"), None));
    assert_eq!(read("en 2024", TODAY).date_to.as_deref(), Some("2024"));
    assert_eq!(
        read("este mes", TODAY).date_from.as_deref(),
        Some("2026-12")
    );
    // Months, with or without their year.
    let w = read("q le compro la sep entre enero y junio del 2024", TODAY);
    assert_eq!(
        (w.date_from.as_deref(), w.date_to.as_deref()),
        (Some("2024-01"), Some("2024-06"))
    );
    let w = read("adjudicaciones desde febrero de 2023", TODAY);
    assert_eq!((w.date_from.as_deref(), w.date_to), (Some("2023-02"), None));
    let w = read("contratos de marzo", TODAY);
    assert_eq!(
        (w.date_from.as_deref(), w.date_to.as_deref()),
        (Some("2026-03"), Some("2026-03"))
    );
    for m in [
        "filtrame los del 2021 al 2023",
        "entre 2021 y 2023",
        "de 2021-2023",
    ] {
        let w = read(m, TODAY);
        assert_eq!(
            (w.date_from.as_deref(), w.date_to.as_deref()),
            (Some("2021"), Some("2023")),
            "{m}"
        );
    }
    // «la SEP 2024» is the buyer and a year, not September.
    assert_eq!(
        read("compras de la sep 2024", TODAY).date_from.as_deref(),
        Some("2024")
    );

    assert_eq!(
        read("proveedores medianos de empaque", TODAY).size_band,
        Some("mediana")
    );
    assert_eq!(
        read("empresas chicas de limpieza", TODAY).size_band,
        Some("pequena")
    );
    assert_eq!(read("top 10 constructoras", TODAY).top, Some(10));
    assert_eq!(read("los 5 mejores proveedores", TODAY).top, Some(5));
    assert_eq!(read("enséñame las 7 primeras", TODAY).top, Some(7));
    assert_eq!(read("dame las primeras 4 nomás", TODAY).top, Some(4));
    assert_eq!(read("the first 6 please", TODAY).top, Some(6));
    // The head noun decides between records and companies.
    assert_eq!(
        read(
            "contratos arriba de diez millones q pemex le haya dado a constructoras en tabasco",
            TODAY
        )
        .kind,
        RecordKind::Awards
    );
    assert_eq!(
        read("constructoras que le vendieron a pemex", TODAY).kind,
        RecordKind::Suppliers
    );
    // «Reynosa» is a city, not «el rey».
    assert_eq!(
        read("quien vende jabon liquido en tampico o reynosa", TODAY).rank,
        None
    );
    assert_eq!(
        read("quienes son los siete q mas le facturan a gobierno", TODAY).top,
        Some(7)
    );
    let heavy = read(
        "los 3 pesos pesados de la seguridad privada en nuevo leon",
        TODAY,
    );
    assert_eq!((heavy.top, heavy.rank), (Some(3), Some("supplier")));
}

#[test]
fn what_a_question_asks_for_and_what_is_open_to_bid() {
    // The noun a question asks about decides the kind, whatever companies follow.
    let a = read(
        "¿qué adjudicaciones le hizo el IMSS a empresas de aseo este año?",
        TODAY,
    );
    assert_eq!(a.kind, RecordKind::Awards);
    // Something open to bid on is a tender, with no word for tenders said.
    let t = read("¿queda algo vigente donde pueda cotizar uniformes?", TODAY);
    assert_eq!((t.kind, t.active), (RecordKind::Opportunities, true));
    assert!(read("convocatorias todavía vivas de obra", TODAY).active);
    // Open without a bid is no tender: an open question about companies.
    assert_eq!(
        read("empresas abiertas a trabajar con gobierno", TODAY).kind,
        RecordKind::Suppliers
    );
}

#[test]
fn who_leads_and_how_it_moved_over_the_years_are_rankings() {
    for m in [
        "¿quién es la reina de la limpieza en el ISSSTE?",
        "los 3 más pesados de seguridad",
        "¿quiénes son los meros meros del transporte?",
    ] {
        assert_eq!(read(m, TODAY).rank, Some("supplier"), "{m}");
    }
    for m in [
        "¿cómo ha evolucionado lo que compra la SEP en cómputo?",
        "el PEMEX de seguridad, ¿crece o baja?",
    ] {
        assert_eq!(read(m, TODAY).rank, Some("year"), "{m}");
    }
    assert_eq!(
        read("¿en qué edos vende más uniformes la SEDENA?", TODAY).rank,
        Some("state")
    );
    assert_eq!(read("¿y las 4 que más venden obra?", TODAY).top, Some(4));
    // Companies that won contracts are still companies.
    assert_eq!(
        read("nomás las que ganaron contratos desde 2021", TODAY).kind,
        RecordKind::Suppliers
    );
}

#[test]
fn english_awards_how_many_in_slang_and_what_can_still_be_bid_on() {
    assert_eq!(
        read("transport awards from the IMSS", TODAY).kind,
        RecordKind::Awards
    );
    assert_eq!(
        read("¿qué tantos contratos de obra hubo en 2023?", TODAY).kind,
        RecordKind::Awards
    );
    let t = read("concursos de limpieza donde aún se pueda participar", TODAY);
    assert_eq!((t.kind, t.active), (RecordKind::Opportunities, true));
}

#[test]
fn the_risk_lists_asked_about_as_lists_and_not_as_a_check_of_the_selection() {
    let a = read("¿cuántos contribuyentes presuntos hay en el 69-B?", TODAY);
    assert_eq!(
        (a.kind, a.mark_kind),
        (RecordKind::Risks, Some("sat_69b_presunto"))
    );
    let a = read(
        "muéstrame las definitivas de la lista negra del SAT desde 2022",
        TODAY,
    );
    assert_eq!(
        (a.kind, a.mark_kind, a.date_from.as_deref()),
        (RecordKind::Risks, Some("sat_69b_definitivo"), Some("2022"))
    );
    for m in [
        "revisa si alguna de esas está en el 69-b",
        "checa que mis prospectos no salgan en la lista negra",
    ] {
        assert_ne!(read(m, TODAY).kind, RecordKind::Risks, "{m}");
    }
}

#[test]
fn something_open_is_a_tender_and_caps_and_heavyweights_are_a_top() {
    let a = read("¿hay algo vigente de limpieza en sonora?", TODAY);
    assert_eq!((a.kind, a.active), (RecordKind::Opportunities, true));
    assert_eq!(
        read("la cfe a quién le compra más? los 7 más grandes", TODAY).top,
        Some(7)
    );
    assert_eq!(
        read("quién le vende más al issste, máximo 4", TODAY).top,
        Some(4)
    );
    assert_eq!(
        read("quién le vende más al imss, un máximo de 5", TODAY).top,
        Some(5)
    );
    assert_eq!(
        read("a quién le compra más la sedena, a lo mucho 3", TODAY).top,
        Some(3)
    );
    assert_eq!(
        read("el top 6.. no, mejor top 2 de pemex", TODAY).top,
        Some(2)
    );
}

#[test]
fn a_year_said_with_two_digits_after_a_word_of_starting() {
    let from = |m: &str| read(m, TODAY).date_from;
    assert_eq!(
        from("adjudicaciones de pemex desde el 21").as_deref(),
        Some("2021")
    );
    assert_eq!(
        from("contratos a partir del 19 en sonora").as_deref(),
        Some("2019")
    );
    // A day (the month is the window), a quantity, or a year still to come are not
    // years.
    assert_eq!(
        from("licitaciones desde el 22 de marzo").as_deref(),
        Some("2026-03")
    );
    assert_eq!(from("contratos desde 40 mil pesos"), None);
    assert_eq!(from("licitaciones desde el 35"), None);
}
