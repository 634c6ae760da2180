//! The JSON of server-function answers and hydrated resources. The bytes are the same as
//! server_fn's `Json` and leptos' `JsonSerdeCodec` (serde_json writes them); only reading
//! differs: the browser goes through `luna_protocol::json` (text → `serde_json::Value` →
//! type with `FromJson`), so no serde visitor of a wire type is compiled into the wasm.
//! Every `#[server]` here answers with [`Answer`], and every SSR resource uses
//! [`resource`].

use leptos::prelude::*;
use leptos::server::codee::{Decoder, Encoder};
use luna_protocol::json::FromJson;
use serde::Serialize;
use server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};

/// `application/json`, read through `serde_json::Value`.
pub struct WireJson;

/// The output encoding of Luna's server functions: a JSON body, as server_fn's `Json`.
pub type Answer = server_fn::codec::Post<WireJson>;

impl ContentType for WireJson {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for WireJson {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for WireJson {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: FromJson> Decodes<T> for WireJson {
    type Error = serde_json::Error;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        luna_protocol::json::from_slice(&bytes)
    }
}

/// The codec of a resource whose value the server renders into the page.
pub struct WireCodec;

impl<T: Serialize> Encoder<T> for WireCodec {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(value: &T) -> Result<String, Self::Error> {
        serde_json::to_string(value)
    }
}

impl<T: FromJson> Decoder<T> for WireCodec {
    type Error = serde_json::Error;
    type Encoded = str;

    fn decode(text: &str) -> Result<T, Self::Error> {
        luna_protocol::json::from_str(text)
    }
}

/// `Resource::new` with [`WireCodec`]: loaded on the server, sent in the page, read in
/// the browser without a second request.
pub fn resource<S, T, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Resource<T, WireCodec>
where
    S: PartialEq + Clone + Send + Sync + 'static,
    T: Serialize + FromJson + Send + Sync + 'static,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    Resource::new_with_options(source, fetcher, false)
}
