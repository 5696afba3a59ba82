//! The caseworker desk's browser session (docs/web.md, "The caseworker desk"): the API token in
//! a cookie the page's script cannot read (`HttpOnly`), sent only over HTTPS (`Secure`) and not
//! with cross-site subrequests or posts (`SameSite=Lax`), limited to `/desk` and to the token's
//! own lifetime; and the CSRF token every state-changing form carries, bound to that session.

use axum::http::header::{COOKIE, HOST, ORIGIN, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// The session cookie: the API token itself.
pub const SESSION: &str = "eligibility_desk";
/// The sign-in's own cookie: the OIDC `state` and PKCE verifier, or the development form's
/// nonce, for the few minutes a sign-in takes.
pub const SIGN_IN: &str = "eligibility_desk_sign_in";
/// How long a sign-in may take.
pub const SIGN_IN_SECONDS: u64 = 600;

/// The value of cookie `name` in a request.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A `Set-Cookie` header for `name`, for `max_age_seconds` (0: delete it).
pub fn set_cookie(
    name: &str,
    value: &str,
    max_age_seconds: u64,
) -> (axum::http::HeaderName, HeaderValue) {
    let header = format!(
        "{name}={value}; Path=/desk; Max-Age={max_age_seconds}; HttpOnly; Secure; SameSite=Lax"
    );
    (
        SET_COOKIE,
        HeaderValue::from_str(&header).expect("cookie values are base64 or JWT characters"),
    )
}

/// The CSRF token of a session: a digest of its token, which a page from another site can
/// neither read (the cookie is `HttpOnly`, and another origin cannot read this page) nor
/// derive.
pub fn csrf_token(session: &str) -> String {
    let digest = Sha256::digest(format!("eligibility-desk-csrf\0{session}").as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..24])
}

/// Whether a state-changing request may proceed: its form's `csrf` is the session's token
/// (compared in constant time), and an `Origin` it names is the desk's: `public_origin` where
/// configured (behind a proxy), else this request's host. (A client that sends no `Origin` —
/// browsers send one with every post — still needs the token.)
pub fn csrf_holds(
    headers: &HeaderMap,
    public_origin: Option<&str>,
    session: &str,
    sent: Option<&str>,
) -> bool {
    let expected = csrf_token(session);
    let Some(sent) = sent else { return false };
    let same = sent.len() == expected.len()
        && sent
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    same && same_origin(headers, public_origin)
}

/// An `Origin` header, where the browser sends one, names the desk.
fn same_origin(headers: &HeaderMap, public_origin: Option<&str>) -> bool {
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    match public_origin {
        Some(expected) => origin == expected,
        None => {
            let host = headers
                .get(HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            origin
                .split_once("://")
                .is_some_and(|(_, rest)| rest == host)
        }
    }
}

/// A random value for a URL or a cookie: `bytes` random bytes, base64url.
pub fn random(bytes: usize) -> String {
    use rand::RngCore;
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    URL_SAFE_NO_PAD.encode(buffer)
}

/// The PKCE `code_challenge` of a verifier (method S256, RFC 7636).
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn the_csrf_token_is_bound_to_the_session_and_the_origin() {
        let token = csrf_token("session-a");
        let here = headers(&[
            ("host", "desk.example:8080"),
            ("origin", "https://desk.example:8080"),
        ]);
        assert!(csrf_holds(&here, None, "session-a", Some(&token)));
        assert!(
            !csrf_holds(&here, None, "session-b", Some(&token)),
            "another session's token"
        );
        assert!(!csrf_holds(&here, None, "session-a", None), "no token");
        assert!(
            !csrf_holds(&here, None, "session-a", Some("x")),
            "a wrong one"
        );
        let elsewhere = headers(&[
            ("host", "desk.example:8080"),
            ("origin", "https://evil.example"),
        ]);
        assert!(
            !csrf_holds(&elsewhere, None, "session-a", Some(&token)),
            "another origin"
        );
        // Behind a proxy the Host is the upstream's; the configured origin decides.
        let proxied = headers(&[
            ("host", "10.0.0.7:8080"),
            ("origin", "https://desk.example"),
        ]);
        assert!(csrf_holds(
            &proxied,
            Some("https://desk.example"),
            "session-a",
            Some(&token)
        ));
        assert!(!csrf_holds(&proxied, None, "session-a", Some(&token)));
    }

    #[test]
    fn cookies_are_read_by_name_and_set_with_every_flag() {
        let h = headers(&[("cookie", "a=1; eligibility_desk=tok.en; b=2")]);
        assert_eq!(cookie(&h, SESSION), Some("tok.en"));
        assert_eq!(cookie(&h, "c"), None);
        let (_, value) = set_cookie(SESSION, "tok.en", 60);
        let value = value.to_str().unwrap();
        for flag in [
            "HttpOnly",
            "Secure",
            "SameSite=Lax",
            "Path=/desk",
            "Max-Age=60",
        ] {
            assert!(value.contains(flag), "{value}");
        }
    }

    #[test]
    fn the_pkce_challenge_is_rfc_7636s() {
        // RFC 7636, appendix B.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
