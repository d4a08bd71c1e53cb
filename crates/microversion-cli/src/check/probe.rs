//! Raw requests for the checker: exactly the headers given, in the order
//! given (a name given twice is two header lines), and the answers kept
//! whole.

use http::header::ACCEPT;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use url::Url;

/// An answer, read whole.
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Seen {
    /// Every value of `name`, as text.
    pub(crate) fn values(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    }

    /// The values of `name` joined with `, `, or `None` when absent.
    pub(crate) fn joined(&self, name: &str) -> Option<String> {
        let values = self.values(name);
        (!values.is_empty()).then(|| values.join(", "))
    }

    /// Every header name listed by `Vary`, lower case.
    pub(crate) fn vary_names(&self) -> Vec<String> {
        self.values("vary")
            .iter()
            .flat_map(|v| v.split(','))
            .map(|n| n.trim().to_ascii_lowercase())
            .filter(|n| !n.is_empty())
            .collect()
    }

    /// The body as JSON, if it is.
    pub(crate) fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The status as `406 Not Acceptable`.
    pub(crate) fn status_text(&self) -> String {
        status_text(self.status)
    }
}

#[cfg(test)]
impl Seen {
    /// A 406 with these headers and body, for the tests of what is read
    /// from answers.
    pub(crate) fn not_acceptable(headers: &[(&'static str, &'static str)], body: &str) -> Seen {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(*name, HeaderValue::from_static(value));
        }
        Seen {
            status: StatusCode::NOT_ACCEPTABLE,
            headers: map,
            body: body.as_bytes().to_vec(),
        }
    }
}

/// `406 Not Acceptable`.
pub(crate) fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// A request's headers: `(name, value)` pairs sent in order.
pub(crate) type Headers<'a> = &'a [(&'a str, &'a str)];

/// Sends the checker's requests and remembers the request ids it saw.
#[derive(Debug)]
pub(crate) struct Prober {
    http: reqwest::Client,
    /// Sends header names in title case (`Openstack-Api-Version`).
    title_case: reqwest::Client,
    token: Option<HeaderValue>,
    /// Every answer's request id headers (names ending in `request-id`),
    /// with what was asked.
    pub(crate) request_ids: Vec<(String, HeaderMap)>,
}

impl Prober {
    pub(crate) fn new(
        http: reqwest::Client,
        title_case: reqwest::Client,
        token: Option<HeaderValue>,
    ) -> Self {
        Prober {
            http,
            title_case,
            token,
            request_ids: Vec::new(),
        }
    }

    /// `GET url` with `headers`, and the token when `auth`.
    pub(crate) async fn get(
        &mut self,
        url: &Url,
        headers: Headers<'_>,
        auth: bool,
    ) -> Result<Seen, reqwest::Error> {
        self.send(url, headers, auth, false).await
    }

    /// As [`Prober::get`], with header names in title case.
    pub(crate) async fn get_title_case(
        &mut self,
        url: &Url,
        headers: Headers<'_>,
    ) -> Result<Seen, reqwest::Error> {
        self.send(url, headers, true, true).await
    }

    async fn send(
        &mut self,
        url: &Url,
        headers: Headers<'_>,
        auth: bool,
        title_case: bool,
    ) -> Result<Seen, reqwest::Error> {
        let http = if title_case {
            &self.title_case
        } else {
            &self.http
        };
        let mut map = HeaderMap::new();
        map.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let (true, Some(token)) = (auth, &self.token) {
            map.insert("x-auth-token", token.clone());
        }
        for (name, value) in headers {
            // The checker's own header texts are valid; a bad one is a bug
            // caught by its tests, so it is dropped rather than panicking.
            if let (Ok(name), Ok(value)) =
                (HeaderName::try_from(*name), HeaderValue::try_from(*value))
            {
                map.append(name, value);
            }
        }
        let response = http
            .request(Method::GET, url.clone())
            .headers(map)
            .send()
            .await?;
        let status = response.status();
        let answer_headers = response.headers().clone();
        let body = response.bytes().await?.to_vec();
        let ids: HeaderMap = answer_headers
            .iter()
            .filter(|(name, _)| name.as_str().ends_with("request-id"))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        self.request_ids.push((describe(url, headers), ids));
        Ok(Seen {
            status,
            headers: answer_headers,
            body,
        })
    }
}

/// `GET /path [OpenStack-API-Version: compute 2.1]`, for messages.
pub(crate) fn describe(url: &Url, headers: Headers<'_>) -> String {
    let mut text = format!("GET {}", url.path());
    if !headers.is_empty() {
        let list: Vec<String> = headers.iter().map(|(n, v)| format!("{n}: {v}")).collect();
        text.push_str(&format!(" [{}]", list.join("; ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_names_are_split_and_lowered() {
        let mut headers = HeaderMap::new();
        headers.append(
            "vary",
            HeaderValue::from_static("Accept, OpenStack-API-Version"),
        );
        headers.append(
            "vary",
            HeaderValue::from_static("X-OpenStack-Nova-API-Version"),
        );
        let seen = Seen {
            status: StatusCode::OK,
            headers,
            body: b"{\"a\": 1}".to_vec(),
        };
        assert_eq!(
            seen.vary_names(),
            [
                "accept",
                "openstack-api-version",
                "x-openstack-nova-api-version"
            ]
        );
        assert_eq!(
            seen.joined("vary").unwrap(),
            "Accept, OpenStack-API-Version, X-OpenStack-Nova-API-Version"
        );
        assert_eq!(seen.joined("x-nothing"), None);
        assert_eq!(seen.json().unwrap()["a"], 1);
        assert_eq!(seen.status_text(), "200 OK");
    }

    #[test]
    fn requests_are_described() {
        let url = Url::parse("http://h/widgets?x=1").unwrap();
        assert_eq!(describe(&url, &[]), "GET /widgets");
        assert_eq!(
            describe(
                &url,
                &[("OpenStack-API-Version", "demo 1.2"), ("Vary", "x")]
            ),
            "GET /widgets [OpenStack-API-Version: demo 1.2; Vary: x]"
        );
    }
}
