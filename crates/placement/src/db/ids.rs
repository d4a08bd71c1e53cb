//! Typed row ids: a provider's id cannot be bound where a resource
//! class's is expected.
