//! Statements built at run time, each bound value pushed with its
//! placeholder.
