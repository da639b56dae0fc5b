//! Tests of the JavaScript subset.
