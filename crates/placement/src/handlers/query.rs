//! The HTTP edge of the query-string parsers of [`crate::query`]: their
//! refusals as 400 answers, and the check of the parameters against an
//! operation's query schema (upstream's `util.validate_query_params`).

use microversion::Version;
use microversion_server::schema::BodySchemasBuilder;
use microversion_server::{BodyError, BodySchemas};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::query::{InvalidQuery, QueryParams};

impl From<InvalidQuery> for Error {
    /// A 400 whose detail is the parser's text.
    fn from(e: InvalidQuery) -> Self {
        Error::bad_request(e.into_detail())
    }
}

/// Starts the schemas of an operation's query parameters, by version, as
/// upstream's `util.validate_query_params` checks them: Python's
/// `jsonschema` messages and its own `FormatChecker` (a `uuid` is
/// hyphenated).
pub(crate) fn query_schemas(name: &str) -> BodySchemasBuilder<Value> {
    BodySchemas::builder(name).python_messages()
}

/// Checks `params` against the schema for `version` (made with
/// [`query_schemas`]): 400 `Invalid query string parameters: ...` when
/// they do not validate, worded as upstream's `jsonschema`.
pub(crate) fn validate(
    params: &QueryParams,
    schemas: &BodySchemas<Value>,
    version: Version,
) -> Result<()> {
    let body = serde_json::to_vec(&params.as_object()).unwrap_or_default();
    match schemas.parse(version, &body) {
        Ok(_) => Ok(()),
        Err(BodyError::Schema(e)) => Err(invalid(&e.to_string())),
        Err(BodyError::Invalid { reason, .. }) => Err(invalid(&reason)),
        Err(other) => Err(other.into()),
    }
}

/// 400 `Invalid query string parameters: {why}`.
pub(crate) fn invalid(why: &str) -> Error {
    crate::query::invalid(why).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_400_with_the_parsers_text() {
        let refused = QueryParams::parse(Some("x=%ff")).unwrap_err();
        let text = refused.detail().to_owned();
        let Error::Api(e) = Error::from(refused) else {
            panic!("a refusal is an API error");
        };
        assert_eq!(e.status(), http::StatusCode::BAD_REQUEST);
        assert_eq!(e.detail(), text);
        let Error::Api(e) = invalid("why") else {
            panic!("an API error");
        };
        assert_eq!(e.detail(), "Invalid query string parameters: why");
    }

    #[test]
    fn parameters_checked_against_the_schema() {
        let schemas = query_schemas("test query")
            .json_schema(
                microversion::VersionSpan::from_static("1.0 - latest"),
                &serde_json::json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "additionalProperties": false
                }),
            )
            .build()
            .unwrap();
        let ok = QueryParams::parse(Some("name=a&name=b")).unwrap();
        assert!(validate(&ok, &schemas, Version::new(1, 0)).is_ok());
        let extra = QueryParams::parse(Some("name=a&limit=1")).unwrap();
        let Err(Error::Api(e)) = validate(&extra, &schemas, Version::new(1, 0)) else {
            panic!("an unknown parameter is refused");
        };
        assert_eq!(e.status(), http::StatusCode::BAD_REQUEST);
        assert!(
            e.detail().starts_with("Invalid query string parameters: "),
            "{}",
            e.detail()
        );
    }
}
