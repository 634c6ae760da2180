//! The 69-B importer over the real sample: a later list re-marks the processes whose
//! situation changed and keeps what they were; gzip files stream like plain ones; a
//! file that is not the list is a typed error.

use std::io::Write;

use sqlx::Row;

use super::*;
use crate::market::types::ScreenArgs;
use crate::market::Market;

fn sample() -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sat69b/Listado_Completo_69-B.sample.cp1252.csv"),
    )
    .unwrap()
}

/// The sample republished on `date_line` with each `(rfc, situation, column, notice,
/// date)` moved to that situation (its notice and date in the situation's columns),
/// written as UTF-8 like a later download.
fn relisted(date_line: &str, moves: &[(&str, &str, usize, &str, &str)]) -> Vec<u8> {
    let text = parse::decode(&sample());
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut writer = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for (i, record) in reader.records().enumerate() {
        let mut fields: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        if i == 0 {
            fields[0] = date_line.to_string();
        }
        for (rfc, situation, col, notice, date) in moves {
            if fields.get(1).map(String::as_str) == Some(*rfc) {
                fields[3] = situation.to_string();
                fields[*col] = notice.to_string();
                fields[*col + 1] = date.to_string();
            }
        }
        writer.write_record(&fields).unwrap();
    }
    writer.into_inner().unwrap()
}

async fn screen(store: &Store, rfc: &str) -> crate::market::types::ScreenRow {
    let market = Market::new(store.clone(), b"secret".to_vec());
    let mut r = market
        .screen(&ScreenArgs {
            rfcs: vec![rfc.into()],
        })
        .await
        .unwrap();
    r.results.remove(0)
}

#[tokio::test]
async fn a_later_list_re_marks_the_processes_whose_situation_changed() {
    let store = Store::open_temp().await.unwrap();
    let first = import_sat69b(&store, &sample()).await.unwrap();
    assert!(first.inserted.risks > 200, "{first:?}");
    assert!(first
        .notes
        .iter()
        .any(|n| n == "Listado actualizado al 2022-11-30."));
    let before = screen(&store, "ACS090126HC0").await;
    assert_eq!(before.marks[0].mark_kind, "sat_69b_presunto");
    assert_eq!(before.risk_level, "con_marcas");

    let later = relisted(
        "Información actualizada al 30 de abril de 2023",
        &[
            (
                "ACI120209FE8",
                "Definitivo",
                12,
                "500-05-2023-1111 de fecha 15 de marzo de 2023",
                "15/03/2023",
            ),
            (
                "ACS090126HC0",
                "Desvirtuado",
                8,
                "500-05-2023-2222 de fecha 10 de abril de 2023",
                "10/04/2023",
            ),
        ],
    );
    let r = import_sat69b(&store, &later).await.unwrap();
    assert_eq!((r.inserted.total(), r.updated), (0, 2), "{r:?}");
    assert!(r
        .notes
        .iter()
        .any(|n| n == "Listado actualizado al 2023-04-30."));
    assert!(
        r.notes.iter().any(|n| n
            == "1 contribuyentes cambiaron de situación: SAT 69-B presunto → SAT 69-B definitivo."),
        "{:?}",
        r.notes
    );

    let definitive = screen(&store, "ACI120209FE8").await;
    assert_eq!(definitive.marks.len(), 1, "re-marked, not marked twice");
    assert_eq!(definitive.marks[0].mark_kind, "sat_69b_definitivo");
    assert_eq!(definitive.marks[0].date.as_deref(), Some("2023-03-15"));
    assert_eq!(
        definitive.marks[0].notice.as_deref(),
        Some("500-05-2023-1111")
    );
    let cleared = screen(&store, "ACS090126HC0").await;
    assert_eq!(cleared.marks[0].mark_kind, "sat_69b_desvirtuado");
    assert_eq!(cleared.risk_level, "con_marcas_no_vigentes");

    // What the processes were is kept.
    let kept: Vec<(String, String)> = sqlx::query(
        "select status, replaced_by from mk_history where kind = 'risk' order by row_key",
    )
    .fetch_all(store.pool())
    .await
    .unwrap()
    .iter()
    .map(|row| (row.get(0), row.get(1)))
    .collect();
    assert_eq!(
        kept,
        vec![
            ("sat_69b_presunto".to_string(), "2023-04-30".to_string()),
            ("sat_69b_presunto".to_string(), "2023-04-30".to_string())
        ]
    );

    // The same list again changes nothing.
    let again = import_sat69b(&store, &later).await.unwrap();
    assert_eq!((again.inserted.total(), again.updated), (0, 0));
}

#[tokio::test]
async fn a_gzip_file_streams_like_the_plain_list() {
    let plain_store = Store::open_temp().await.unwrap();
    let plain = import_sat69b(&plain_store, &sample()).await.unwrap();

    let path =
        std::env::temp_dir().join(format!("luna-69b-{}.csv.gz", uuid::Uuid::new_v4().simple()));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&sample()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let store = Store::open_temp().await.unwrap();
    let r = import_sat69b_from(&store, Input::File(path.clone()))
        .await
        .unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(r.inserted, plain.inserted);
    assert_eq!(r.skipped_total, plain.skipped_total);
    assert!(r.inserted.risks > 200);
}

#[tokio::test]
async fn a_file_that_is_not_the_list_is_a_typed_error() {
    let store = Store::open_temp().await.unwrap();
    let err = import_sat69b(&store, b"rfc,nombre\nAAA010101AAA,Uno\n")
        .await
        .unwrap_err();
    let body = err.body();
    assert_eq!(body.code, ErrorCode::InvalidArgument);
    assert!(body.message.contains("encabezado"), "{}", body.message);
}
