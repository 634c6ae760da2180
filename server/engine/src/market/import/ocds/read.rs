//! The streaming reader: turns OCDS bytes — a release package, a record package, a
//! bare release or record, a JSON array of any of these, or JSON Lines (several
//! top-level values one after another), plain or gzip — into a sequence of
//! [`Item`]s, holding at most one release (or record) in memory at a time.
//!
//! A package's `releases` / `records` array is deserialized element by element
//! through a [`DeserializeSeed`] over the top-level map; the package's other fields
//! (`publisher`, `uri`, …) are small and kept. Blocking and CPU-bound: run it on a
//! blocking thread and hand the items to the writer through a channel.

use std::fmt;
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::fields::s;

/// One thing the reader found.
#[derive(Debug)]
pub(super) enum Item {
    /// The publisher's name of the package that follows.
    Publisher(String),
    /// One release to import (a compiled release, or a record's last release).
    Release(Value),
    /// Something that is not importable, and why (Spanish).
    Skip { item: String, reason: String },
}

/// What reading stopped on.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The bytes are not JSON (message from the parser, with line and column).
    Json(String),
    /// The input could not be read (or decompressed).
    Io(String),
    /// The consumer hung up.
    Cancelled,
}

/// The sink the reader hands items to; `false` stops the reading.
pub(super) type Sink<'a> = dyn FnMut(Item) -> bool + 'a;

/// A reader that counts the bytes read through it (compressed bytes for gzip), for
/// progress against the file size.
pub(super) struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> Counted<R> {
    pub(super) fn new(inner: R, count: Arc<AtomicU64>) -> Self {
        Counted { inner, count }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Reads every top-level JSON value of `input` and hands its releases to `sink`.
pub(super) fn read_items(input: impl BufRead, sink: &mut Sink<'_>) -> Result<(), ReadError> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut cancelled = false;
    loop {
        match de.end() {
            Ok(()) => return Ok(()),
            Err(e) if e.is_io() => return Err(ReadError::Io(e.to_string())),
            // More input follows: the next top-level value (JSON Lines).
            Err(_) => {}
        }
        let seed = Doc {
            sink: &mut *sink,
            cancelled: &mut cancelled,
        };
        if let Err(e) = seed.deserialize(&mut de) {
            return Err(if cancelled {
                ReadError::Cancelled
            } else if e.is_io() {
                ReadError::Io(e.to_string())
            } else {
                ReadError::Json(e.to_string())
            });
        }
    }
}

/// Hands one whole top-level value to the sink (the array-of-documents case and
/// records read whole).
fn route(doc: Value, sink: &mut Sink<'_>) -> bool {
    match doc {
        Value::Array(items) => items.into_iter().all(|i| route(i, sink)),
        Value::Object(mut obj) => {
            if let Some(p) = publisher_of(&obj) {
                if !sink(Item::Publisher(p)) {
                    return false;
                }
            }
            if obj.contains_key("ocid") {
                if obj.contains_key("compiledRelease") || obj.contains_key("releases") {
                    record(Value::Object(obj), sink)
                } else {
                    release(Value::Object(obj), sink)
                }
            } else if let Some(Value::Array(rs)) = obj.remove("releases") {
                rs.into_iter().all(|r| release(r, sink))
            } else if let Some(Value::Array(records)) = obj.remove("records") {
                records.into_iter().all(|r| record(r, sink))
            } else {
                sink(Item::Skip {
                    item: "documento".into(),
                    reason: "No es un paquete OCDS (faltan releases, records u ocid).".into(),
                })
            }
        }
        _ => sink(Item::Skip {
            item: "documento".into(),
            reason: "No es un documento JSON de OCDS.".into(),
        }),
    }
}

fn publisher_of(obj: &Map<String, Value>) -> Option<String> {
    obj.get("publisher")
        .or_else(|| obj.get("packageInfo").and_then(|p| p.get("publisher")))
        .and_then(|p| s(p.get("name")))
}

/// A release of a release package (linked releases carry only a URL).
fn release(r: Value, sink: &mut Sink<'_>) -> bool {
    if r.get("ocid").is_some() {
        sink(Item::Release(r))
    } else {
        sink(Item::Skip {
            item: s(r.get("url")).unwrap_or_else(|| "release".into()),
            reason: "La entrega enlazada no trae datos (solo URL).".into(),
        })
    }
}

/// A record: its compiled release, else its last embedded release with data.
fn record(mut rec: Value, sink: &mut Sink<'_>) -> bool {
    let ocid = s(rec.get("ocid")).unwrap_or_default();
    if let Some(c) = rec.get_mut("compiledRelease").map(Value::take) {
        return sink(Item::Release(c));
    }
    let last = rec
        .get_mut("releases")
        .and_then(Value::as_array_mut)
        .and_then(|rs| rs.iter_mut().rev().find(|r| r.get("ocid").is_some()))
        .map(Value::take);
    match last {
        Some(r) => sink(Item::Release(r)),
        None => sink(Item::Skip {
            item: ocid,
            reason: "El registro no trae compiledRelease ni entregas con datos.".into(),
        }),
    }
}

/// One top-level value.
struct Doc<'s, 'a> {
    sink: &'s mut Sink<'a>,
    cancelled: &'s mut bool,
}

impl Doc<'_, '_> {
    fn give(&mut self, ok: bool) -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            *self.cancelled = true;
            Err("cancelled".into())
        }
    }
}

impl<'de> DeserializeSeed<'de> for Doc<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Doc<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("un paquete, registro o entrega OCDS")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        // Keys other than the big arrays are kept; a bare release or record is kept
        // whole (one release in memory).
        let mut rest = Map::new();
        let mut streamed = false;
        while let Some(key) = map.next_key::<String>()? {
            let big = match key.as_str() {
                // `releases` streams only in a package: in a record (its `ocid` came
                // first) the releases stay with the record.
                "releases" if !rest.contains_key("ocid") => Some(Array::Releases),
                "records" => Some(Array::Records),
                _ => None,
            };
            match big {
                Some(kind) => {
                    streamed = true;
                    if let Some(p) = publisher_of(&rest) {
                        // The publisher came first: the releases that follow are its.
                        let ok = (self.sink)(Item::Publisher(p));
                        self.give(ok).map_err(de::Error::custom)?;
                        rest.remove("publisher");
                        rest.remove("packageInfo");
                    }
                    map.next_value_seed(Elements {
                        kind,
                        sink: &mut *self.sink,
                        cancelled: &mut *self.cancelled,
                    })?;
                }
                None => {
                    let v: Value = map.next_value()?;
                    rest.insert(key, v);
                }
            }
        }
        if streamed {
            // A publisher named after the arrays is kept for what follows.
            if let Some(p) = publisher_of(&rest) {
                let ok = (self.sink)(Item::Publisher(p));
                self.give(ok).map_err(de::Error::custom)?;
            }
            return Ok(());
        }
        let ok = route(Value::Object(rest), self.sink);
        self.give(ok).map_err(de::Error::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            let ok = route(v, self.sink);
            self.give(ok).map_err(de::Error::custom)?;
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.not_ocds()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.not_ocds()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.not_ocds()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.not_ocds()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.not_ocds()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.not_ocds()
    }
}

impl Doc<'_, '_> {
    fn not_ocds<E: de::Error>(mut self) -> Result<(), E> {
        let ok = (self.sink)(Item::Skip {
            item: "documento".into(),
            reason: "No es un documento JSON de OCDS.".into(),
        });
        self.give(ok).map_err(E::custom)
    }
}

#[derive(Clone, Copy)]
enum Array {
    Releases,
    Records,
}

/// A package's `releases` or `records` array, element by element.
struct Elements<'s, 'a> {
    kind: Array,
    sink: &'s mut Sink<'a>,
    cancelled: &'s mut bool,
}

impl<'de> DeserializeSeed<'de> for Elements<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Elements<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("una lista de entregas o registros")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            let ok = match self.kind {
                Array::Releases => release(v, self.sink),
                Array::Records => record(v, self.sink),
            };
            if !ok {
                *self.cancelled = true;
                return Err(de::Error::custom("cancelled"));
            }
        }
        Ok(())
    }

    // `"releases": null` and the like: nothing to import.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        read_items(text.as_bytes(), &mut |i| {
            out.push(match i {
                Item::Publisher(p) => format!("P:{p}"),
                Item::Release(r) => format!("R:{}", r["id"].as_str().unwrap_or("")),
                Item::Skip { reason, .. } => format!("S:{reason}"),
            });
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn every_shape_yields_its_releases_in_order() {
        let pkg = r#"{"publisher":{"name":"X"},"releases":[{"ocid":"a","id":"1"},{"url":"u"},{"ocid":"a","id":"2"}]}"#;
        let got = items(pkg);
        assert_eq!(got[0], "P:X");
        assert_eq!(got[1], "R:1");
        assert!(got[2].starts_with("S:"));
        assert_eq!(got[3], "R:2");
        let rec = r#"{"records":[{"ocid":"a","compiledRelease":{"ocid":"a","id":"c"},"releases":[{"ocid":"a","id":"1"}]},{"ocid":"b","releases":[{"ocid":"b","id":"b1"},{"ocid":"b","id":"b2"}]}],"publisher":{"name":"Y"}}"#;
        assert_eq!(items(rec), ["R:c", "R:b2", "P:Y"]);
        let lines = "{\"ocid\":\"a\",\"id\":\"1\"}\n{\"ocid\":\"a\",\"id\":\"2\",\"releases\":[]}\n\n{\"ocid\":\"b\",\"compiledRelease\":{\"ocid\":\"b\",\"id\":\"3\"}}\n";
        assert_eq!(
            items(lines),
            [
                "R:1",
                "S:El registro no trae compiledRelease ni entregas con datos.",
                "R:3"
            ]
        );
        assert_eq!(
            items(r#"[{"ocid":"a","id":"1"}, 3]"#),
            ["R:1", "S:No es un documento JSON de OCDS."]
        );
    }

    #[test]
    fn broken_json_stops_with_a_json_error_after_what_was_read() {
        let mut n = 0;
        let r = read_items(
            r#"{"releases":[{"ocid":"a","id":"1"},{"ocid":"#.as_bytes(),
            &mut |_| {
                n += 1;
                true
            },
        );
        assert!(matches!(r, Err(ReadError::Json(_))), "{r:?}");
        assert_eq!(n, 1);
    }
}
