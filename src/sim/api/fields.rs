//! A stored object's JSON read field by field, by hand, with the strict decoder's rules.
//!
//! The kinds the API server keeps as JSON and reads into a typed view (a StatefulSet, a
//! CustomResourceDefinition) read through this instead of serde's derives: a derive compiles a
//! visitor per struct and per decoder, several times this reader's weight in the page. The rules
//! are the strict decoder's: null is unset, a struct may be null, and a value of another JSON
//! type (or an integer out of range) fails. Go's decoding has already checked the types of
//! anything a learner wrote, so a failure here means the JSON was never an object of the kind.

use std::cell::RefCell;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value as Json};

use super::strict::{decode_at, DecodeError, DecodeErrorKind, DecodeFindings};

/// One JSON object of a `kind`, within its top-level `part` (`spec`, `status`).
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    map: Option<&'a Map<String, Json>>,
    kind: &'static str,
    part: &'static str,
}

impl<'a> Fields<'a> {
    /// The object `v` (null reads as an empty object).
    pub fn of(v: &'a Json, kind: &'static str, part: &'static str) -> Result<Self, DecodeError> {
        let fields = Fields {
            map: None,
            kind,
            part,
        };
        match v {
            Json::Object(m) => Ok(Fields {
                map: Some(m),
                ..fields
            }),
            Json::Null => Ok(fields),
            _ => Err(fields.not_one()),
        }
    }

    /// The error of a part whose JSON types are not the kind's.
    pub fn not_one(self) -> DecodeError {
        DecodeError {
            kind: DecodeErrorKind::Type,
            path: self.part.to_string(),
            message: format!("{}: not a {}'s {}", self.part, self.kind, self.part),
        }
    }

    /// A field's value; null is unset.
    pub fn get(self, name: &str) -> Option<&'a Json> {
        self.map?.get(name).filter(|v| !v.is_null())
    }

    pub fn object(self, name: &str) -> Result<Option<Fields<'a>>, DecodeError> {
        self.get(name)
            .map(|v| Fields::of(v, self.kind, self.part))
            .transpose()
    }

    /// A list of objects (absent is empty).
    pub fn objects(self, name: &str) -> Result<Vec<Fields<'a>>, DecodeError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Json::Array(items)) => items
                .iter()
                .map(|v| Fields::of(v, self.kind, self.part))
                .collect(),
            Some(_) => Err(self.not_one()),
        }
    }

    /// The object's own entries, in key order (a schema's `properties`).
    pub fn entries(self) -> impl Iterator<Item = (&'a String, &'a Json)> {
        self.map.into_iter().flatten()
    }

    pub fn int(self, name: &str) -> Result<Option<i64>, DecodeError> {
        self.get(name)
            .map(|v| v.as_i64().ok_or_else(|| self.not_one()))
            .transpose()
    }

    pub fn int32(self, name: &str) -> Result<Option<i32>, DecodeError> {
        self.int(name)?
            .map(|n| i32::try_from(n).map_err(|_| self.not_one()))
            .transpose()
    }

    pub fn number(self, name: &str) -> Result<Option<f64>, DecodeError> {
        self.get(name)
            .map(|v| v.as_f64().ok_or_else(|| self.not_one()))
            .transpose()
    }

    pub fn boolean(self, name: &str) -> Result<Option<bool>, DecodeError> {
        self.get(name)
            .map(|v| v.as_bool().ok_or_else(|| self.not_one()))
            .transpose()
    }

    pub fn string(self, name: &str) -> Result<Option<String>, DecodeError> {
        self.get(name)
            .map(|v| match v {
                Json::String(s) => Ok(s.clone()),
                _ => Err(self.not_one()),
            })
            .transpose()
    }

    /// A list of strings (absent is empty).
    pub fn strings(self, name: &str) -> Result<Vec<String>, DecodeError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Json::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or_else(|| self.not_one()))
                .collect(),
            Some(_) => Err(self.not_one()),
        }
    }

    /// A field kept as JSON.
    pub fn json(self, name: &str) -> Option<Json> {
        self.get(name).cloned()
    }

    /// A typed field through the strict decoder (the types other kinds share), found under the
    /// Go struct `parent` for the decoder's field rules.
    pub fn typed<T: DeserializeOwned + Default>(
        self,
        name: &str,
        parent: &'static str,
        findings: &RefCell<DecodeFindings>,
    ) -> Result<T, DecodeError> {
        match self.get(name) {
            Some(v) => decode_at(v, &format!("{}.{name}", self.part), parent, findings),
            None => Ok(T::default()),
        }
    }
}
