//! HTTP plumbing the commands share: URLs, headers given on the command
//! line, and reqwest clients.

use std::time::Duration;

use http::{HeaderName, HeaderValue};
use url::Url;

use crate::error::Error;

/// The `User-Agent` of every request.
pub(crate) const USER_AGENT: &str = concat!("microversion-cli/", env!("CARGO_PKG_VERSION"));

/// Parses an endpoint or request URL given on the command line: http or
/// https with a host; https only in builds with TLS.
pub(crate) fn parse_url(text: &str) -> Result<Url, Error> {
    let url = Url::parse(text.trim())
        .map_err(|e| Error::with_source(format!("invalid URL {text:?}"), e))?;
    match url.scheme() {
        "http" => {}
        "https" if cfg!(feature = "rustls") => {}
        "https" => {
            return Err(Error::new(format!(
                "cannot reach {text:?}: this build of microversion has no TLS support \
                 (build it with `--features rustls`)"
            )));
        }
        _ => {
            return Err(Error::new(format!(
                "invalid URL {text:?}: expected an http or https URL"
            )));
        }
    }
    if url.host().is_none() {
        return Err(Error::new(format!("invalid URL {text:?}: it has no host")));
    }
    Ok(url)
}

/// Parses a `-H "Name: value"` argument.
pub(crate) fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let Some((name, value)) = text.split_once(':') else {
        return Err(Error::new(format!(
            "invalid header {text:?}: expected \"Name: value\""
        )));
    };
    let name = HeaderName::try_from(name.trim())
        .map_err(|e| Error::with_source(format!("invalid header name in {text:?}"), e))?;
    let value = HeaderValue::try_from(value.trim())
        .map_err(|e| Error::with_source(format!("invalid header value in {text:?}"), e))?;
    Ok((name, value))
}

/// The `X-Auth-Token` value of a token, marked sensitive.
pub(crate) fn token_value(token: &str) -> Result<HeaderValue, Error> {
    let mut value = HeaderValue::try_from(token.trim())
        .map_err(|_| Error::new("invalid token: it cannot be sent in a header"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// A reqwest client with the command's time limit. `title_case` sends
/// header names as `Openstack-Api-Version` instead of lower case.
pub(crate) fn http_client(
    timeout: Duration,
    use_env_proxy: bool,
    title_case: bool,
) -> Result<reqwest::Client, Error> {
    let mut builder = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .user_agent(USER_AGENT);
    if !use_env_proxy {
        builder = builder.no_proxy();
    }
    if title_case {
        builder = builder.http1_title_case_headers();
    }
    builder
        .build()
        .map_err(|e| Error::with_source("cannot build the HTTP client", e))
}

/// Reads text from a URL (GET) or a file (`-`: standard input).
pub(crate) async fn read_source(source: &str, timeout: Duration) -> Result<String, Error> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let url = parse_url(source)?;
        let client = http_client(timeout, true, false)?;
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| Error::with_source(format!("cannot read {url}"), e))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| Error::with_source(format!("cannot read {url}"), e))?;
        if !status.is_success() {
            return Err(Error::new(format!("GET {url} answered {status}")));
        }
        return Ok(text);
    }
    if source == "-" {
        return std::io::read_to_string(std::io::stdin())
            .map_err(|e| Error::with_source("cannot read standard input", e));
    }
    std::fs::read_to_string(source)
        .map_err(|e| Error::with_source(format!("cannot read {source}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            parse_url(" http://127.0.0.1:8778/ ").unwrap().as_str(),
            "http://127.0.0.1:8778/"
        );
        let err = parse_url("ftp://h/").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid URL \"ftp://h/\": expected an http or https URL"
        );
        assert!(
            parse_url("not a url")
                .unwrap_err()
                .to_string()
                .starts_with("invalid URL \"not a url\": ")
        );
        if cfg!(feature = "rustls") {
            assert_eq!(parse_url("https://h/").unwrap().scheme(), "https");
        } else {
            assert!(
                parse_url("https://h/")
                    .unwrap_err()
                    .to_string()
                    .contains("no TLS support")
            );
        }
    }

    #[test]
    fn headers() {
        let (name, value) = parse_header("X-Auth-Token:  admin ").unwrap();
        assert_eq!(name, "x-auth-token");
        assert_eq!(value, "admin");
        let (_, value) = parse_header("Accept: text/html; q=0.9").unwrap();
        assert_eq!(value, "text/html; q=0.9");
        let (_, value) = parse_header("X-Empty:").unwrap();
        assert_eq!(value, "");
        assert_eq!(
            parse_header("no colon").unwrap_err().to_string(),
            "invalid header \"no colon\": expected \"Name: value\""
        );
        assert!(
            parse_header("bad name: x")
                .unwrap_err()
                .to_string()
                .starts_with("invalid header name in \"bad name: x\"")
        );
        assert!(parse_header("X-A: a\nb").is_err());
    }

    #[test]
    fn tokens_are_sensitive() {
        assert!(token_value("s3cret").unwrap().is_sensitive());
        assert!(token_value("a\nb").is_err());
    }
}
