//! The client address of every request, as login throttling counts it: the TCP peer
//! (`ConnectInfo`), or — only when that peer is a proxy named in
//! `LUNA_TRUSTED_PROXIES` — the nearest `X-Forwarded-For` address that is not one of
//! those proxies. A client cannot choose its address by sending the header itself.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use luna_engine::accounts::ClientIp;

/// The reverse proxies whose `X-Forwarded-For` is believed (exact addresses).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Arc<[IpAddr]>);

impl TrustedProxies {
    pub fn new(proxies: Vec<IpAddr>) -> Self {
        TrustedProxies(proxies.into())
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|p| same_ip(*p, ip))
    }
}

fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

/// The client of a request from `peer` carrying `forwarded_for` (every
/// `X-Forwarded-For` value, joined by commas).
pub fn client_ip(
    peer: Option<IpAddr>,
    forwarded_for: Option<&str>,
    trusted: &TrustedProxies,
) -> ClientIp {
    let Some(peer) = peer else {
        return ClientIp::UNKNOWN;
    };
    if !trusted.trusts(peer) {
        return ClientIp::new(peer);
    }
    // Right to left: each trusted proxy appended the address it received from.
    let mut client = peer;
    for hop in forwarded_for.unwrap_or("").rsplit(',') {
        match hop.trim().parse::<IpAddr>() {
            Ok(ip) => {
                client = ip;
                if !trusted.trusts(ip) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    ClientIp::new(client)
}

/// Middleware: puts the request's [`ClientIp`] in its extensions (server functions
/// read it from there). Without a peer address it is `ClientIp::UNKNOWN`.
pub async fn resolve(
    State(trusted): State<TrustedProxies>,
    mut req: Request,
    next: Next,
) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let client = client_ip(peer, Some(&forwarded.join(",")), &trusted);
    req.extensions_mut().insert(client);
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_header_counts_only_behind_a_trusted_proxy() {
        let none = TrustedProxies::default();
        let proxy = TrustedProxies::new(vec![ip("10.0.0.2")]);
        // A client that sends the header itself is still counted by its own address.
        assert_eq!(
            client_ip(Some(ip("198.51.100.9")), Some("203.0.113.5"), &none),
            ClientIp::new(ip("198.51.100.9"))
        );
        assert_eq!(
            client_ip(Some(ip("198.51.100.9")), Some("203.0.113.5"), &proxy),
            ClientIp::new(ip("198.51.100.9"))
        );
        // Behind the proxy: the nearest address the proxy did not add itself, not a
        // spoofed one further left.
        assert_eq!(
            client_ip(Some(ip("10.0.0.2")), Some("1.2.3.4, 203.0.113.5"), &proxy),
            ClientIp::new(ip("203.0.113.5"))
        );
        assert_eq!(
            client_ip(Some(ip("10.0.0.2")), None, &proxy),
            ClientIp::new(ip("10.0.0.2"))
        );
        assert_eq!(client_ip(None, None, &proxy), ClientIp::UNKNOWN);
    }
}
