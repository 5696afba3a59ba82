//! Who is calling, by address (docs/api.md, "Client address"): the TCP peer, or — when the peer
//! is one of the configured trusted proxies — the nearest hop those proxies recorded that is not
//! itself trusted. A client cannot choose its address: headers are read only from trusted peers,
//! and only the hops the trusted proxies appended count.

use std::net::IpAddr;

use axum::http::HeaderMap;

/// A list of CIDR blocks (the trusted proxies, the admin networks). An empty list contains no
/// address.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Networks(Vec<(IpAddr, u8)>);

impl Networks {
    /// `a.b.c.d/n,x::/m,...`; an address without a prefix length is that address alone.
    pub fn parse(text: &str) -> Result<Networks, String> {
        let mut networks = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (address, bits) = part.split_once('/').unwrap_or((part, ""));
            let address: IpAddr = address
                .parse()
                .map_err(|_| format!("{part:?} is not an address or CIDR block"))?;
            let max = if address.is_ipv4() { 32 } else { 128 };
            let bits = if bits.is_empty() {
                max
            } else {
                bits.parse::<u8>()
                    .ok()
                    .filter(|b| *b <= max)
                    .ok_or_else(|| format!("{part:?}: the prefix length must be 0..={max}"))?
            };
            networks.push((address, bits));
        }
        Ok(Networks(networks))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.0
            .iter()
            .any(|&(network, bits)| within(address, network, bits))
    }
}

/// An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`, as a dual-stack listener reports an IPv4
/// peer) as the IPv4 address it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

fn within(client: IpAddr, network: IpAddr, bits: u8) -> bool {
    match (client, network) {
        (IpAddr::V4(c), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(c) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(c), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(c) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// The client's address. From an untrusted peer: the peer. From a trusted proxy: the hops it
/// recorded (`Forwarded: for=…`, RFC 7239, when present; else `X-Forwarded-For`), read from the
/// right, skipping trusted ones: the first untrusted hop is the client. A hop that does not
/// parse (`unknown`, an obfuscated name) ends the walk at the last trusted address, so the
/// request is charged to that proxy rather than to an address anyone could write.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &Networks) -> IpAddr {
    let peer = canonical(peer);
    if !trusted.contains(peer) {
        return peer;
    }
    let hops = forwarded_hops(headers);
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Some(address) = hop.as_deref().and_then(parse_hop) else {
            return client;
        };
        client = canonical(address);
        if !trusted.contains(client) {
            return client;
        }
    }
    client
}

/// The `for=` hops of every `Forwarded` header in order, or failing those the entries of every
/// `X-Forwarded-For` header; None for an entry without a usable value.
fn forwarded_hops(headers: &HeaderMap) -> Vec<Option<String>> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().map(str::to_string).unwrap_or_default())
            .collect()
    };
    let forwarded = values("forwarded");
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|value| value.split(','))
            .map(|element| {
                element.split(';').find_map(|pair| {
                    let (name, value) = pair.trim().split_once('=')?;
                    name.trim()
                        .eq_ignore_ascii_case("for")
                        .then(|| value.trim().trim_matches('"').to_string())
                })
            })
            .collect();
    }
    values("x-forwarded-for")
        .iter()
        .flat_map(|value| value.split(','))
        .map(|hop| Some(hop.trim().to_string()))
        .collect()
}

/// `192.0.2.60`, `192.0.2.60:4711`, `[2001:db8::17]`, `[2001:db8::17]:4711` or `2001:db8::17`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(address) = hop.parse::<IpAddr>() {
        return Some(address);
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    let (host, port) = hop.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn networks_parse_and_an_empty_list_contains_nothing() {
        let networks = Networks::parse("10.0.0.0/8, 192.168.1.7, fd00::/8").unwrap();
        assert!(networks.contains(ip("10.200.3.4")));
        assert!(networks.contains(ip("::ffff:10.1.2.3")));
        assert!(networks.contains(ip("192.168.1.7")));
        assert!(!networks.contains(ip("192.168.1.8")));
        assert!(networks.contains(ip("fd12::1")));
        assert!(!networks.contains(ip("11.0.0.1")));
        assert!(!Networks::parse("").unwrap().contains(ip("127.0.0.1")));
        let error = Networks::parse("10.0.0.0/33").unwrap_err();
        assert!(error.contains("0..=32"), "{error}");
        assert!(Networks::parse("ten/8").is_err());
    }

    #[test]
    fn forwarded_headers_count_only_from_trusted_proxies_and_only_their_hops() {
        let proxies = Networks::parse("10.0.0.0/8").unwrap();
        let spoofed = headers(&[("x-forwarded-for", "203.0.113.9")]);
        // An untrusted peer's headers are ignored.
        assert_eq!(
            client_address(ip("198.51.100.1"), &spoofed, &proxies),
            ip("198.51.100.1")
        );
        // Nothing trusted: the peer, whatever the headers say.
        assert_eq!(
            client_address(ip("10.0.0.5"), &spoofed, &Networks::default()),
            ip("10.0.0.5")
        );
        // Behind one proxy: the hop it appended; a client's own prefix is skipped.
        let chain = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &chain, &proxies),
            ip("203.0.113.9")
        );
        // Two trusted proxies: the first untrusted hop from the right.
        let two = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &two, &proxies),
            ip("203.0.113.9")
        );
        // RFC 7239 wins over X-Forwarded-For, ports and brackets dropped, headers combined.
        let forwarded = headers(&[
            ("forwarded", "for=1.2.3.4"),
            (
                "forwarded",
                r#"for="[2001:db8:cafe::17]:4711";proto=https, For=10.9.9.9"#,
            ),
            ("x-forwarded-for", "198.51.100.77"),
        ]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &forwarded, &proxies),
            ip("2001:db8:cafe::17")
        );
        let with_port = headers(&[("forwarded", "for=203.0.113.9:4711")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &with_port, &proxies),
            ip("203.0.113.9")
        );
        // An unusable hop ends the walk at the last trusted address.
        let unknown = headers(&[("forwarded", "for=unknown, for=10.2.2.2")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &unknown, &proxies),
            ip("10.2.2.2")
        );
        // No header from a trusted proxy: the proxy itself.
        assert_eq!(
            client_address(ip("10.0.0.5"), &HeaderMap::new(), &proxies),
            ip("10.0.0.5")
        );
    }
}
